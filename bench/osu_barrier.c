/*
 * osu_barrier.c - MPI_Barrier latency, in the style of the OSU
 * micro-benchmarks: one line, the average over ranks of each rank's
 * average time in the barrier (-f adds the min and max of those and the
 * iterations). -m and -T do not apply to a barrier and are ignored.
 *
 * -c checks that the barrier holds every rank back: one rank (first
 * rank 0, then the last) enters 50 ms late, and every rank must spend at
 * least half of that between the previous barrier and leaving this one.
 */
#include "bench_util.h"

#include <stdio.h>

#define FIELD_WIDTH 18
#define ITER_WIDTH 12
#define DELAY_S 0.05

static void busy_wait(double seconds)
{
    double start = MPI_Wtime();
    while (MPI_Wtime() - start < seconds)
        ;
}

static bool held_back_by(int late, int rank)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (rank == late)
        busy_wait(DELAY_S);
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        return false;
    return MPI_Wtime() - start >= DELAY_S / 2;
}

static bool validate(int rank, int size)
{
    int mine = held_back_by(0, rank) && held_back_by(size - 1, rank), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct bench_options o;
    int status = bench_parse_options(argc, argv, &o,
                                     "osu_barrier ignores -m and -T; -d "
                                     "is accepted but a barrier moves no data.");
    if (status >= 0) {
        MPI_Finalize();
        return status;
    }

    int iterations = bench_iterations_for(&o, 0);
    int warmup = bench_warmup_for(&o, iterations);
    if (rank == 0) {
        printf("# OSU MPI Barrier Latency Test\n");
        printf("# ranks: %d\n", size);
        printf("%-*s", FIELD_WIDTH, "# Avg Latency(us)");
        if (o.full)
            printf("%*s%*s%*s", FIELD_WIDTH, "Min Latency(us)", FIELD_WIDTH,
                   "Max Latency(us)", ITER_WIDTH, "Iterations");
        if (o.validate)
            printf("%*s", ITER_WIDTH, "Validation");
        printf("\n");
        fflush(stdout);
    }

    for (int i = 0; i < warmup; i++)
        bench_check_rc(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double total = 0.0;
    for (int i = 0; i < iterations; i++) {
        double start = MPI_Wtime();
        int rc = MPI_Barrier(MPI_COMM_WORLD);
        total += MPI_Wtime() - start;
        bench_check_rc(rc, "MPI_Barrier");
    }
    double local_us = total * 1e6 / iterations, sum = 0, min_us = 0, max_us = 0;
    MPI_Reduce(&local_us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    bool valid = !o.validate || validate(rank, size);

    if (rank == 0) {
        printf("%*.2f", FIELD_WIDTH - 1, sum / size);
        if (o.full)
            printf("%*.2f%*.2f%*d", FIELD_WIDTH, min_us, FIELD_WIDTH, max_us,
                   ITER_WIDTH, iterations);
        if (o.validate)
            printf("%*s", ITER_WIDTH, valid ? "Pass" : "Fail");
        printf("\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return valid ? 0 : 1;
}
