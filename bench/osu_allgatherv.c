/*
 * osu_allgatherv.c - MPI_Allgatherv latency and bandwidth, in the style
 * of the OSU micro-benchmarks: every rank contributes the same count and
 * the blocks are packed (displacement r * count). Size is the message
 * each rank contributes; algbw counts the whole gathered buffer (size *
 * n), as nccl-tests do. See bench_util.c for options and method.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

static size_t recv_bytes(size_t bytes, int size)
{
    return bytes * (size_t)size;
}

static double algbw_bytes(size_t bytes, int size)
{
    return (double)bytes * size;
}

/* Each rank receives the n-1 blocks it lacks: (n-1)/n of the output. */
static double bus_factor(int size)
{
    return (double)(size - 1) / size;
}

/* Counts and displacements, rebuilt only when the count changes so the
 * timed calls do no bookkeeping. */
static int *counts, *displs;
static int layout_count = -1, layout_size;

static void set_layout(int count, int size)
{
    if (count == layout_count && size == layout_size)
        return;
    if (counts == NULL) {
        counts = malloc(sizeof(int) * (size_t)size);
        displs = malloc(sizeof(int) * (size_t)size);
        if (counts == NULL || displs == NULL) {
            fprintf(stderr, "osu_allgatherv: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int r = 0; r < size; r++) {
        counts[r] = count;
        displs[r] = r * count;
    }
    layout_count = count;
    layout_size = size;
}

static int run(const struct bench_call *c)
{
    set_layout(c->count, c->size);
    return MPI_Allgatherv(c->send, c->count, c->type->mpi, c->recv, counts,
                          displs, c->type->mpi, MPI_COMM_WORLD);
}

/* At most 250: exact in every type, bf16 included. */
static double element(int rank, int i)
{
    return (rank * 7 + i % 11) % 251;
}

static bool validate(const struct bench_call *c)
{
    size_t total = (size_t)c->count * (size_t)c->size;
    for (int i = 0; i < c->count; i++)
        bench_store(c->type, c->host_send, (size_t)i, element(c->rank, i));
    for (size_t k = 0; k < total; k++)
        bench_store(c->type, c->host_recv, k, -1);
    bench_upload(c);
    if (run(c) != MPI_SUCCESS)
        return false;
    bench_download(c);
    for (size_t k = 0; k < total; k++) {
        int from = (int)(k / (size_t)c->count);
        int i = (int)(k % (size_t)c->count);
        if (bench_load(c->type, c->host_recv, k) != element(from, i))
            return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    const struct bench_collective allgatherv = {
        .title = "Allgatherv",
        .busbw_rule = "algbw * (n-1)/n",
        .recv_bytes = recv_bytes,
        .algbw_bytes = algbw_bytes,
        .bus_factor = bus_factor,
        .run = run,
        .validate = validate,
    };
    int status = bench_main(argc, argv, &allgatherv);
    free(counts);
    free(displs);
    return status;
}
