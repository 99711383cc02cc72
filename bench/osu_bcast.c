/*
 * osu_bcast.c - MPI_Bcast (root 0) latency and bandwidth, in the style of
 * the OSU micro-benchmarks. See bench_util.c for options and method.
 *
 * Built with -DPD_STRIDED (bench/compare's bcast_strided), a message of n
 * elements is every other element of a buffer of 2n: one item of
 * MPI_Type_vector(n, 1, 2, type), which an MPI library packs at the root
 * and unpacks at the others.
 */
#include "bench_util.h"

#ifdef PD_STRIDED
#define SPREAD 2                    /* buffer elements per message element */
#else
#define SPREAD 1
#endif

static size_t recv_bytes(size_t bytes, int size)
{
    (void)bytes;
    (void)size;
    return 1;   /* broadcast works in the send buffer */
}

static size_t send_bytes(size_t bytes, int size)
{
    (void)size;
    return SPREAD * bytes;
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

#ifdef PD_STRIDED
/* The vector of this size's count, made at the size's first call. */
static MPI_Datatype message_type(const struct bench_call *c)
{
    static MPI_Datatype vec = MPI_DATATYPE_NULL;
    static int count = -1;
    if (count != c->count) {
        if (vec != MPI_DATATYPE_NULL)
            MPI_Type_free(&vec);
        bench_check_rc(MPI_Type_vector(c->count, 1, SPREAD, c->type->mpi,
                                       &vec), "MPI_Type_vector");
        bench_check_rc(MPI_Type_commit(&vec), "MPI_Type_commit");
        count = c->count;
    }
    return vec;
}

static int run(const struct bench_call *c)
{
    return MPI_Bcast(c->send, 1, message_type(c), 0, MPI_COMM_WORLD);
}
#else
static int run(const struct bench_call *c)
{
    return MPI_Bcast(c->send, c->count, c->type->mpi, 0, MPI_COMM_WORLD);
}
#endif

static double expected(int i)
{
    return i % 101 + 1;
}

/* Element i of the buffer: the message's every SPREAD-th; the gaps
 * between stay as filled (0 away from the root). */
static bool validate(const struct bench_call *c)
{
    int n = SPREAD * c->count;
    for (int i = 0; i < n; i++)
        bench_store(c->type, c->host_send, (size_t)i,
                    c->rank == 0 ? expected(i) : 0);
    bench_upload(c);
    if (run(c) != MPI_SUCCESS)
        return false;
    bench_download(c);
    for (int i = 0; i < n; i++) {
        double want = i % SPREAD == 0 || c->rank == 0 ? expected(i) : 0;
        if (bench_load(c->type, c->host_send, (size_t)i) != want)
            return false;
    }
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
        .send_bytes = send_bytes,
    };
    return bench_main(argc, argv, &bcast);
}
