/*
 * osu_reduce_scatter.c - MPI_Reduce_scatter_block (MPI_SUM) latency and
 * bandwidth, in the style of the OSU micro-benchmarks. Size is the block
 * each rank receives, so every rank sends size * n; algbw counts that
 * whole input (size * n), as nccl-tests do. See bench_util.c for options
 * and method.
 */
#include "bench_util.h"

static size_t send_bytes(size_t bytes, int size)
{
    return bytes * (size_t)size;
}

static size_t recv_bytes(size_t bytes, int size)
{
    (void)size;
    return bytes;
}

static double algbw_bytes(size_t bytes, int size)
{
    return (double)bytes * size;
}

/* Each rank sends and receives n-1 blocks of the n-block input. */
static double bus_factor(int size)
{
    return (double)(size - 1) / size;
}

static int run(const struct bench_call *c)
{
    return MPI_Reduce_scatter_block(c->send, c->recv, c->count, c->type->mpi,
                                    MPI_SUM, MPI_COMM_WORLD);
}

/* Element k of rank r's input is (r+k)%m+1, every partial sum exact. */
static double element(int rank, size_t k, int span)
{
    return (double)(((size_t)rank + k) % (size_t)span + 1);
}

/* Rank r receives the sum of the r-th blocks, counted here rank by rank. */
static bool validate(const struct bench_call *c)
{
    int span = bench_value_span(c->type, c->size, 7);
    size_t count = (size_t)c->count, total = count * (size_t)c->size;
    for (size_t k = 0; k < total; k++)
        bench_store(c->type, c->host_send, k, element(c->rank, k, span));
    for (size_t i = 0; i < count; i++)
        bench_store(c->type, c->host_recv, i, -1);
    bench_upload(c);
    if (run(c) != MPI_SUCCESS)
        return false;
    bench_download(c);
    for (size_t i = 0; i < count; i++) {
        size_t k = (size_t)c->rank * count + i;
        double expected = 0;
        for (int r = 0; r < c->size; r++)
            expected += element(r, k, span);
        if (bench_load(c->type, c->host_recv, i) != expected)
            return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    const struct bench_collective reduce_scatter = {
        .title = "Reduce_scatter_block",
        .busbw_rule = "algbw * (n-1)/n",
        .recv_bytes = recv_bytes,
        .algbw_bytes = algbw_bytes,
        .bus_factor = bus_factor,
        .run = run,
        .validate = validate,
        .reduces = true,
        .send_bytes = send_bytes,
    };
    return bench_main(argc, argv, &reduce_scatter);
}
