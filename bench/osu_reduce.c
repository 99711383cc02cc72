/*
 * osu_reduce.c - MPI_Reduce (MPI_SUM, root 0) latency and bandwidth, in
 * the style of the OSU micro-benchmarks. Size is the message each rank
 * contributes; algbw counts it once and busbw equals algbw, as in
 * nccl-tests. See bench_util.c for options and method.
 */
#include "bench_util.h"

static size_t recv_bytes(size_t bytes, int size)
{
    (void)size;
    return bytes;   /* read at the root only */
}

static double algbw_bytes(size_t bytes, int size)
{
    (void)size;
    return (double)bytes;
}

/* Each rank's data crosses one link on its way to the root. */
static double bus_factor(int size)
{
    (void)size;
    return 1.0;
}

static int run(const struct bench_call *c)
{
    return MPI_Reduce(c->send, c->recv, c->count, c->type->mpi, MPI_SUM, 0,
                      MPI_COMM_WORLD);
}

/* Element i of rank r is (r+i)%m+1, every partial sum exact in the type. */
static double element(int rank, int i, int span)
{
    return (rank + i) % span + 1;
}

/* The root checks the sum, counted here rank by rank; every rank checks
 * that its send buffer came back untouched. */
static bool validate(const struct bench_call *c)
{
    int span = bench_value_span(c->type, c->size, 7);
    for (int i = 0; i < c->count; i++) {
        bench_store(c->type, c->host_send, (size_t)i, element(c->rank, i, span));
        bench_store(c->type, c->host_recv, (size_t)i, -1);
    }
    bench_upload(c);
    if (run(c) != MPI_SUCCESS)
        return false;
    bench_download(c);
    for (int i = 0; i < c->count; i++) {
        if (bench_load(c->type, c->host_send, (size_t)i)
            != element(c->rank, i, span))
            return false;
        if (c->rank != 0)
            continue;
        double expected = 0;
        for (int r = 0; r < c->size; r++)
            expected += element(r, i, span);
        if (bench_load(c->type, c->host_recv, (size_t)i) != expected)
            return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    const struct bench_collective reduce = {
        .title = "Reduce",
        .busbw_rule = "algbw",
        .recv_bytes = recv_bytes,
        .algbw_bytes = algbw_bytes,
        .bus_factor = bus_factor,
        .run = run,
        .validate = validate,
        .reduces = true,
    };
    return bench_main(argc, argv, &reduce);
}
