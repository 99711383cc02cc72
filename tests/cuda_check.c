/*
 * CUDA-memory collectives and point-to-point against the CUDA runtime and
 * NCCL test doubles (tests/nccl_double): every call on memory from the
 * double's cudaMalloc, which the host cannot touch (the double hands out
 * PROT_NONE addresses), so every input goes in and every result comes
 * out by cudaMemcpy, and any path in pdmpi that reads device memory on the
 * host crashes this program. Results are checked against answers computed
 * here; which way each call went is read from the NCCL double's call
 * counters (those checks are skipped against a real NCCL, where this
 * program runs too: tests/gpu/check.sh).
 *
 *   cuda_check [routed|staged|refused]
 *     routed  (default) the policy is nccl: supported calls reach NCCL
 *     staged  the policy is gloo: nothing reaches NCCL, results still right
 *     refused PDMPI_DEVICE_FALLBACK=error: a call NCCL cannot take fails
 *   cuda_check die R | skip R | loop
 *     faults: every rank runs 5000 allreduces of 1 Mi floats on CUDA memory;
 *     rank R is killed 0.3 s in (die), skips the third and goes to a
 *     barrier (skip), or passes 1000 elements fewer to the third (count);
 *     loop only loops (with NCCL_DOUBLE_FAIL=R:N the
 *     double fails rank R's Nth operation). The others must fail, and
 *     the driver checks their message; exit 3 means nobody noticed.
 *
 * Output is TAP; exit 0 when every check passes.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <cuda_runtime_api.h>

#include "pdmpi.h"
#include "tap_harness.h"

static int rank, size;
static long (*nccl_calls)(const char *name);

static long calls(const char *name)
{
    return nccl_calls != NULL ? nccl_calls(name) : -1;
}

/* A route check by the double's call counters; skipped on a real NCCL,
 * which keeps none. */
