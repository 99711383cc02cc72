/*
 * osu_allgather.c - MPI_Allgather latency and bandwidth, in the style of
 * the OSU micro-benchmarks. Size is the message each rank contributes, as
 * in OSU; algbw counts the whole gathered buffer (size * n), as nccl-tests
 * do. See bench_util.c for options and method.
 */
#include "bench_util.h"

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

static int run(const struct bench_call *c)
{
    return MPI_Allgather(c->send, c->count, c->type->mpi, c->recv, c->count,
                         c->type->mpi, MPI_COMM_WORLD);
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
    const struct bench_collective allgather = {
        .title = "Allgather",
        .busbw_rule = "algbw * (n-1)/n",
        .recv_bytes = recv_bytes,
        .algbw_bytes = algbw_bytes,
        .bus_factor = bus_factor,
        .run = run,
        .validate = validate,
    };
    return bench_main(argc, argv, &allgather);
}
