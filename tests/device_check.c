/*
 * Device-memory collectives against the BKCL and XPU-runtime test doubles
 * (tests/bkcl_double): every collective on "XPU memory" (from the
 * double's xpu_malloc) at several sizes, datatypes and ops, checked
 * against answers computed here; and which way each call went, read from
 * the double's call counters: to BKCL when the library can take it, else
 * staged through host memory (MAXLOC, user ops, int16, mixed host and
 * device buffers), or refused under PDMPI_DEVICE_FALLBACK=error.
 *
 *   device_check [routed|staged|refused]
 *     routed  (default) the policy is bkcl: supported calls reach BKCL
 *     staged  the policy is gloo: nothing reaches BKCL, results still right
 *     refused PDMPI_DEVICE_FALLBACK=error: a call BKCL cannot take fails
 *
 * Output is TAP; exit 0 when every check passes.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdmpi.h"
#include "tap_harness.h"

/* The runtime double's allocator: "device" memory it can recognise. */
int xpu_malloc(void **ptr, uint64_t bytes);
int xpu_free(void *ptr);

static int rank, size;
static long (*bkcl_calls)(const char *name);

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (xpu_malloc(&p, bytes ? bytes : 1) != 0 || p == NULL) {
        fprintf(stderr, "device_check: xpu_malloc(%zu) failed\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static long calls(const char *name)
{
    return bkcl_calls != NULL ? bkcl_calls(name) : -1;
}

/* Values exact in fp16 and bf16 sums and products: small integers. */
static double input(int r, size_t i)
{
    return (double)((r + 1) * (int)(i % 7 + 1) % 13);
}

static uint16_t to_half(float f)
{
    /* Exact for the small integers used here. */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff;
    uint32_t mant = x & 0x7fffff;
    if (exp == 0)
        return (uint16_t)sign;
    return (uint16_t)(sign | ((exp - 127 + 15) << 10) | (mant >> 13));
}

static float from_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff, x;
    if (exp == 0)
        x = sign;
    else
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

enum kind { K_FLOAT, K_DOUBLE, K_INT, K_LONG, K_HALF, K_BF16, K_SHORT };
static const struct {
    const char *name;
    size_t bytes;
} kinds[] = {
    { "MPI_FLOAT", 4 }, { "MPI_DOUBLE", 8 }, { "MPI_INT", 4 },
    { "MPI_LONG", 8 },  { "MPIX_C_FLOAT16", 2 }, { "MPIX_BFLOAT16", 2 },
    { "MPI_SHORT", 2 },
};

static MPI_Datatype mpi_type(enum kind k)
{
    switch (k) {
    case K_FLOAT: return MPI_FLOAT;
    case K_DOUBLE: return MPI_DOUBLE;
    case K_INT: return MPI_INT;
    case K_LONG: return MPI_LONG;
    case K_HALF: return MPIX_C_FLOAT16;
    case K_BF16: return MPIX_BFLOAT16;
    case K_SHORT: return MPI_SHORT;
    }
    return MPI_DATATYPE_NULL;
}

static void put(void *buf, enum kind k, size_t i, double v)
{
    switch (k) {
    case K_FLOAT: ((float *)buf)[i] = (float)v; break;
    case K_DOUBLE: ((double *)buf)[i] = v; break;
    case K_INT: ((int *)buf)[i] = (int)v; break;
    case K_LONG: ((long *)buf)[i] = (long)v; break;
    case K_HALF: ((uint16_t *)buf)[i] = to_half((float)v); break;
    case K_BF16: {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        ((uint16_t *)buf)[i] = (uint16_t)(x >> 16);
        break;
    }
    case K_SHORT: ((short *)buf)[i] = (short)v; break;
    }
}

static double get(const void *buf, enum kind k, size_t i)
{
    switch (k) {
    case K_FLOAT: return ((const float *)buf)[i];
    case K_DOUBLE: return ((const double *)buf)[i];
    case K_INT: return ((const int *)buf)[i];
    case K_LONG: return (double)((const long *)buf)[i];
    case K_HALF: return from_half(((const uint16_t *)buf)[i]);
    case K_BF16: {
        uint32_t x = (uint32_t)((const uint16_t *)buf)[i] << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
    case K_SHORT: return ((const short *)buf)[i];
    }
    return 0;
}

static double fold(MPI_Op op, size_t i)
{
    double acc = input(0, i);
    for (int r = 1; r < size; r++) {
        double v = input(r, i);
        if (op == MPI_SUM) acc += v;
        else if (op == MPI_PROD) acc *= v;
        else if (op == MPI_MAX) acc = v > acc ? v : acc;
        else acc = v < acc ? v : acc;
    }
    return acc;
}

/* Product of up to 4 inputs < 13 stays exact in fp16/bf16? Not always:
 * keep products on small ranges by capping the element index. */
static size_t prod_safe(MPI_Op op, size_t n)
{
    return op == MPI_PROD && n > 3 ? 3 : n;
}

static void check_allreduce(enum kind k, MPI_Op op, const char *opname,
                            size_t n, int in_place)
{
    size_t eb = kinds[k].bytes;
    n = prod_safe(op, n);
    char *host = malloc(n * eb);
    void *send = dev_alloc(n * eb), *recv = dev_alloc(n * eb);
    for (size_t i = 0; i < n; i++)
        put(host, k, i, input(rank, i));
    memcpy(in_place ? recv : send, host, n * eb);  /* the double's memory
                                                     is host-addressable */
    MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)n, mpi_type(k),
                  op, MPI_COMM_WORLD);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (get(recv, k, i) != fold(op, i))
            bad = i;
    report_bool(bad == n, "allreduce %s %s count=%zu%s on XPU memory",
                kinds[k].name, opname, n, in_place ? " in place" : "");
    xpu_free(send);
    xpu_free(recv);
    free(host);
}

static void check_rooted_and_gathers(size_t n)
{
    int root = size - 1;
    float *buf = dev_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        buf[i] = rank == root ? (float)(i % 1000) : -1.0f;
    MPI_Bcast(buf, (int)n, MPI_FLOAT, root, MPI_COMM_WORLD);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (buf[i] != (float)(i % 1000))
            bad = i;
    report_bool(bad == n, "bcast MPI_FLOAT count=%zu from rank %d", n, root);

    float *all = dev_alloc(n * (size_t)size * sizeof(float));
    for (size_t i = 0; i < n; i++)
        buf[i] = (float)(rank * 10000 + (int)(i % 1000));
    MPI_Allgather(buf, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT,
                  MPI_COMM_WORLD);
    bad = 1;
    for (int r = 0; r < size && bad; r++)
        for (size_t i = 0; i < n && bad; i++)
            if (all[(size_t)r * n + i] != (float)(r * 10000 + (int)(i % 1000)))
                bad = 0;
    report_bool(bad, "allgather MPI_FLOAT count=%zu", n);

    double *in = dev_alloc(n * sizeof(double)), *out = dev_alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        in[i] = input(rank, i);
    MPI_Reduce(in, rank == 0 ? out : NULL, (int)n, MPI_DOUBLE, MPI_SUM, 0,
               MPI_COMM_WORLD);
    bad = 1;
    for (size_t i = 0; rank == 0 && i < n && bad; i++)
        if (out[i] != fold(MPI_SUM, i))
            bad = 0;
    report_bool(bad, "reduce MPI_DOUBLE MPI_SUM count=%zu to rank 0", n);

    int *blocks = dev_alloc(n * (size_t)size * sizeof(int));
    int *mine = dev_alloc(n * sizeof(int));
    for (size_t i = 0; i < n * (size_t)size; i++)
        blocks[i] = (int)input(rank, i);
    MPI_Reduce_scatter_block(blocks, mine, (int)n, MPI_INT, MPI_SUM,
                             MPI_COMM_WORLD);
    bad = 1;
    for (size_t i = 0; i < n && bad; i++)
        if (mine[i] != (int)fold(MPI_SUM, (size_t)rank * n + i))
            bad = 0;
    report_bool(bad, "reduce_scatter_block MPI_INT MPI_SUM count=%zu", n);

    /* all-to-all through grouped send/receive */
    for (size_t i = 0; i < n * (size_t)size; i++)
        blocks[i] = rank * 1000000 + (int)i;
    int *got = dev_alloc(n * (size_t)size * sizeof(int));
    MPI_Alltoall(blocks, (int)n, MPI_INT, got, (int)n, MPI_INT,
                 MPI_COMM_WORLD);
    bad = 1;
    for (int r = 0; r < size && bad; r++)
        for (size_t i = 0; i < n && bad; i++)
            if (got[(size_t)r * n + i] !=
                r * 1000000 + (int)((size_t)rank * n + i))
                bad = 0;
    report_bool(bad, "alltoall MPI_INT count=%zu", n);

    MPI_Gather(mine, (int)n, MPI_INT, rank == 0 ? got : NULL, (int)n, MPI_INT,
               0, MPI_COMM_WORLD);
    bad = 1;
    for (int r = 0; rank == 0 && r < size && bad; r++)
        for (size_t i = 0; i < n && bad; i++)
            if (got[(size_t)r * n + i] != (int)fold(MPI_SUM, (size_t)r * n + i))
                bad = 0;
    report_bool(bad, "gather MPI_INT count=%zu to rank 0", n);

    /* In place at the root: its own block is input and must survive
     * (staged, it is copied to host memory first). */
    for (size_t i = 0; rank == 0 && i < n; i++)
        got[i] = -1 - (int)i;
    MPI_Gather(rank == 0 ? MPI_IN_PLACE : mine, (int)n, MPI_INT,
               rank == 0 ? got : NULL, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
    bad = 1;
    for (int r = 0; rank == 0 && r < size && bad; r++)
        for (size_t i = 0; i < n && bad; i++)
            if (got[(size_t)r * n + i] !=
                (r == 0 ? -1 - (int)i : (int)fold(MPI_SUM, (size_t)r * n + i)))
                bad = 0;
    report_bool(bad, "gather MPI_INT count=%zu in place at rank 0", n);

    xpu_free(buf);
    xpu_free(all);
    xpu_free(in);
    xpu_free(out);
    xpu_free(blocks);
    xpu_free(mine);
    xpu_free(got);
}

/* Calls BKCL cannot take still give right answers, staged. */
static void check_staged_cases(void)
{
    struct { double v; int i; } *pair = dev_alloc(2 * sizeof(*pair));
    memset(pair, 0, 2 * sizeof(*pair));   /* the padding travels too */
    pair[0].v = rank % 2 ? rank : -rank;
    pair[0].i = rank;
    long before = calls("bkcl_all_reduce");
    MPI_Allreduce(MPI_IN_PLACE, pair, 1, MPI_DOUBLE_INT, MPI_MAXLOC,
                  MPI_COMM_WORLD);
    int best = 0;
    for (int r = 1; r < size; r++)
        if ((r % 2 ? r : -r) > (best % 2 ? best : -best))
            best = r;
    report_bool(pair[0].i == best && calls("bkcl_all_reduce") == before,
                "MAXLOC on XPU memory is staged (winner %d, BKCL untouched)",
                pair[0].i);
    xpu_free(pair);

    short *s = dev_alloc(4 * sizeof(short));
    for (int i = 0; i < 4; i++)
        s[i] = (short)(rank + i);
    before = calls("bkcl_all_reduce");
    MPI_Allreduce(MPI_IN_PLACE, s, 4, MPI_SHORT, MPI_SUM, MPI_COMM_WORLD);
    report_bool(s[3] == size * (size - 1) / 2 + 3 * size &&
                  calls("bkcl_all_reduce") == before,
                "MPI_SHORT (no BKCL type) on XPU memory is staged");
    xpu_free(s);

    /* one buffer on the host, one on the device */
    int host_in = rank + 1, *dev_out = dev_alloc(sizeof(int));
    MPI_Allreduce(&host_in, dev_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    report_bool(*dev_out == size * (size + 1) / 2,
                "host input, XPU output: staged, right sum");
    xpu_free(dev_out);
}

/* MPIX_OP_AVG: BKCL has no average, so XPU buffers are staged; host
 * buffers take the host path. Integers truncate toward zero. */
static void check_average(void)
{
    float *f = dev_alloc(3 * sizeof(float));
    int ints[3], *di = dev_alloc(3 * sizeof(int));
    for (int i = 0; i < 3; i++) {
        f[i] = (float)(rank * 2 + i);
        ints[i] = rank + i;
        di[i] = -(rank + i);
    }
    long before = calls("bkcl_all_reduce");
    MPI_Allreduce(MPI_IN_PLACE, f, 3, MPI_FLOAT, MPIX_OP_AVG, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, ints, 3, MPI_INT, MPIX_OP_AVG, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, di, 3, MPI_INT, MPIX_OP_AVG, MPI_COMM_WORLD);
    int passed = calls("bkcl_all_reduce") == before;
    for (int i = 0; i < 3; i++) {
        float want_f = (float)(size - 1) + (float)i;   /* mean of 2r+i */
        int sum = size * (size - 1) / 2 + size * i;
        passed = passed && f[i] == want_f && ints[i] == sum / size &&
                 di[i] == -sum / size;
    }
    report_bool(passed, "MPIX_OP_AVG on host and XPU memory (XPU staged)");
    xpu_free(f);
    xpu_free(di);
}

static void run_checks(const char *mode)
{
    bool routed = strcmp(mode, "routed") == 0;
    static const MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN };
    static const char *const opnames[] = { "MPI_SUM", "MPI_PROD", "MPI_MAX",
                                           "MPI_MIN" };
    static const size_t counts[] = { 1, 1000, 300007 };
    long before = calls("bkcl_all_reduce");
    int expected = 0;
    for (int k = K_FLOAT; k <= K_BF16; k++)
        for (int o = 0; o < 4; o++)
            for (size_t c = 0; c < 3; c++) {
                if (counts[c] > 1000 && o != 0)
                    continue;   /* big sizes: one op is enough */
                check_allreduce((enum kind)k, ops[o], opnames[o], counts[c],
                                c == 1);
                expected++;
            }
    long routed_calls = calls("bkcl_all_reduce") - before;
    report_bool(routed ? routed_calls == expected : routed_calls == 0,
                "%ld of %d allreduces reached BKCL (%s)", routed_calls,
                expected, routed ? "all expected" : "none expected");
    before = calls("bkcl_all_gather") + calls("bkcl_broadcast") +
             calls("bkcl_reduce") + calls("bkcl_reduce_scatter") +
             calls("bkcl_send");
    check_rooted_and_gathers(1);
    check_rooted_and_gathers(70001);
    long others = calls("bkcl_all_gather") + calls("bkcl_broadcast") +
                  calls("bkcl_reduce") + calls("bkcl_reduce_scatter") +
                  calls("bkcl_send") - before;
    report_bool(routed ? (size == 1 || others > 0) : others == 0,
                "bcast/allgather/reduce/reduce_scatter/alltoall/gather: %ld "
                "BKCL calls (%s)", others, routed ? "some expected" : "none expected");
    check_staged_cases();
    check_average();
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
    report_bool(rc != MPI_SUCCESS, "mixed host/XPU allreduce is refused "
                "under PDMPI_DEVICE_FALLBACK=error (%s)", msg);
    float *f = dev_alloc(sizeof(float));
    *f = 1.0f;
    rc = MPI_Allreduce(MPI_IN_PLACE, f, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    report_bool(rc == MPI_SUCCESS && *f == (float)size,
                "a call BKCL takes still works afterwards");
    xpu_free(f);
    xpu_free(dev_out);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "routed";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    world_rank = rank;
    world_size = size;
    const char *lib = getenv("PDMPI_BKCL_LIB");
    void *handle = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (handle != NULL)
        *(void **)&bkcl_calls = dlsym(handle, "bkcl_double_calls");
    if (strcmp(mode, "refused") == 0)
        run_refused();
    else
        run_checks(mode);
    int status = finish();
    MPI_Finalize();
    return status;
}
