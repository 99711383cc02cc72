/*
 * osu_iallreduce.c - how much of an MPI_Iallreduce hides behind
 * computation, in the style of OSU's nonblocking collective tests.
 *
 * For each size: time the pure Iallreduce+Wait (t_comm), a compute loop
 * of about the same length alone (t_compute), and Iallreduce, compute,
 * Wait together (t_total). Overlap = 100 * (1 - (t_total - t_compute) /
 * t_comm), clamped to [0, 100]: 100 % means the communication was
 * entirely hidden. Plain MPI; builds with Open MPI's mpicc too.
 *
 * Options: -m MAX (bytes, default 4194304), -i ITERATIONS (default 50).
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile double sink;

/* Busy work for about `seconds`, without MPI calls. */
static void compute_for(double seconds)
{
    double start = MPI_Wtime(), x = 1.0;
    while (MPI_Wtime() - start < seconds)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* Average seconds per iteration, maximum over ranks. */
static double timed(int iterations, float *send, float *recv, int count,
                    double compute_s, int with_comm)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iterations; i++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (with_comm)
            MPI_Iallreduce(send, recv, count, MPI_FLOAT, MPI_SUM,
                           MPI_COMM_WORLD, &req);
        if (compute_s > 0)
            compute_for(compute_s);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    double mine = (MPI_Wtime() - start) / iterations, worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv)
{
    long max_bytes = 4 << 20;
    int iterations = 50, opt;
    MPI_Init(&argc, &argv);
    while ((opt = getopt(argc, argv, "m:i:")) != -1) {
        if (opt == 'm')
            max_bytes = atol(optarg);
        else if (opt == 'i')
            iterations = atoi(optarg);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (max_bytes < 4 || iterations < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: osu_iallreduce [-m MAX_BYTES>=4] [-i ITERATIONS>=1]\n");
        MPI_Finalize();
        return 2;
    }
    float *send = calloc((size_t)max_bytes, 1), *recv = calloc((size_t)max_bytes, 1);
    if (rank == 0) {
        printf("# pdmpi-bench Iallreduce Overlap Test (MPI_FLOAT, MPI_SUM, %d ranks)\n", size);
        printf("# overlap = 100 * (1 - (overall - compute) / pure comm)\n");
        printf("%-10s%16s%16s%16s%12s\n", "# Size", "Overall(us)", "Compute(us)",
               "Pure Comm(us)", "Overlap(%)");
    }
    for (long bytes = 4; bytes <= max_bytes; bytes *= 4) {
        int count = (int)(bytes / 4);
        timed(2, send, recv, count, 0, 1); /* warm-up */
        double comm = timed(iterations, send, recv, count, 0, 1);
        double compute = timed(iterations, send, recv, count, comm, 0);
        double total = timed(iterations, send, recv, count, comm, 1);
        double overlap = 100.0 * (1.0 - (total - compute) / comm);
        if (overlap < 0)
            overlap = 0;
        if (overlap > 100)
            overlap = 100;
        if (rank == 0)
            printf("%-10ld%16.2f%16.2f%16.2f%12.1f\n", bytes, total * 1e6,
                   compute * 1e6, comm * 1e6, overlap);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
