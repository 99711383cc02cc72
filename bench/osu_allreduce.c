/*
 * osu_allreduce.c - MPI_Allreduce (MPI_SUM) latency and bandwidth,
 * in the style of the OSU micro-benchmarks. See bench_util.c for options
 * and method.
 */
#include "bench_util.h"

static size_t recv_bytes(size_t bytes, int size)
{
    (void)size;
    return bytes;
}

static double algbw_bytes(size_t bytes, int size)
{
    (void)size;
    return (double)bytes;
}

/* A ring allreduce sends and receives 2(n-1)/n of the buffer per rank. */
static double bus_factor(int size)
{
    return 2.0 * (size - 1) / size;
}

static int run(const struct bench_call *c)
{
    return MPI_Allreduce(c->send, c->recv, c->count, c->type->mpi, MPI_SUM,
                         MPI_COMM_WORLD);
}

/* Element i of rank r is (r+i)%m+1, m chosen so that every partial sum
 * stays an exact integer in the type (fp16, bf16 included); the expected
 * sum is counted here rank by rank. */
static double element(int rank, int i, int span)
{
    return (rank + i) % span + 1;
}

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
    const struct bench_collective allreduce = {
        .title = "Allreduce",
        .busbw_rule = "algbw * 2(n-1)/n",
        .recv_bytes = recv_bytes,
        .algbw_bytes = algbw_bytes,
        .bus_factor = bus_factor,
        .run = run,
        .validate = validate,
        .reduces = true,
    };
    return bench_main(argc, argv, &allreduce);
}
