/*
 * osu_latency.c - point-to-point latency between 2 ranks, in the style
 * of OSU's osu_latency: rank 0 sends a message with MPI_Send, rank 1
 * receives it and sends it back; the latency is half the round trip,
 * averaged over the iterations. -f adds the fastest and slowest single
 * half round trip and the iterations. Options, iterations and warm-up as
 * in the collective benchmarks (bench_util.c), except that without -i the
 * warm-up is timed and the default iterations cut to fit about
 * BENCH_SIZE_SECONDS per size (bench_warm_up).
 *
 * -c checks the data both ways: rank 0 sends a known pattern, rank 1
 * checks it and answers with another one, which rank 0 checks.
 *
 * Built with -DPD_STRIDED (bench/compare's latency_strided), a message
 * of n elements is every other element of a buffer of 2n: one item of
 * MPI_Type_vector(n, 1, 2, type), the layout of a matrix's column or a
 * halo, which an MPI library packs and unpacks on the way.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

#define SIZE_WIDTH 10
#define FIELD_WIDTH 18
#define ITER_WIDTH 12
#define TAG 1

#ifdef PD_STRIDED
#define SPREAD 2                    /* buffer elements per message element */
#else
#define SPREAD 1
#endif

struct pingpong {
    void *send, *recv;              /* MPI's buffers (device with -d cuda) */
    void *host;                     /* staging for -c */
    const struct bench_options *o;
    int rank, count;
    MPI_Datatype strided;           /* PD_STRIDED: this size's vector */
};

/* What one message is: count elements, or one strided vector of them. */
static MPI_Datatype message_type(const struct pingpong *p, int *count)
{
#ifdef PD_STRIDED
    *count = 1;
    return p->strided;
#else
    *count = p->count;
    return p->o->type->mpi;
#endif
}

/* One round trip; returns its duration at rank 0. */
static double round_trip(const struct pingpong *p)
{
    int n;
    MPI_Datatype t = message_type(p, &n);
    double start = MPI_Wtime();
    if (p->rank == 0) {
        bench_check_rc(MPI_Send(p->send, n, t, 1, TAG, MPI_COMM_WORLD),
                       "MPI_Send");
        bench_check_rc(MPI_Recv(p->recv, n, t, 1, TAG, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE),
                       "MPI_Recv");
    } else {
        bench_check_rc(MPI_Recv(p->recv, n, t, 0, TAG, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE),
                       "MPI_Recv");
        bench_check_rc(MPI_Send(p->send, n, t, 0, TAG, MPI_COMM_WORLD),
                       "MPI_Send");
    }
    return MPI_Wtime() - start;
}

static void round_trip_step(void *p)
{
    round_trip(p);
}

/* Element i of what `rank` sends; at most 250, exact in every type. */
static double element(int rank, int i)
{
    return (rank * 101 + i % 127 + 1) % 251;
}

static bool validate(const struct pingpong *p)
{
    const struct bench_type *type = p->o->type;
    size_t n = SPREAD * (size_t)p->count, bytes = n * type->size;
    for (size_t i = 0; i < n; i++)
        bench_store(type, p->host, i, element(p->rank, (int)i));
    bench_copy_to_device(p->o->device, p->send, p->host, bytes);
    for (size_t i = 0; i < n; i++)
        bench_store(type, p->host, i, -1);
    bench_copy_to_device(p->o->device, p->recv, p->host, bytes);

    round_trip(p);

    /* The elements the message carries came; the gaps stayed. */
    bench_copy_from_device(p->o->device, p->host, p->recv, bytes);
    int mine = 1, all = 0;
    for (size_t i = 0; i < n && mine; i++)
        mine = bench_load(type, p->host, i) ==
               (i % SPREAD == 0 ? element(1 - p->rank, (int)i) : -1);
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
    int status = bench_parse_pair_options(argc, argv, &o,
                                     "osu_latency runs on exactly 2 ranks; "
                                     "-f shows the fastest and slowest half "
                                     "round trip.\nWithout -i, the default "
                                     "iterations are cut to about 1 s per "
                                     "size.");
    if (status >= 0) {
        MPI_Finalize();
        return status;
    }

    struct pingpong p = {
        .send = bench_alloc(&o, SPREAD * o.max_bytes),
        .recv = bench_alloc(&o, SPREAD * o.max_bytes),
        .host = malloc(SPREAD * o.max_bytes + 1),
        .o = &o,
        .rank = rank,
    };
    if (p.host == NULL) {
        fprintf(stderr, "osu_latency: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (rank == 0) {
        printf("# OSU MPI Latency Test\n");
        printf("# Datatype: %s%s%s\n", SPREAD > 1 ? "every other " : "",
               o.type->mpi_name,
               o.device == BENCH_CUDA ? ", buffers: cuda" : "");
        printf("%-*s%*s", SIZE_WIDTH, "# Size", FIELD_WIDTH, "Latency (us)");
        if (o.full)
            printf("%*s%*s%*s", FIELD_WIDTH, "Min Latency(us)", FIELD_WIDTH,
                   "Max Latency(us)", ITER_WIDTH, "Iterations");
        if (o.validate)
            printf("%*s", ITER_WIDTH, "Validation");
        printf("\n");
        fflush(stdout);
    }

    bool all_valid = true;
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
        if (bytes < o.type->size)
            continue;
        p.count = (int)(bytes / o.type->size);
#ifdef PD_STRIDED
        bench_check_rc(MPI_Type_vector(p.count, 1, SPREAD, o.type->mpi,
                                       &p.strided), "MPI_Type_vector");
        bench_check_rc(MPI_Type_commit(&p.strided), "MPI_Type_commit");
#endif
        int iterations = bench_warm_up(&o, bytes, round_trip_step, &p);
        MPI_Barrier(MPI_COMM_WORLD);
        double min_rt = 0, max_rt = 0, start = MPI_Wtime();
        for (int i = 0; i < iterations; i++) {
            double rt = round_trip(&p);
            if (i == 0 || rt < min_rt)
                min_rt = rt;
            if (rt > max_rt)
                max_rt = rt;
        }
        double latency_us = (MPI_Wtime() - start) * 1e6 / (2.0 * iterations);
        bool valid = !o.validate || validate(&p);
        all_valid = all_valid && valid;

        if (rank == 0) {
            printf("%-*zu%*.2f", SIZE_WIDTH, bytes, FIELD_WIDTH, latency_us);
            if (o.full)
                printf("%*.2f%*.2f%*d", FIELD_WIDTH, min_rt * 0.5e6,
                       FIELD_WIDTH, max_rt * 0.5e6, ITER_WIDTH, iterations);
            if (o.validate)
                printf("%*s", ITER_WIDTH, valid ? "Pass" : "Fail");
            printf("\n");
            fflush(stdout);
        }
#ifdef PD_STRIDED
        MPI_Type_free(&p.strided);
#endif
        if (bytes > ((size_t)-1) / 2)
            break;
    }

    free(p.host);
    bench_free(&o, p.send);
    bench_free(&o, p.recv);
    MPI_Finalize();
    return all_valid ? 0 : 1;
}