#define report_route(good, ...)                                           \
    (nccl_calls != NULL                                                    \
         ? report_bool(good, __VA_ARGS__)                                  \
         : report_skip("a real NCCL keeps no call counters", __VA_ARGS__))

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess || p == NULL) {
        fprintf(stderr, "cuda_check: cudaMalloc(%zu) failed\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static void to_dev(void *dev, const void *host, size_t bytes)
{
    if (bytes && cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice) !=
                     cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

static void from_dev(void *host, const void *dev, size_t bytes)
{
    if (bytes && cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost) !=
                     cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---- element kinds, with host conversions ---- */

enum kind { K_I8, K_U8, K_INT, K_UNSIGNED, K_LONG, K_ULONG, K_HALF, K_FLOAT,
            K_DOUBLE, K_BF16, K_COUNT };
static const struct {
    const char *name;
    size_t bytes;
} kinds[K_COUNT] = {
    { "MPI_INT8_T", 1 }, { "MPI_UINT8_T", 1 }, { "MPI_INT", 4 },
    { "MPI_UNSIGNED", 4 }, { "MPI_LONG", 8 }, { "MPI_UNSIGNED_LONG", 8 },
    { "MPIX_C_FLOAT16", 2 }, { "MPI_FLOAT", 4 }, { "MPI_DOUBLE", 8 },
    { "MPIX_BFLOAT16", 2 },
};

static MPI_Datatype mpi_type(enum kind k)
{
    switch (k) {
    case K_I8: return MPI_INT8_T;
    case K_U8: return MPI_UINT8_T;
    case K_INT: return MPI_INT;
    case K_UNSIGNED: return MPI_UNSIGNED;
    case K_LONG: return MPI_LONG;
    case K_ULONG: return MPI_UNSIGNED_LONG;
    case K_HALF: return MPIX_C_FLOAT16;
    case K_FLOAT: return MPI_FLOAT;
    case K_DOUBLE: return MPI_DOUBLE;
    default: return MPIX_BFLOAT16;
    }
}

static bool is_float(enum kind k)
{
    return k == K_HALF || k == K_FLOAT || k == K_DOUBLE || k == K_BF16;
}

/* Small integers: exact in every kind, their sums and small products too. */
static double input(int r, size_t i)
{
    return (double)((r + 1) * (int)(i % 7 + 1) % 5 + 1);
}

static uint16_t to_half(double v)
{
    /* Exact for the small values used here (|v| < 2048, integers or
     * halves of them). */
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff;
    if (exp == 0)
        return (uint16_t)sign;
    return (uint16_t)(sign | ((exp - 127 + 15) << 10) | ((x & 0x7fffff) >> 13));
}

static double from_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
    uint32_t x = exp == 0 ? sign
                          : sign | ((exp - 15 + 127) << 23) |
                                ((uint32_t)(h & 0x3ff) << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static void put(void *buf, enum kind k, size_t i, double v)
{
    switch (k) {
    case K_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case K_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case K_INT: ((int *)buf)[i] = (int)v; break;
    case K_UNSIGNED: ((unsigned *)buf)[i] = (unsigned)v; break;
    case K_LONG: ((long *)buf)[i] = (long)v; break;
    case K_ULONG: ((unsigned long *)buf)[i] = (unsigned long)v; break;
    case K_HALF: ((uint16_t *)buf)[i] = to_half(v); break;
    case K_FLOAT: ((float *)buf)[i] = (float)v; break;
    case K_DOUBLE: ((double *)buf)[i] = v; break;
    default: {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        ((uint16_t *)buf)[i] = (uint16_t)(x >> 16);
    }
    }
}

static double get(const void *buf, enum kind k, size_t i)
{
    switch (k) {
    case K_I8: return ((const int8_t *)buf)[i];
    case K_U8: return ((const uint8_t *)buf)[i];
    case K_INT: return ((const int *)buf)[i];
    case K_UNSIGNED: return ((const unsigned *)buf)[i];
    case K_LONG: return (double)((const long *)buf)[i];
    case K_ULONG: return (double)((const unsigned long *)buf)[i];
    case K_HALF: return from_half(((const uint16_t *)buf)[i]);
    case K_FLOAT: return ((const float *)buf)[i];
    case K_DOUBLE: return ((const double *)buf)[i];
    default: {
        uint32_t x = (uint32_t)((const uint16_t *)buf)[i] << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
    }
}

enum op { O_SUM, O_PROD, O_MAX, O_MIN, O_AVG, O_COUNT };
static const char *const op_names[O_COUNT] = { "MPI_SUM", "MPI_PROD",
                                               "MPI_MAX", "MPI_MIN",
                                               "MPIX_OP_AVG" };

static MPI_Op mpi_op(enum op o)
{
    switch (o) {
    case O_SUM: return MPI_SUM;
    case O_PROD: return MPI_PROD;
    case O_MAX: return MPI_MAX;
    case O_MIN: return MPI_MIN;
    default: return MPIX_OP_AVG;
    }
}

/* The answer at index i; products only over the first few elements,
 * where they stay small (the caller limits the count). */
static double fold(enum op o, enum kind k, size_t i)
{
    double acc = input(0, i);
    for (int r = 1; r < size; r++) {
        double v = input(r, i);
        if (o == O_SUM || o == O_AVG) acc += v;
        else if (o == O_PROD) acc *= v;
        else if (o == O_MAX) acc = v > acc ? v : acc;
        else acc = v < acc ? v : acc;
    }
    if (o == O_AVG)
        acc = is_float(k) ? acc / size : (double)((long)acc / size);
    return acc;
}

static bool close_enough(double got, double want, enum kind k)
{
    if (!is_float(k))
        return got == want;
    double tol = k == K_HALF || k == K_BF16 ? 1e-2 : 1e-6;
    return fabs(got - want) <= tol * fabs(want) + 1e-9;
}

static bool check_reduce_one(enum kind k, enum op o, size_t n, bool in_place)
{
    size_t eb = kinds[k].bytes;
    char *host = malloc(n * eb + 1);
    void *send = dev_alloc(n * eb), *recv = dev_alloc(n * eb);
    for (size_t i = 0; i < n; i++)
        put(host, k, i, input(rank, i));
    to_dev(in_place ? recv : send, host, n * eb);
    int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)n,
                           mpi_type(k), mpi_op(o), MPI_COMM_WORLD);
    memset(host, 0, n * eb);
    from_dev(host, recv, n * eb);
    bool good = rc == MPI_SUCCESS;
    for (size_t i = 0; i < n && good; i++)
        good = close_enough(get(host, k, i), fold(o, k, i), k);
    cudaFree(send);
    cudaFree(recv);
    free(host);
    return good;
}

/* Every NCCL type x every op, in place or not, count 0, a prime count and
 * (sum only) a multi-megabyte one. */
static void check_allreduce_matrix(bool routed)
{
    long before = calls("ncclAllReduce");
    int expected = 0;
    for (int k = 0; k < K_COUNT; k++) {
        for (int o = 0; o < O_COUNT; o++) {
            size_t n = o == O_PROD ? 3 : 1009;
            bool good = check_reduce_one((enum kind)k, (enum op)o, n, o % 2);
            report_bool(good, "allreduce %s %s count=%zu%s on CUDA memory",
                        kinds[k].name, op_names[o], n, o % 2 ? " in place" : "");
            expected++;
        }
    }
    bool good = check_reduce_one(K_FLOAT, O_SUM, 3u << 20, false);
    report_bool(good, "allreduce MPI_FLOAT MPI_SUM count=%u (12 MiB)", 3u << 20);
    expected++;
    good = check_reduce_one(K_INT, O_SUM, 0, false);
    report_bool(good, "allreduce MPI_INT count=0");
    long routed_calls = calls("ncclAllReduce") - before;
    report_route(routed ? routed_calls == expected : routed_calls == 0,
                 "%ld of %d allreduces reached NCCL (%s)", routed_calls,
                expected, routed ? "all expected" : "none expected");
}

/* Reduce (to the last rank) and reduce_scatter_block of one kind and op. */
static bool check_rooted_reductions(enum kind k, enum op o, size_t n)
{
    size_t eb = kinds[k].bytes, all = n * (size_t)size;
    int root = size - 1;
    char *host = malloc(all * eb + 1);
    void *send = dev_alloc(all * eb), *recv = dev_alloc(all * eb);
    for (size_t i = 0; i < all; i++)
        put(host, k, i, input(rank, i));
    to_dev(send, host, all * eb);
    int rc = MPI_Reduce(send, rank == root ? recv : NULL, (int)n, mpi_type(k),
                        mpi_op(o), root, MPI_COMM_WORLD);
    bool good = rc == MPI_SUCCESS;
    if (rank == root) {
        from_dev(host, recv, n * eb);
        for (size_t i = 0; i < n && good; i++)
            good = close_enough(get(host, k, i), fold(o, k, i), k);
    }
    rc = MPI_Reduce_scatter_block(send, recv, (int)n, mpi_type(k), mpi_op(o),
                                  MPI_COMM_WORLD);
    good = good && rc == MPI_SUCCESS;
    from_dev(host, recv, n * eb);
    for (size_t i = 0; i < n && good; i++)
        good = close_enough(get(host, k, i),
                            fold(o, k, (size_t)rank * n + i), k);
    cudaFree(send);
    cudaFree(recv);
    free(host);
    return good;
}

/* Every NCCL type x every op for MPI_Reduce and MPI_Reduce_scatter_block. */
static void check_reduction_matrix(bool routed)
{
    long before = calls("ncclReduce") + calls("ncclReduceScatter");
    int expected = 0;
    for (int k = 0; k < K_COUNT; k++) {
        for (int o = 0; o < O_COUNT; o++) {
            size_t n = o == O_PROD ? 3 : 257;
            report_bool(check_rooted_reductions((enum kind)k, (enum op)o, n),
                        "reduce and reduce_scatter_block %s %s count=%zu on "
                        "CUDA memory", kinds[k].name, op_names[o], n);
            expected += 2;
        }
    }
    long routed_calls =
        calls("ncclReduce") + calls("ncclReduceScatter") - before;
    report_route(routed ? routed_calls == expected : routed_calls == 0,
                 "%ld of %d reduces and reduce_scatters reached NCCL (%s)",
                routed_calls, expected,
                routed ? "all expected" : "none expected");
}

static void check_moves(size_t n)
{
    int root = size - 1;
    size_t all = n * (size_t)size;
    int *h = malloc(all * sizeof(int) + 1);
    int *buf = dev_alloc(n * sizeof(int)), *gathered = dev_alloc(all * sizeof(int));

    for (size_t i = 0; i < n; i++)
        h[i] = rank == root ? (int)(i % 1000) : -1;
    to_dev(buf, h, n * sizeof(int));
    MPI_Bcast(buf, (int)n, MPI_INT, root, MPI_COMM_WORLD);
    from_dev(h, buf, n * sizeof(int));
    bool good = true;
    for (size_t i = 0; i < n && good; i++)
        good = h[i] == (int)(i % 1000);
    report_bool(good, "bcast MPI_INT count=%zu from rank %d", n, root);

    for (size_t i = 0; i < n; i++)
        h[i] = rank * 100000 + (int)(i % 1000);
    to_dev(buf, h, n * sizeof(int));
    MPI_Allgather(buf, (int)n, MPI_INT, gathered, (int)n, MPI_INT,
                  MPI_COMM_WORLD);
    from_dev(h, gathered, all * sizeof(int));
    good = true;
    for (int r = 0; r < size && good; r++)
        for (size_t i = 0; i < n && good; i++)
            good = h[(size_t)r * n + i] == r * 100000 + (int)(i % 1000);
    report_bool(good, "allgather MPI_INT count=%zu", n);

    /* reduce_scatter_block: rank r keeps the sum of block r */
    for (size_t i = 0; i < all; i++)
        h[i] = (int)input(rank, i);
    to_dev(gathered, h, all * sizeof(int));
    MPI_Reduce_scatter_block(gathered, buf, (int)n, MPI_INT, MPI_SUM,
                             MPI_COMM_WORLD);
    from_dev(h, buf, n * sizeof(int));
    good = true;
    for (size_t i = 0; i < n && good; i++)
        good = h[i] == (int)fold(O_SUM, K_INT, (size_t)rank * n + i);
    report_bool(good, "reduce_scatter_block MPI_INT count=%zu", n);

    /* reduce to rank 0 */
    for (size_t i = 0; i < n; i++)
        h[i] = (int)input(rank, i);
    to_dev(buf, h, n * sizeof(int));
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : buf, rank == 0 ? buf : NULL,
               (int)n, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    from_dev(h, buf, n * sizeof(int));
    good = true;
    for (size_t i = 0; rank == 0 && i < n && good; i++)
        good = h[i] == (int)fold(O_MAX, K_INT, i);
    report_bool(good, "reduce MPI_INT MPI_MAX count=%zu to rank 0, in place", n);

    /* alltoall through grouped send/receive */
    int *out = dev_alloc(all * sizeof(int));
    for (size_t i = 0; i < all; i++)
        h[i] = rank * 1000000 + (int)i;
    to_dev(gathered, h, all * sizeof(int));
    MPI_Alltoall(gathered, (int)n, MPI_INT, out, (int)n, MPI_INT,
                 MPI_COMM_WORLD);
    from_dev(h, out, all * sizeof(int));
    good = true;
    for (int r = 0; r < size && good; r++)
        for (size_t i = 0; i < n && good; i++)
            good = h[(size_t)r * n + i] ==
                   r * 1000000 + (int)((size_t)rank * n + i);
    report_bool(good, "alltoall MPI_INT count=%zu", n);

    /* gather and scatter through grouped send/receive */
    for (size_t i = 0; i < n; i++)
        h[i] = rank * 1000 + (int)(i % 1000);
    to_dev(buf, h, n * sizeof(int));
    MPI_Gather(buf, (int)n, MPI_INT, rank == root ? out : NULL, (int)n,
               MPI_INT, root, MPI_COMM_WORLD);
    good = true;
    if (rank == root) {
        from_dev(h, out, all * sizeof(int));
        for (int r = 0; r < size && good; r++)
            for (size_t i = 0; i < n && good; i++)
                good = h[(size_t)r * n + i] == r * 1000 + (int)(i % 1000);
    }
    report_bool(good, "gather MPI_INT count=%zu to rank %d", n, root);
    for (size_t i = 0; rank == root && i < all; i++)
        h[i] = (int)(i * 3);
    if (rank == root)
        to_dev(out, h, all * sizeof(int));
    MPI_Scatter(rank == root ? out : NULL, (int)n, MPI_INT, buf, (int)n,
                MPI_INT, root, MPI_COMM_WORLD);
    from_dev(h, buf, n * sizeof(int));
    good = true;
    for (size_t i = 0; i < n && good; i++)
        good = h[i] == (int)(((size_t)rank * n + i) * 3);
    report_bool(good, "scatter MPI_INT count=%zu from rank %d", n, root);

    /* alltoallv: rank r sends d + 1 elements to rank d */
    {
        int *sc = malloc(4 * (size_t)size * sizeof(int));
        int *sd = sc + size, *rc = sd + size, *rd = rc + size;
        int st = 0, rt = 0;
        for (int r = 0; r < size; r++) {
            sc[r] = r + 1;
            sd[r] = st;
            st += r + 1;
            rc[r] = rank + 1;
            rd[r] = rt;
            rt += rank + 1;
        }
        int *hs = malloc((size_t)(st + rt) * sizeof(int)), *hr = hs + st;
        for (int i = 0; i < st; i++)
            hs[i] = rank * 100 + i;
        int *ds = dev_alloc((size_t)st * sizeof(int));
        int *dr = dev_alloc((size_t)rt * sizeof(int));
        to_dev(ds, hs, (size_t)st * sizeof(int));
        MPI_Alltoallv(ds, sc, sd, MPI_INT, dr, rc, rd, MPI_INT,
                      MPI_COMM_WORLD);
        from_dev(hr, dr, (size_t)rt * sizeof(int));
        good = true;
        /* from rank r: its block for me starts at r's displacement of me */
        for (int r = 0; r < size && good; r++) {
            int theirs = 0;
            for (int d = 0; d < rank; d++)
                theirs += d + 1;
            for (int i = 0; i <= rank && good; i++)
                good = hr[rd[r] + i] == r * 100 + theirs + i;
        }
        report_bool(good, "alltoallv MPI_INT (rank r sends d + 1 to rank d)");
        cudaFree(ds);
        cudaFree(dr);
        free(hs);
        free(sc);
    }

    /* allgatherv: rank r gives r + 1 elements */
    int *counts = malloc(2 * (size_t)size * sizeof(int)), *displs = counts + size;
    size_t total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        displs[r] = (int)total;
        total += (size_t)r + 1;
    }
    int mine[64], *vin = dev_alloc(sizeof(mine)), *vout = dev_alloc(total * sizeof(int));
    int *vall = malloc(total * sizeof(int));
    for (int i = 0; i <= rank; i++)
        mine[i] = rank * 10 + i;
    to_dev(vin, mine, (size_t)(rank + 1) * sizeof(int));
    MPI_Allgatherv(vin, rank + 1, MPI_INT, vout, counts, displs, MPI_INT,
                   MPI_COMM_WORLD);
    from_dev(vall, vout, total * sizeof(int));
    good = true;
    for (int r = 0; r < size && good; r++)
        for (int i = 0; i <= r && good; i++)
            good = vall[displs[r] + i] == r * 10 + i;
    report_bool(good, "allgatherv MPI_INT (rank r gives r + 1)");
    free(counts);
    free(vall);
    cudaFree(vin);
    cudaFree(vout);

    cudaFree(buf);
    cudaFree(gathered);
    cudaFree(out);
    free(h);
}

static void check_nonblocking(void)
{
    size_t n = 4099;
    float *h = malloc(n * sizeof(float));
    float *d = dev_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        h[i] = (float)input(rank, i);
    to_dev(d, h, n * sizeof(float));
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, d, (int)n, MPI_FLOAT, MPI_SUM,
                   MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    from_dev(h, d, n * sizeof(float));
    bool good = true;
    for (size_t i = 0; i < n && good; i++)
        good = h[i] == (float)fold(O_SUM, K_FLOAT, i);
    report_bool(good, "Iallreduce + Wait on CUDA memory, count=%zu", n);

    int *ib = dev_alloc(n * sizeof(int)), *ig = dev_alloc(n * (size_t)size * sizeof(int));
    int *hi = malloc(n * (size_t)size * sizeof(int));
    for (size_t i = 0; i < n; i++)
        hi[i] = rank == 0 ? (int)i : -1;
    to_dev(ib, hi, n * sizeof(int));
    MPI_Ibcast(ib, (int)n, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    from_dev(hi, ib, n * sizeof(int));
    good = true;
    for (size_t i = 0; i < n && good; i++)
        good = hi[i] == (int)i;
    report_bool(good, "Ibcast + Wait on CUDA memory, count=%zu", n);
    MPI_Iallgather(ib, (int)n, MPI_INT, ig, (int)n, MPI_INT, MPI_COMM_WORLD,
                   &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    from_dev(hi, ig, n * (size_t)size * sizeof(int));
    good = true;
    for (size_t i = 0; i < n * (size_t)size && good; i++)
        good = hi[i] == (int)(i % n);
    report_bool(good, "Iallgather + Wait on CUDA memory, count=%zu", n);
    cudaFree(ib);
    cudaFree(ig);
    free(hi);
    cudaFree(d);
    free(h);
}

/* The rest of the nonblocking collectives on CUDA memory, each started
 * and waited for: rank r's item i of block j is value(r, j, i), and
 * each answer is worked out here. Where counts vary, rank j's part is
 * j + 1 blocks of BLOCK ints. */
enum { BLOCK = 1000 };

static int value(int r, int j, long i)
{
    return r * 100000 + j * 1000 + (int)i;
}

static int *dev_ints(long n, int (*fill)(long i))
{
    int *h = malloc((size_t)(n ? n : 1) * sizeof(int));
    for (long i = 0; i < n; i++)
        h[i] = fill != NULL ? fill(i) : -9;
    int *d = dev_alloc((size_t)n * sizeof(int));
    to_dev(d, h, (size_t)n * sizeof(int));
    free(h);
    return d;
}

/* The n ints at d equal want(i)? */
static bool dev_equals(const int *d, long n, int (*want)(long i))
{
    int *h = malloc((size_t)(n ? n : 1) * sizeof(int));
    from_dev(h, d, (size_t)n * sizeof(int));
    bool good = true;
    for (long i = 0; i < n && good; i++)
        good = h[i] == want(i);
    free(h);
    return good;
}

static void wait_one(MPI_Request *req)
{
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* Where block j of a layout of j + 1 blocks of BLOCK per rank starts. */
static long varying_at(int j)
{
    return (long)BLOCK * j * (j + 1) / 2;
}

static int icoll_root;
static int own_block(long i) { return value(rank, 0, i); }
static int gathered(long i) { return value((int)(i / BLOCK), 0, i % BLOCK); }
static int root_blocks(long i) { return value(icoll_root, (int)(i / BLOCK), i % BLOCK); }
static int my_root_block(long i) { return value(icoll_root, rank, i); }
/* The block j that int i of such a layout lies in. */
static int varying_block(long i)
{
    int j = 0;
    while (varying_at(j + 1) <= i)
        j++;
    return j;
}
static int gathered_varying(long i)
{
    int j = varying_block(i);
    return value(j, 0, i - varying_at(j));
}
static int root_varying(long i)
{
    int j = varying_block(i);
    return value(icoll_root, j, i - varying_at(j));
}
static int my_root_varying(long i) { return value(icoll_root, rank, i); }
static int alltoallv_out(long i)
{
    /* From rank j, rank + 1 blocks. */
    int j = (int)(i / ((long)BLOCK * (rank + 1)));
    return value(j, rank, i % ((long)BLOCK * (rank + 1)));
}
static int send_varying(long i)
{
    /* To rank j, j + 1 blocks, value(rank, j, k) for k in the blocks. */
    int j = varying_block(i);
    return value(rank, j, i - varying_at(j));
}
static int scattered_sum(long i)
{
    long k = varying_at(rank) + i;      /* the element of the whole */
    return 100000 * size * (size - 1) / 2 + size * (int)k;
}
static int whole_input(long i) { return value(rank, 0, i); }
static int scan_sum(long i)
{
    return 100000 * rank * (rank + 1) / 2 + (rank + 1) * (int)i;
}
static int exscan_sum(long i)
{
    return 100000 * (rank - 1) * rank / 2 + rank * (int)i;
}

static void check_more_nonblocking(void)
{
    MPI_Request req;
    int *counts = malloc((size_t)size * sizeof(int)),
        *displs = malloc((size_t)size * sizeof(int)),
        *rcounts = malloc((size_t)size * sizeof(int)),
        *rdispls = malloc((size_t)size * sizeof(int));
    long total = varying_at(size);
    icoll_root = size - 1;

    int *mine = dev_ints(BLOCK, own_block);
    int *all = dev_ints((long)BLOCK * size, NULL);
    MPI_Igather(mine, BLOCK, MPI_INT, all, BLOCK, MPI_INT, 0, MPI_COMM_WORLD,
                &req);
    wait_one(&req);
    report_bool(rank != 0 || dev_equals(all, (long)BLOCK * size, gathered),
                "Igather + Wait on CUDA memory");

    for (int j = 0; j < size; j++) {
        counts[j] = BLOCK * (j + 1);
        displs[j] = (int)varying_at(j);
    }
    int *mine_v = dev_ints((long)BLOCK * (rank + 1), own_block);
    int *all_v = dev_ints(total, NULL);
    MPI_Igatherv(mine_v, BLOCK * (rank + 1), MPI_INT, all_v, counts, displs,
                 MPI_INT, icoll_root, MPI_COMM_WORLD, &req);
    wait_one(&req);
    report_bool(rank != icoll_root || dev_equals(all_v, total, gathered_varying),
                "Igatherv of j + 1 blocks from rank j on CUDA memory");

    int *src = dev_ints((long)BLOCK * size, rank == icoll_root ? root_blocks
                                                               : NULL);
    MPI_Iscatter(src, BLOCK, MPI_INT, mine, BLOCK, MPI_INT, icoll_root,
                 MPI_COMM_WORLD, &req);
    wait_one(&req);
    report_bool(dev_equals(mine, BLOCK, my_root_block),
                "Iscatter + Wait on CUDA memory");

    int *src_v = dev_ints(total, rank == icoll_root ? root_varying : NULL);
    MPI_Iscatterv(src_v, counts, displs, MPI_INT, mine_v,
                  BLOCK * (rank + 1), MPI_INT, icoll_root, MPI_COMM_WORLD,
                  &req);
    wait_one(&req);
    report_bool(dev_equals(mine_v, (long)BLOCK * (rank + 1), my_root_varying),
                "Iscatterv of j + 1 blocks to rank j on CUDA memory");

    /* To rank j, j + 1 blocks; from every rank, rank + 1 blocks. */
    int *out_v = dev_ints(total, send_varying);
    int *in_v = dev_ints((long)BLOCK * (rank + 1) * size, NULL);
    for (int j = 0; j < size; j++) {
        rcounts[j] = BLOCK * (rank + 1);
        rdispls[j] = BLOCK * (rank + 1) * j;
    }
    MPI_Ialltoallv(out_v, counts, displs, MPI_INT, in_v, rcounts, rdispls,
                   MPI_INT, MPI_COMM_WORLD, &req);
    wait_one(&req);
    report_bool(dev_equals(in_v, (long)BLOCK * (rank + 1) * size,
                           alltoallv_out),
                "Ialltoallv of j + 1 blocks to rank j on CUDA memory");

    /* The same by Ialltoallw: byte displacements, a type per peer. */
    MPI_Datatype *types = malloc((size_t)size * sizeof(MPI_Datatype));
    int *sbytes = malloc((size_t)size * sizeof(int)),
        *rbytes = malloc((size_t)size * sizeof(int));
    for (int j = 0; j < size; j++) {
        types[j] = MPI_INT;
        sbytes[j] = displs[j] * (int)sizeof(int);
        rbytes[j] = rdispls[j] * (int)sizeof(int);
    }
    int *in_w = dev_ints((long)BLOCK * (rank + 1) * size, NULL);
    MPI_Ialltoallw(out_v, counts, sbytes, types, in_w, rcounts, rbytes,
                   types, MPI_COMM_WORLD, &req);
    wait_one(&req);
    report_bool(dev_equals(in_w, (long)BLOCK * (rank + 1) * size,
                           alltoallv_out),
                "Ialltoallw of j + 1 blocks to rank j on CUDA memory");

    /* Every rank's whole input summed; rank j keeps j + 1 blocks. */
    int *whole = dev_ints(total, whole_input);
    MPI_Ireduce_scatter(whole, mine_v, counts, MPI_INT, MPI_SUM,
                        MPI_COMM_WORLD, &req);
    wait_one(&req);
    report_bool(dev_equals(mine_v, (long)BLOCK * (rank + 1), scattered_sum),
                "Ireduce_scatter of j + 1 blocks to rank j on CUDA memory");

    int *own = dev_ints(BLOCK, own_block), *sum = dev_ints(BLOCK, NULL);
    MPI_Iscan(own, sum, BLOCK, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    wait_one(&req);
    report_bool(dev_equals(sum, BLOCK, scan_sum),
                "Iscan by MPI_SUM on CUDA memory");
    MPI_Iexscan(own, sum, BLOCK, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    wait_one(&req);
    report_bool(rank == 0 || dev_equals(sum, BLOCK, exscan_sum),
                "Iexscan by MPI_SUM on CUDA memory");

    int *bufs[] = { mine, all, mine_v, all_v, src, src_v, out_v, in_v,
                    in_w, whole, own, sum };
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        cudaFree(bufs[i]);
    free(types);
    free(sbytes);
    free(rbytes);
    free(counts);
    free(displs);
    free(rcounts);
    free(rdispls);
}

/* Point to point with CUDA buffers: a ring, blocking and not. */
static void check_p2p(void)
{
    size_t n = 70001;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *h = malloc(n * sizeof(int));
    int *s = dev_alloc(n * sizeof(int)), *r = dev_alloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        h[i] = rank * 7 + (int)(i % 100);
    to_dev(s, h, n * sizeof(int));
    MPI_Sendrecv(s, (int)n, MPI_INT, right, 5, r, (int)n, MPI_INT, left, 5,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    from_dev(h, r, n * sizeof(int));
    bool good = true;
    for (size_t i = 0; i < n && good; i++)
        good = h[i] == left * 7 + (int)(i % 100);
    report_bool(good, "Sendrecv of %zu MPI_INT in a ring, CUDA buffers", n);

    MPI_Request reqs[2];
    MPI_Irecv(r, (int)n, MPI_INT, right, 6, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(s, (int)n, MPI_INT, left, 6, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    from_dev(h, r, n * sizeof(int));
    good = true;
    for (size_t i = 0; i < n && good; i++)
        good = h[i] == right * 7 + (int)(i % 100);
    report_bool(good, "Isend/Irecv the other way round, CUDA buffers");

    if (size > 1) {
        if (rank == 0)
            MPI_Send(s, 3, MPI_INT, 1, 9, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(r, 3, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1)
            from_dev(h, r, 3 * sizeof(int));
        good = rank != 1 || (h[0] == 0 && h[2] == 2);
    } else {
        good = true;
    }
    report_bool(good, "Send/Recv from rank 0 to rank 1, CUDA buffers");
    cudaFree(s);
    cudaFree(r);
    free(h);
}

static void user_bor(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((unsigned *)inout)[i] |= ((unsigned *)in)[i];
}

/* What NCCL cannot take still gives right answers, staged. */
static void check_staged_cases(void)
{
    struct { double v; int i; } pair[1] = { { 0, 0 } }, back[1];
    void *d = dev_alloc(sizeof(pair));
    memset(pair, 0, sizeof(pair));
    pair[0].v = rank % 2 ? rank : -rank;
    pair[0].i = rank;
    to_dev(d, pair, sizeof(pair));
    long before = calls("ncclAllReduce");
    MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE_INT, MPI_MAXLOC,
                  MPI_COMM_WORLD);
    from_dev(back, d, sizeof(back));
    int best = 0;
    for (int r = 1; r < size; r++)
        if ((r % 2 ? r : -r) > (best % 2 ? best : -best))
            best = r;
    report_bool(back[0].i == best && calls("ncclAllReduce") == before,
                "MAXLOC on CUDA memory is staged (winner %d, NCCL untouched)",
                back[0].i);
    cudaFree(d);

    /* A user-defined op: staged, applied by pdmpi on the host. */
    MPI_Op bor;
    MPI_Op_create(user_bor, 1, &bor);
    unsigned bits = 1u << rank, got_bits = 0, *db = dev_alloc(sizeof(unsigned));
    to_dev(db, &bits, sizeof(bits));
    before = calls("ncclAllReduce");
    MPI_Allreduce(MPI_IN_PLACE, db, 1, MPI_UNSIGNED, bor, MPI_COMM_WORLD);
    from_dev(&got_bits, db, sizeof(got_bits));
    report_bool(got_bits == (1u << size) - 1 && calls("ncclAllReduce") == before,
                "a user op on CUDA memory is staged (0x%x)", got_bits);
    MPI_Op_free(&bor);
    cudaFree(db);

    int host_in = rank + 1, out = 0, *dev_out = dev_alloc(sizeof(int));
    MPI_Allreduce(&host_in, dev_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    from_dev(&out, dev_out, sizeof(int));
    report_bool(out == size * (size + 1) / 2,
                "host input, CUDA output: staged, right sum");
    cudaFree(dev_out);

    /* Managed memory: the host may touch it; it takes the host path. */
    int *m = NULL;
    cudaMallocManaged((void **)&m, 4 * sizeof(int), cudaMemAttachGlobal);
    for (int i = 0; i < 4; i++)
        m[i] = rank + i;
    before = calls("ncclAllReduce");
    MPI_Allreduce(MPI_IN_PLACE, m, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    report_bool(m[3] == size * (size - 1) / 2 + 3 * size &&
                    calls("ncclAllReduce") == before,
                "managed memory: right sum on the host path (NCCL untouched)");
    cudaFree(m);
}

/* Non-contiguous datatypes on CUDA memory: every other int of 8, sent
 * and received strided; the gaps (-1 sent, -5 received) stay as they
 * were, and nothing of the device memory is read on the host (the double
 * would fault). */
static void check_device_derived(void)
{
    MPI_Datatype every_other, spaced;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Type_create_resized(every_other, 0, 8 * sizeof(int), &spaced);
    MPI_Type_commit(&spaced);
    int hs[8], *hr = malloc((size_t)size * 8 * sizeof(int));
    for (int i = 0; i < 8; i++)
        hs[i] = i % 2 == 0 ? rank * 100 + i / 2 : -1;
    int *ds = dev_alloc(sizeof(hs)), *dr = dev_alloc((size_t)size * sizeof(hs));
    to_dev(ds, hs, sizeof(hs));
    for (int i = 0; i < size * 8; i++)
        hr[i] = -5;
    to_dev(dr, hr, (size_t)size * sizeof(hs));
    MPI_Allgather(ds, 1, every_other, dr, 1, spaced, MPI_COMM_WORLD);
    from_dev(hr, dr, (size_t)size * sizeof(hs));
    bool good = true;
    for (int r = 0; r < size && good; r++)
        for (int i = 0; i < 8 && good; i++)
            good = hr[8 * r + i] == (i % 2 == 0 ? r * 100 + i / 2 : -5);
    report_bool(good, "Allgather of a strided type, CUDA buffers: packed "
                "through host copies, gaps untouched");

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < 8; i++)
        hr[i] = -5;
    to_dev(dr, hr, sizeof(hs));
    MPI_Sendrecv(ds, 1, every_other, right, 3, dr, 1, every_other, left, 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    from_dev(hr, dr, sizeof(hs));
    good = true;
    for (int i = 0; i < 7 && good; i++)
        good = hr[i] == (i % 2 == 0 ? left * 100 + i / 2 : -5);
    report_bool(good, "Sendrecv of a strided type in a ring, CUDA buffers");

    MPI_Allreduce(MPI_IN_PLACE, ds, 1, every_other, MPI_SUM, MPI_COMM_WORLD);
    from_dev(hs, ds, sizeof(hs));
    good = true;
    for (int i = 0; i < 8 && good; i++)
        good = hs[i] == (i % 2 == 0 ? 100 * size * (size - 1) / 2 + size * (i / 2)
                                    : -1);
    report_bool(good, "in-place Allreduce of a strided type, CUDA buffer");
    MPI_Type_free(&spaced);
    MPI_Type_free(&every_other);
    cudaFree(ds);
    cudaFree(dr);
    free(hr);
}

/* Communicators that come and go create and destroy NCCL communicators. */
/* Entries of a /proc/self directory: descriptors, threads. */
static int count_entries(const char *path)
{
    DIR *dir = opendir(path);
    int n = 0;
    if (dir == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(dir);
    return n;
}

static void check_comm_cycle(bool routed)
{
    /* One round first, so lazily made state (staging, the progress
     * thread of a communicator kind) is there before counting. */
    int fds = -1, threads = -1;
    long inits = calls("ncclCommInitRank"), gone = calls("ncclCommDestroy");
    for (int round = 0; round < 3; round++) {
        MPI_Comm half, dup;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Comm_dup(half, &dup);
        int hs;
        MPI_Comm_size(dup, &hs);
        int one = 1, *d = dev_alloc(sizeof(int)), got = 0;
        to_dev(d, &one, sizeof(int));
        MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_INT, MPI_SUM, dup);
        from_dev(&got, d, sizeof(int));
        report_bool(got == hs, "round %d: allreduce on a split's dup (%d ranks)",
                    round, hs);
        cudaFree(d);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&half);
        if (round == 0) {
            fds = count_entries("/proc/self/fd");
            threads = count_entries("/proc/self/task");
        }
    }
    int fds_after = count_entries("/proc/self/fd");
    int threads_after = count_entries("/proc/self/task");
    report_bool(fds_after == fds && threads_after == threads,
                "split/dup/free rounds 2-3 leave descriptors (%d -> %d) and "
                "threads (%d -> %d) as they were", fds, fds_after, threads,
                threads_after);
    long made = calls("ncclCommInitRank") - inits;
    long freed = calls("ncclCommDestroy") - gone;
    report_route(!routed || (made > 0 && made == freed),
                 "%ld NCCL communicators made and %ld destroyed by 3 split/"
                 "dup/free rounds", made, freed);
}

static void run_refused(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int host_in = 1, *dev_out = dev_alloc(sizeof(int));
    int rc = MPI_Allreduce(&host_in, dev_out, 1, MPI_INT, MPI_SUM,
                           MPI_COMM_WORLD);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    report_bool(rc != MPI_SUCCESS, "mixed host/CUDA allreduce is refused "
                "under PDMPI_DEVICE_FALLBACK=error (%s)", msg);
    float one = 1.0f, got = 0;
    float *f = dev_alloc(sizeof(float));
    to_dev(f, &one, sizeof(float));
    rc = MPI_Allreduce(MPI_IN_PLACE, f, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    from_dev(&got, f, sizeof(float));
    report_bool(rc == MPI_SUCCESS && got == (float)size,
                "a call NCCL takes still works afterwards");
    cudaFree(f);
    cudaFree(dev_out);
}

static void *kill_soon(void *arg)
{
    (void)arg;
    usleep(300000);
    raise(SIGKILL);
    return NULL;
}

static int faults(const char *how, int who)
{
    size_t n = 1u << 20;
    float *d = dev_alloc(n * sizeof(float));
    if (strcmp(how, "die") == 0 && rank == who) {
        pthread_t t;
        pthread_create(&t, NULL, kill_soon, NULL);
        pthread_detach(t);
    }
    int rc = MPI_SUCCESS;
    for (int i = 0; i < 5000 && rc == MPI_SUCCESS; i++) {
        if (strcmp(how, "skip") == 0 && rank == who && i == 2)
            rc = MPI_Barrier(MPI_COMM_WORLD);
        else if (strcmp(how, "count") == 0 && rank == who && i == 2)
            rc = MPI_Allreduce(MPI_IN_PLACE, d, (int)n - 1000, MPI_FLOAT,
                               MPI_SUM, MPI_COMM_WORLD);
        else
            rc = MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD);
    }
    cudaFree(d);
    return rc == MPI_SUCCESS ? 3 : 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "routed";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(mode, "die") == 0 || strcmp(mode, "skip") == 0 ||
        strcmp(mode, "count") == 0 ||
        strcmp(mode, "loop") == 0) {
        int rc = faults(mode, argc > 2 ? atoi(argv[2]) : 1);
        MPI_Finalize();
        return rc;
    }
    world_rank = rank;
    world_size = size;
    const char *lib = getenv("PDMPI_NCCL_LIB");
    void *handle = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (handle != NULL)
        *(void **)&nccl_calls = dlsym(handle, "nccl_double_calls");
    bool routed = strcmp(mode, "routed") == 0;
    if (strcmp(mode, "refused") == 0) {
        run_refused();
    } else {
        /* 1 when CUDA buffers are accepted: routed or staged alike. */
        report_bool(MPIX_Query_cuda_support() == 1,
                    "MPIX_Query_cuda_support() is 1");
        check_allreduce_matrix(routed);
        check_reduction_matrix(routed);
        check_moves(1);
        check_moves(70001);
        check_nonblocking();
        check_more_nonblocking();
        check_p2p();
        check_staged_cases();
        check_device_derived();
        check_comm_cycle(routed);
    }
    if (handle != NULL)
        dlclose(handle);
    int status = finish();
    MPI_Finalize();
    return status;
}
