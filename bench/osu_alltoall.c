/*
 * osu_alltoall.c - MPI_Alltoall latency and bandwidth, in the style of
 * the OSU micro-benchmarks. Size is the block each rank sends to each
 * rank, as in OSU, so the send and receive buffers hold size * n; algbw
 * counts that whole buffer, as nccl-tests do. See bench_util.c for
 * options and method.
 */
#include "bench_util.h"

static size_t buffer_bytes(size_t bytes, int size)
{
    return bytes * (size_t)size;
}

static double algbw_bytes(size_t bytes, int size)
{
    return (double)bytes * size;
}

/* Each rank sends and receives the n-1 blocks not its own. */
static double bus_factor(int size)
{
    return (double)(size - 1) / size;
}

static int run(const struct bench_call *c)
{
    return MPI_Alltoall(c->send, c->count, c->type->mpi, c->recv, c->count,
                        c->type->mpi, MPI_COMM_WORLD);
}

/* Element i of the block rank `from` sends to rank `to`; at most 250,
 * exact in every type. */
static double element(int from, int to, int i)
{
    return (from * 13 + to * 5 + i % 7) % 251;
}

static bool validate(const struct bench_call *c)
{
    size_t count = (size_t)c->count, total = count * (size_t)c->size;
    for (size_t k = 0; k < total; k++) {
        bench_store(c->type, c->host_send, k,
                    element(c->rank, (int)(k / count), (int)(k % count)));
        bench_store(c->type, c->host_recv, k, -1);
    }
    bench_upload(c);
    if (run(c) != MPI_SUCCESS)
        return false;
    bench_download(c);
    for (size_t k = 0; k < total; k++)
        if (bench_load(c->type, c->host_recv, k)
            != element((int)(k / count), c->rank, (int)(k % count)))
            return false;
    return true;
}

int main(int argc, char **argv)
{
    const struct bench_collective alltoall = {
        .title = "Alltoall",
        .busbw_rule = "algbw * (n-1)/n",
        .recv_bytes = buffer_bytes,
        .algbw_bytes = algbw_bytes,
        .bus_factor = bus_factor,
        .run = run,
        .validate = validate,
        .send_bytes = buffer_bytes,
    };
    return bench_main(argc, argv, &alltoall);
}
