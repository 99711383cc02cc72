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

/* Element i of rank r is (r+1)*(i%7+1); the sum over n ranks is
 * (i%7+1)*n(n+1)/2, exact in every type for any sane n. */
static bool validate(const struct bench_call *c)
{
    for (int i = 0; i < c->count; i++) {
        bench_store(c->type, c->send, (size_t)i, (c->rank + 1) * (i % 7 + 1));
        bench_store(c->type, c->recv, (size_t)i, -1);
    }
    if (run(c) != MPI_SUCCESS)
        return false;
    double ranks_sum = c->size * (c->size + 1) / 2.0;
    for (int i = 0; i < c->count; i++)
        if (bench_load(c->type, c->recv, (size_t)i) != (i % 7 + 1) * ranks_sum)
            return false;
    return true;
}

int main(int argc, char **argv)
{
    const struct bench_collective allreduce = {
        "Allreduce", "algbw * 2(n-1)/n", recv_bytes, algbw_bytes, bus_factor,
        run, validate,
    };
    return bench_main(argc, argv, &allreduce);
}
