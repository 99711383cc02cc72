/*
 * osu_bcast.c - MPI_Bcast (root 0) latency and bandwidth, in the style of
 * the OSU micro-benchmarks. See bench_util.c for options and method.
 */
#include "bench_util.h"

static size_t recv_bytes(size_t bytes, int size)
{
    (void)bytes;
    (void)size;
    return 1;   /* broadcast works in the send buffer */
}

static double algbw_bytes(size_t bytes, int size)
{
    (void)size;
    return (double)bytes;
}

/* Each rank receives the whole buffer once: busbw equals algbw. */
static double bus_factor(int size)
{
    (void)size;
    return 1.0;
}

static int run(const struct bench_call *c)
{
    return MPI_Bcast(c->send, c->count, c->type->mpi, 0, MPI_COMM_WORLD);
}

static double expected(int i)
{
    return i % 101 + 1;
}

static bool validate(const struct bench_call *c)
{
    for (int i = 0; i < c->count; i++)
        bench_store(c->type, c->host_send, (size_t)i,
                    c->rank == 0 ? expected(i) : 0);
    bench_upload(c);
    if (run(c) != MPI_SUCCESS)
        return false;
    bench_download(c);
    for (int i = 0; i < c->count; i++)
        if (bench_load(c->type, c->host_send, (size_t)i) != expected(i))
            return false;
    return true;
}

int main(int argc, char **argv)
{
    const struct bench_collective bcast = {
        .title = "Bcast",
        .busbw_rule = "algbw",
        .recv_bytes = recv_bytes,
        .algbw_bytes = algbw_bytes,
        .bus_factor = bus_factor,
        .run = run,
        .validate = validate,
    };
    return bench_main(argc, argv, &bcast);
}
