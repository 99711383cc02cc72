/*
 * Self-test of the BKCL and XPU runtime test doubles (libbkcl.so and
 * libxpurt.so built from this directory). Usage: double_selftest N, with
 * N in 1..4 ranks. The parent checks the runtime double and creates the
 * unique id; N forked children, one per rank and device, run every
 * collective for every data type and op (sizes 1, 1000 and 3 chunks + 7,
 * in place and out of place), grouped and plain send/recv, and argument
 * errors, checking every element against values computed here
 * independently. Then: two ranks on one device are refused, a missing rank
 * times out, and no shared-memory segment is left. Prints TAP.
 *
 * Values are small integers (scaled up for INT32/INT64), so every float
 * result, fp16 and bf16 included, is exact and compared bit for bit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/dccl/bkcl_api.h"

/* The doubles' entry points (the header has only typedefs). */
BKCLResult_t bkcl_get_unique_id(BKCLUniqueId *id);
BKCLResult_t bkcl_init_rank(BKCLContext_t *comm, int rank, int nranks,
                            const BKCLUniqueId *id);
BKCLResult_t bkcl_destroy_context(BKCLContext_t comm);
BKCLResult_t bkcl_all_reduce(BKCLContext_t, const void *, void *, size_t,
                             BKCLDataType, BKCLOp, XPUStream);
BKCLResult_t bkcl_broadcast(BKCLContext_t, const void *, void *, size_t,
                            BKCLDataType, int, XPUStream);
BKCLResult_t bkcl_reduce(BKCLContext_t, const void *, void *, size_t,
                         BKCLDataType, BKCLOp, int, XPUStream);
BKCLResult_t bkcl_all_gather(BKCLContext_t, const void *, size_t, void *,
                             BKCLDataType, XPUStream);
BKCLResult_t bkcl_reduce_scatter(BKCLContext_t, const void *, void *, size_t,
                                 BKCLDataType, BKCLOp, XPUStream);
BKCLResult_t bkcl_send(BKCLContext_t, const void *, size_t, int,
                       BKCLDataType, XPUStream);
BKCLResult_t bkcl_recv(BKCLContext_t, void *, size_t, int, BKCLDataType,
                       XPUStream);
BKCLResult_t bkcl_group_start(void);
BKCLResult_t bkcl_group_end(void);
long bkcl_double_calls(const char *name);
int xpu_device_count(int *count);
int xpu_set_device(int device);
int xpu_current_device(int *device);
int xpu_malloc(void **ptr, uint64_t bytes);
int xpu_free(void *ptr);
int xpu_memcpy(void *dst, const void *src, uint64_t bytes, int kind);
int xpu_stream_create(XPUStream *stream);
int xpu_stream_destroy(XPUStream stream);
int xpu_wait(XPUStream stream);
int xpu_pointer_get_attrs(pd_xpu_pointer_attrs *attrs, const void *ptr);
long xpurt_double_live_allocations(void);

#define MAX_RANKS 4
#define MAX_IDS 8
#define CHILD_ALARM_S 1800      /* a hung child is killed, not waited on */
#define NUM_DTYPES 7
#define NUM_OPS 4

static const char *const dtype_names[NUM_DTYPES] = {
    "FLOAT", "FLOAT16", "BFLOAT16", "FLOAT64", "UINT8", "INT32", "INT64",
};
static const char *const op_names[NUM_OPS] = {"ADD", "PRODUCT", "MIN", "MAX"};

/* ---- reporting ---- */

static int tests_run, tests_failed;

static void check(int ok, const char *fmt, ...)
{
    va_list ap;

    tests_run++;
    tests_failed += !ok;
    printf("%s %d - ", ok ? "ok" : "not ok", tests_run);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* A child counts failures and describes the first few on stderr. */
struct child {
    BKCLContext_t comm;
    int rank;
    int n;
    size_t chunk;               /* the doubles' slot size in bytes */
    long failures;
};

static void fail(struct child *c, const char *fmt, ...)
{
    char line[400];
    va_list ap;

    if (c->failures++ >= 20)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "# rank %d: FAIL %s\n", c->rank, line);
}

/* ---- values, computed independently of the double ---- */

static size_t dsize(BKCLDataType t)
{
    static const size_t sizes[NUM_DTYPES] = {4, 2, 2, 8, 1, 4, 8};

    return sizes[t];
}

static int is_float(BKCLDataType t)
{
    return t == BKCL_FLOAT || t == BKCL_FLOAT16 || t == BKCL_BFLOAT16 ||
           t == BKCL_FLOAT64;
}

static int64_t int_scale(BKCLDataType t)
{
    return t == BKCL_INT32 ? 40000 : t == BKCL_INT64 ? 3000000007LL : 1;
}

/* Small integer for element i of rank r: in [-2, 2] for reductions (so
 * products of 4 ranks stay exact in bf16), wider otherwise. */
static int64_t gen(int r, size_t i, int wide)
{
    if (wide)
        return (int64_t)((i * 7 + (size_t)r * 13) % 61) - 30;
    return (int64_t)((i * 7 + (size_t)r * 3) % 5) - 2;
}

/* fp16 bits of an integer-valued d exact in fp16 (|d| < 65536), by hand;
 * keeps the sign of -0 (a product like -2 * 0 is -0 in IEEE arithmetic). */
static uint16_t half_of_int(double d)
{
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    uint64_t a = (uint64_t)fabs(d);
    int e = 0;

    if (a == 0)
        return sign;
    while ((a >> (e + 1)) != 0)
        e++;
    /* a = 1.m * 2^e: the 10 bits below the leading one are m. */
    a = e <= 10 ? a << (10 - e) : a >> (e - 10);
    return (uint16_t)(sign | (e + 15) << 10 | (a & 0x3ff));
}

/* Bits of an exact float value d in type t (d is an integer). */
static uint64_t enc_float(BKCLDataType t, double d)
{
    float f = (float)d;
    uint32_t fb;
    uint64_t db;

    memcpy(&fb, &f, 4);
    memcpy(&db, &d, 8);
    switch (t) {
    case BKCL_FLOAT: return fb;
    case BKCL_FLOAT64: return db;
    case BKCL_FLOAT16: return half_of_int(d);
    default: return fb >> 16;   /* bf16 of a small integer: exact */
    }
}

static uint64_t mask_of(BKCLDataType t)
{
    return dsize(t) == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * dsize(t))) - 1;
}

/* Bits stored for the small value v in type t. */
static uint64_t enc(BKCLDataType t, int64_t v)
{
    if (is_float(t))
        return enc_float(t, (double)v);
    return (uint64_t)(v * int_scale(t)) & mask_of(t);
}

static void put(BKCLDataType t, void *buf, size_t i, uint64_t bits)
{
    memcpy((unsigned char *)buf + i * dsize(t), &bits, dsize(t)); /* LE */
}

static uint64_t get(BKCLDataType t, const void *buf, size_t i)
{
    uint64_t bits = 0;

    memcpy(&bits, (const unsigned char *)buf + i * dsize(t), dsize(t));
    return bits;
}

/* Sign-extends a width-bit integer for MIN/MAX of signed types. */
static int64_t as_signed(BKCLDataType t, uint64_t bits)
{
    if (t == BKCL_INT32)
        return (int32_t)(uint32_t)bits;
    return (int64_t)bits;
}

/* Expected bits of element i reduced over ranks 0..n-1 (data gen(r, i)). */
static uint64_t expect_reduce(BKCLDataType t, BKCLOp op, int n, size_t i)
{
    if (is_float(t)) {
        double acc = (double)gen(0, i, 0);

        for (int r = 1; r < n; r++) {
            double v = (double)gen(r, i, 0);

            acc = op == BKCL_ADD ? acc + v : op == BKCL_PRODUCT ? acc * v
                : op == BKCL_MIN ? fmin(acc, v) : fmax(acc, v);
        }
        return enc_float(t, acc);
    }
    uint64_t acc = enc(t, gen(0, i, 0));
    for (int r = 1; r < n; r++) {
        uint64_t v = enc(t, gen(r, i, 0));
        int less = t == BKCL_UINT8 ? v < acc
                                   : as_signed(t, v) < as_signed(t, acc);

        if (op == BKCL_ADD)
            acc = (acc + v) & mask_of(t);
        else if (op == BKCL_PRODUCT)
            acc = (acc * v) & mask_of(t);
        else if ((op == BKCL_MIN && less) || (op == BKCL_MAX && !less))
            acc = v;
    }
    return acc;
}

static void fill(BKCLDataType t, void *buf, size_t count, int rank,
                 size_t first, int wide)
{
    for (size_t i = 0; i < count; i++)
        put(t, buf, i, enc(t, gen(rank, first + i, wide)));
}

/* ---- device buffers ---- */

static void *dev_alloc(struct child *c, size_t bytes)
{
    void *p = NULL;

    if (xpu_malloc(&p, bytes ? bytes : 1) != 0 || !p) {
        fail(c, "xpu_malloc(%zu) failed", bytes);
        exit(100);
    }
    memset(p, 0x5a, bytes);     /* sentinel for "must not be written" */
    return p;
}

static void dev_free(void *p)
{
    xpu_free(p);
}

/* Compares count elements of buf with expected bits from a callback. */
typedef uint64_t (*expect_fn)(const void *arg, size_t i);

static void verify(struct child *c, const char *what, BKCLDataType t,
                   const void *buf, size_t count, expect_fn f,
                   const void *arg)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t want = f(arg, i), got = get(t, buf, i);

        if (got != want) {
            fail(c, "%s: element %zu of %zu is 0x%llx, want 0x%llx", what, i,
                 count, (unsigned long long)got, (unsigned long long)want);
            return;
        }
    }
}

struct expect_args {
    BKCLDataType t;
    BKCLOp op;
    int n;
    int rank;                   /* gen's rank, or block for reduce_scatter */
    size_t first;               /* element offset into the generated data */
    size_t block;               /* all_gather: elements per rank */
    int wide;
};

static uint64_t exp_reduced(const void *arg, size_t i)
{
    const struct expect_args *a = arg;

    return expect_reduce(a->t, a->op, a->n, a->first + i);
}

static uint64_t exp_own(const void *arg, size_t i)
{
    const struct expect_args *a = arg;

    return enc(a->t, gen(a->rank, a->first + i, a->wide));
}

static uint64_t exp_gathered(const void *arg, size_t i)
{
    const struct expect_args *a = arg;

    return enc(a->t, gen((int)(i / a->block), i % a->block, 1));
}

static uint64_t exp_sentinel(const void *arg, size_t i)
{
    const struct expect_args *a = arg;

    (void)i;
    return UINT64_C(0x5a5a5a5a5a5a5a5a) & mask_of(a->t);
}

static void expect_ok(struct child *c, BKCLResult_t rc, const char *what)
{
    if (rc != BKCL_SUCCESS)
        fail(c, "%s returned %d", what, (int)rc);
}

/* ---- collectives ---- */

static void test_all_reduce(struct child *c, BKCLDataType t, BKCLOp op,
                            size_t count, int in_place, const char *what)
{
    size_t bytes = count * dsize(t);
    void *send = dev_alloc(c, bytes);
    void *recv = in_place ? send : dev_alloc(c, bytes);
    struct expect_args a = {t, op, c->n, c->rank, 0, 0, 0};

    fill(t, send, count, c->rank, 0, 0);
    expect_ok(c, bkcl_all_reduce(c->comm, send, recv, count, t, op, NULL),
              what);
    verify(c, what, t, recv, count, exp_reduced, &a);
    if (!in_place)
        verify(c, what, t, send, count, exp_own, &a);
    if (!in_place)
        dev_free(recv);
    dev_free(send);
}

static void test_reduce(struct child *c, BKCLDataType t, BKCLOp op,
                        size_t count, int in_place, int root,
                        const char *what)
{
    size_t bytes = count * dsize(t);
    void *send = dev_alloc(c, bytes);
    void *recv = in_place ? send : dev_alloc(c, bytes);
    struct expect_args a = {t, op, c->n, c->rank, 0, 0, 0};

    fill(t, send, count, c->rank, 0, 0);
    expect_ok(c, bkcl_reduce(c->comm, send, recv, count, t, op, root, NULL),
              what);
    /* Off the root, recvbuf is untouched: the sentinel or our data. */
    verify(c, what, t, recv, count,
           c->rank == root ? exp_reduced : in_place ? exp_own : exp_sentinel,
           &a);
    if (!in_place)
        dev_free(recv);
    dev_free(send);
}

/* mode 0: out of place; 1: recvbuf == sendbuf; 2: NCCL's in-place form
 * recvbuf == sendbuf + rank * recvcount. */
static void test_reduce_scatter(struct child *c, BKCLDataType t, BKCLOp op,
                                size_t count, int mode, const char *what)
{
    size_t es = dsize(t);
    void *send = dev_alloc(c, count * es * (size_t)c->n);
    unsigned char *recv = mode == 0 ? dev_alloc(c, count * es)
                        : mode == 1 ? send
                        : (unsigned char *)send + (size_t)c->rank * count * es;
    struct expect_args a = {t, op, c->n, c->rank, (size_t)c->rank * count,
                            0, 0};

    fill(t, send, count * (size_t)c->n, c->rank, 0, 0);
    expect_ok(c, bkcl_reduce_scatter(c->comm, send, recv, count, t, op,
                                     NULL), what);
    verify(c, what, t, recv, count, exp_reduced, &a);
    if (mode == 0)
        dev_free(recv);
    dev_free(send);
}

static void test_broadcast(struct child *c, BKCLDataType t, size_t count,
                           int in_place, int root, const char *what)
{
    size_t bytes = count * dsize(t);
    void *send = dev_alloc(c, bytes);
    void *recv = in_place ? send : dev_alloc(c, bytes);
    struct expect_args a = {t, BKCL_ADD, c->n, root, 0, 0, 1};

    fill(t, send, count, c->rank, 0, 1);
    expect_ok(c, bkcl_broadcast(c->comm, send, recv, count, t, root, NULL),
              what);
    verify(c, what, t, recv, count, exp_own, &a);
    if (!in_place)
        dev_free(recv);
    dev_free(send);
}

/* mode 0: out of place; 1: sendbuf == recvbuf; 2: NCCL's in-place form
 * sendbuf == recvbuf + rank * sendcount. */
static void test_all_gather(struct child *c, BKCLDataType t, size_t count,
                            int mode, const char *what)
{
    size_t es = dsize(t);
    unsigned char *recv = dev_alloc(c, count * es * (size_t)c->n);
    unsigned char *send = mode == 0 ? dev_alloc(c, count * es)
                        : mode == 1 ? recv
                        : recv + (size_t)c->rank * count * es;
    struct expect_args a = {t, BKCL_ADD, c->n, 0, 0, count, 1};

    fill(t, send, count, c->rank, 0, 1);
    expect_ok(c, bkcl_all_gather(c->comm, send, count, recv, t, NULL), what);
    verify(c, what, t, recv, count * (size_t)c->n, exp_gathered, &a);
    if (mode == 0)
        dev_free(send);
    dev_free(recv);
}

static const char *describe(char *what, size_t size, const char *name,
                            int t, int op, size_t n, const char *how)
{
    snprintf(what, size, "%s %s %s n=%zu %s", name, dtype_names[t],
             op < 0 ? "-" : op_names[op], n, how);
    return what;
}

static void test_collectives(struct child *c)
{
    static const char *const how[3] = {
        "out of place", "in place", "in place (NCCL offset form)",
    };
    char w[160];

    for (int t = 0; t < NUM_DTYPES; t++) {
        size_t sizes[3] = {1, 1000, 3 * (c->chunk / dsize(t)) + 7};

        for (int s = 0; s < 3; s++) {
            size_t n = sizes[s];
            int root = (t + s) % c->n;

            for (int op = 0; op < NUM_OPS; op++) {
                for (int m = 0; m < 3; m++) {
                    if (m < 2) {
                        test_all_reduce(c, t, op, n, m, describe(w, sizeof w,
                                        "all_reduce", t, op, n, how[m]));
                        test_reduce(c, t, op, n, m, (root + op) % c->n,
                                    describe(w, sizeof w, "reduce", t, op, n,
                                             how[m]));
                    }
                    test_reduce_scatter(c, t, op, n, m, describe(w, sizeof w,
                                        "reduce_scatter", t, op, n, how[m]));
                }
            }
            for (int m = 0; m < 3; m++) {
                if (m < 2)
                    test_broadcast(c, t, n, m, root, describe(w, sizeof w,
                                   "broadcast", t, -1, n, how[m]));
                test_all_gather(c, t, n, m, describe(w, sizeof w,
                                "all_gather", t, -1, n, how[m]));
            }
        }
    }
}

/* fp16/bf16 sums round to nearest even: 2048+1 -> 2048, 2050+1 -> 2052;
 * bf16 256+1 -> 256, 258+1 -> 260. Ranks 0 and 1 contribute, others 0. */
static void test_rounding(struct child *c)
{
    static const double own16[2] = {2048, 2050}, want16[2] = {2048, 2052};
    static const double ownbf[2] = {256, 258}, wantbf[2] = {256, 260};
    BKCLDataType types[2] = {BKCL_FLOAT16, BKCL_BFLOAT16};

    if (c->n < 2)
        return;
    for (int k = 0; k < 2; k++) {
        BKCLDataType t = types[k];
        void *buf = dev_alloc(c, 2 * 2);

        for (int i = 0; i < 2; i++) {
            double v = c->rank > 1 ? 0 : c->rank == 1 ? 1
                     : t == BKCL_FLOAT16 ? own16[i] : ownbf[i];
            put(t, buf, (size_t)i, enc_float(t, v));
        }
        expect_ok(c, bkcl_all_reduce(c->comm, buf, buf, 2, t, BKCL_ADD, NULL),
                  "rounding all_reduce");
        for (int i = 0; i < 2; i++) {
            uint64_t want = enc_float(t, k == 0 ? want16[i] : wantbf[i]);

            if (get(t, buf, (size_t)i) != want)
                fail(c, "%s 2-rank sum %d: got 0x%llx want 0x%llx",
                     dtype_names[t], i,
                     (unsigned long long)get(t, buf, (size_t)i),
                     (unsigned long long)want);
        }
        dev_free(buf);
    }
}

/* Inexact float sums: every rank must get the very same bits. Each rank
 * all-gathers its result as bytes and compares them with its own. */
static void test_identical(struct child *c)
{
    size_t count = 5000, bytes = count * sizeof(float);
    float *buf = dev_alloc(c, bytes);
    unsigned char *all = dev_alloc(c, bytes * (size_t)c->n);

    for (size_t i = 0; i < count; i++)
        buf[i] = 0.1f * (float)(c->rank + 1) / (float)(i + 3) + 1e7f *
                 (float)(c->rank % 2);
    expect_ok(c, bkcl_all_reduce(c->comm, buf, buf, count, BKCL_FLOAT,
                                 BKCL_ADD, NULL), "identical all_reduce");
    expect_ok(c, bkcl_all_gather(c->comm, buf, bytes, all, BKCL_UINT8, NULL),
              "identical all_gather");
    for (int r = 0; r < c->n; r++)
        if (memcmp(all + (size_t)r * bytes, buf, bytes) != 0)
            fail(c, "all_reduce result of rank %d differs from ours", r);
    dev_free(all);
    dev_free(buf);
}

/* ---- point to point ---- */

static int32_t a2a_value(int src, int dst, size_t i)
{
    return (int32_t)(src * 1000003 + dst * 1009 + (int)i);
}

/* Everyone sends to all peers (itself included), then receives from all,
 * in one group; blocks are several mailboxes long. */
static void test_all_to_all(struct child *c)
{
    size_t block = c->chunk / 4 + 7;        /* int32 elements per peer */
    int32_t *send = dev_alloc(c, block * 4 * (size_t)c->n);
    int32_t *recv = dev_alloc(c, block * 4 * (size_t)c->n);
    long sends = bkcl_double_calls("bkcl_send");

    for (int p = 0; p < c->n; p++)
        for (size_t i = 0; i < block; i++)
            send[(size_t)p * block + i] = a2a_value(c->rank, p, i);
    expect_ok(c, bkcl_group_start(), "group_start");
    for (int p = 0; p < c->n; p++)
        expect_ok(c, bkcl_send(c->comm, send + (size_t)p * block, block, p,
                               BKCL_INT32, NULL), "grouped send");
    for (int p = 0; p < c->n; p++)
        expect_ok(c, bkcl_recv(c->comm, recv + (size_t)p * block, block, p,
                               BKCL_INT32, NULL), "grouped recv");
    expect_ok(c, bkcl_group_end(), "group_end (all to all)");
    for (int p = 0; p < c->n; p++) {
        for (size_t i = 0; i < block; i++) {
            if (recv[(size_t)p * block + i] != a2a_value(p, c->rank, i)) {
                fail(c, "all to all: element %zu from rank %d wrong", i, p);
                break;
            }
        }
    }
    if (bkcl_double_calls("bkcl_send") != sends + c->n)
        fail(c, "bkcl_double_calls(\"bkcl_send\") did not grow by %d", c->n);
    dev_free(recv);
    dev_free(send);
}

/* Two messages to the right neighbour inside nested groups arrive in
 * order; then a zero-byte message; then a plain (ungrouped) ring. */
static void test_ordering_and_ring(struct child *c)
{
    size_t big = c->chunk + 3;              /* several mailbox chunks */
    int right = (c->rank + 1) % c->n, left = (c->rank + c->n - 1) % c->n;
    int32_t *out = dev_alloc(c, 2 * big * 4), *in = dev_alloc(c, 2 * big * 4);

    for (size_t i = 0; i < 2 * big; i++)
        out[i] = (int32_t)(c->rank * 7777 + (int)i);
    bkcl_group_start();
    bkcl_group_start();
    expect_ok(c, bkcl_send(c->comm, out, big, right, BKCL_INT32, NULL), "A");
    expect_ok(c, bkcl_send(c->comm, out + big, 5, right, BKCL_INT32, NULL),
              "B");
    expect_ok(c, bkcl_group_end(), "inner group_end");
    expect_ok(c, bkcl_recv(c->comm, in, big, left, BKCL_INT32, NULL), "rA");
    expect_ok(c, bkcl_recv(c->comm, in + big, 5, left, BKCL_INT32, NULL),
              "rB");
    expect_ok(c, bkcl_send(c->comm, NULL, 0, right, BKCL_INT32, NULL), "0");
    expect_ok(c, bkcl_recv(c->comm, NULL, 0, left, BKCL_INT32, NULL), "r0");
    expect_ok(c, bkcl_group_end(), "outer group_end");
    for (size_t i = 0; i < big + 5; i++) {
        if (in[i] != (int32_t)(left * 7777 + (int)i)) {
            fail(c, "ordered messages: element %zu wrong", i);
            break;
        }
    }
    if (c->n > 1) {
        /* Even ranks send first, odd ranks receive first: plain calls. */
        memset(in, 0, big * 4);
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == (c->rank % 2 == 0))
                expect_ok(c, bkcl_send(c->comm, out, big, right, BKCL_INT32,
                                       NULL), "ring send");
            else
                expect_ok(c, bkcl_recv(c->comm, in, big, left, BKCL_INT32,
                                       NULL), "ring recv");
        }
        for (size_t i = 0; i < big; i++) {
            if (in[i] != (int32_t)(left * 7777 + (int)i)) {
                fail(c, "ring: element %zu wrong", i);
                break;
            }
        }
    }
    dev_free(in);
    dev_free(out);
}

/* A recv smaller than the matched send fails on the receiver only, and
 * the pair stays usable. */
static void test_size_mismatch(struct child *c)
{
    int32_t *buf = dev_alloc(c, 40);

    if (c->n < 2)
        goto out;
    fprintf(stderr, "# rank %d: an expected size-mismatch message may "
            "follow\n", c->rank);
    if (c->rank == 0) {
        expect_ok(c, bkcl_send(c->comm, buf, 10, 1, BKCL_INT32, NULL),
                  "mismatch send");
        buf[0] = 42;
        expect_ok(c, bkcl_send(c->comm, buf, 1, 1, BKCL_INT32, NULL),
                  "follow-up send");
    } else if (c->rank == 1) {
        if (bkcl_recv(c->comm, buf, 5, 0, BKCL_INT32, NULL) !=
            BKCL_INVALID_ARGUMENT)
            fail(c, "recv of 5 matched with a send of 10 not refused");
        expect_ok(c, bkcl_recv(c->comm, buf, 1, 0, BKCL_INT32, NULL),
                  "follow-up recv");
        if (buf[0] != 42)
            fail(c, "message after a mismatch is %d, want 42", buf[0]);
    }
out:
    dev_free(buf);
}

/* ---- argument errors (every rank fails alike, before any wait) ---- */

static void refuse(struct child *c, BKCLResult_t rc, const char *what)
{
    if (rc != BKCL_INVALID_ARGUMENT)
        fail(c, "%s: got %d, want BKCL_INVALID_ARGUMENT", what, (int)rc);
}

static void test_errors(struct child *c)
{
    void *dev = dev_alloc(c, 64), *other = NULL;
    char host[64];
    int other_dev = (c->rank + MAX_RANKS) % 8;

    fprintf(stderr, "# rank %d: expected argument-error messages follow\n",
            c->rank);
    refuse(c, bkcl_all_reduce(c->comm, host, host, 4, BKCL_FLOAT, BKCL_ADD,
                              NULL), "all_reduce on host memory");
    refuse(c, bkcl_all_reduce(c->comm, dev, dev, 4, (BKCLDataType)99,
                              BKCL_ADD, NULL), "unknown dtype");
    refuse(c, bkcl_all_reduce(c->comm, dev, dev, 4, BKCL_FLOAT, (BKCLOp)99,
                              NULL), "unknown op");
    refuse(c, bkcl_reduce_scatter(c->comm, dev, dev, 1, BKCL_FLOAT,
                                  (BKCLOp)-1, NULL), "unknown op (rs)");
    refuse(c, bkcl_all_reduce(NULL, dev, dev, 4, BKCL_FLOAT, BKCL_ADD, NULL),
           "NULL communicator");
    refuse(c, bkcl_broadcast(c->comm, dev, dev, 4, BKCL_FLOAT, c->n, NULL),
           "broadcast root out of range");
    refuse(c, bkcl_reduce(c->comm, dev, dev, 4, BKCL_FLOAT, BKCL_ADD, -1,
                          NULL), "reduce root out of range");
    refuse(c, bkcl_send(c->comm, dev, 4, c->n, BKCL_FLOAT, NULL),
           "send peer out of range");
    refuse(c, bkcl_recv(c->comm, dev, 4, -1, BKCL_FLOAT, NULL),
           "recv peer out of range");
    refuse(c, bkcl_all_gather(c->comm, NULL, 4, dev, BKCL_FLOAT, NULL),
           "all_gather NULL sendbuf");
    refuse(c, bkcl_group_end(), "group_end without group_start");
    /* Memory of another device is refused too. */
    xpu_set_device(other_dev);
    if (xpu_malloc(&other, 64) != 0)
        fail(c, "xpu_malloc on device %d", other_dev);
    xpu_set_device(c->rank);
    refuse(c, bkcl_all_reduce(c->comm, other, other, 4, BKCL_FLOAT, BKCL_ADD,
                              NULL), "all_reduce on another device");
    xpu_free(other);
    dev_free(dev);
}

/* ---- one rank ---- */

static size_t chunk_bytes(void)
{
    const char *s = getenv("BKCL_DOUBLE_CHUNK_BYTES");

    return s && *s ? (size_t)strtoul(s, NULL, 10) : (size_t)1 << 20;
}

static int child_main(int rank, int n, const BKCLUniqueId *id)
{
    struct child c = {NULL, rank, n, chunk_bytes(), 0};
    long reduces = 0;
    BKCLResult_t rc;

    alarm(CHILD_ALARM_S);
    if (xpu_set_device(rank) != 0)
        return 99;
    rc = bkcl_init_rank(&c.comm, rank, n, id);
    if (rc != BKCL_SUCCESS) {
        fprintf(stderr, "# rank %d: bkcl_init_rank returned %d\n", rank, rc);
        return 98;
    }
    reduces = bkcl_double_calls("bkcl_all_reduce");
    test_collectives(&c);
    /* 3 sizes x 7 types x 4 ops x 2 (in place or not) all_reduce calls. */
    if (bkcl_double_calls("bkcl_all_reduce") - reduces != 3 * 7 * 4 * 2)
        fail(&c, "bkcl_double_calls(\"bkcl_all_reduce\") is %ld",
             bkcl_double_calls("bkcl_all_reduce"));
    if (bkcl_double_calls("bkcl_no_such_call") != -1)
        fail(&c, "bkcl_double_calls of an unknown name is not -1");
    test_rounding(&c);
    test_identical(&c);
    test_all_to_all(&c);
    test_ordering_and_ring(&c);
    test_size_mismatch(&c);
    test_errors(&c);
    expect_ok(&c, bkcl_destroy_context(c.comm), "destroy_context");
    if (xpurt_double_live_allocations() != 0)
        fail(&c, "%ld xpu allocations left", xpurt_double_live_allocations());
    return c.failures > 90 ? 90 : (int)c.failures;
}

/* ---- parent ---- */

static BKCLUniqueId ids[MAX_IDS];
static int nids;

static BKCLUniqueId *new_id(void)
{
    BKCLUniqueId *id = &ids[nids++];

    check(bkcl_get_unique_id(id) == BKCL_SUCCESS &&
          strncmp(id->internal, "/bkcl", 5) == 0, "bkcl_get_unique_id");
    return id;
}

/* Forks one child per entry of devices[] running fn; returns the number of
 * children whose exit status differs from want[r]. */
typedef int (*rank_fn)(int rank, int n, const BKCLUniqueId *id);

static int run_ranks(int n, const BKCLUniqueId *id, rank_fn fn,
                     const int *want, int *status)
{
    pid_t pids[MAX_RANKS];
    int bad = 0;

    fflush(NULL);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(fn(r, n, id));
    }
    for (int r = 0; r < n; r++) {
        int st = 0;

        waitpid(pids[r], &st, 0);
        status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        bad += status[r] != want[r];
    }
    return bad;
}

static int same_device_rank(int rank, int n, const BKCLUniqueId *id)
{
    BKCLContext_t comm = NULL;
    BKCLResult_t rc;

    xpu_set_device(0);
    rc = bkcl_init_rank(&comm, rank, n, id);
    if (rc == BKCL_SUCCESS)
        bkcl_destroy_context(comm);
    return rc;
}

/* Only `rank` of two joins; BKCL_DOUBLE_TIMEOUT=1 makes it give up. */
static int lonely(int rank, const BKCLUniqueId *id)
{
    BKCLContext_t comm = NULL;

    setenv("BKCL_DOUBLE_TIMEOUT", "1", 1);
    xpu_set_device(rank);
    return bkcl_init_rank(&comm, rank, 2, id);
}

static int lonely_rank0(int rank, int n, const BKCLUniqueId *id)
{
    (void)rank, (void)n;
    return lonely(0, id);
}

static int lonely_rank1(int rank, int n, const BKCLUniqueId *id)
{
    (void)rank, (void)n;
    return lonely(1, id);
}

static void *thread_device(void *arg)
{
    int *dev = arg;

    xpu_current_device(dev);
    return NULL;
}

static int device_count_with(const char *visible, const char *forced)
{
    int n = -1;

    unsetenv("XPU_VISIBLE_DEVICES");
    unsetenv("XPU_DOUBLE_DEVICES");
    if (visible)
        setenv("XPU_VISIBLE_DEVICES", visible, 1);
    if (forced)
        setenv("XPU_DOUBLE_DEVICES", forced, 1);
    xpu_device_count(&n);
    return n;
}

static void test_runtime(void)
{
    pd_xpu_pointer_attrs at;
    char host[16] = "host";
    char *p = NULL, copy[16];
    XPUStream s = NULL;
    pthread_t th;
    int dev = -1, tdev = -1;
    long live = xpurt_double_live_allocations();

    check(device_count_with("0,1,5", NULL) == 3, "XPU_VISIBLE_DEVICES list");
    check(device_count_with(" ", "4") == 0, "blank XPU_VISIBLE_DEVICES");
    check(device_count_with(NULL, "2") == 2, "XPU_DOUBLE_DEVICES");
    check(device_count_with(NULL, NULL) == 8, "8 devices by default");
    check(xpu_set_device(8) != 0 && xpu_set_device(-1) != 0,
          "xpu_set_device refuses ids outside [0, count)");
    check(xpu_set_device(3) == 0 && xpu_current_device(&dev) == 0 &&
          dev == 3, "xpu_set_device / xpu_current_device");
    pthread_create(&th, NULL, thread_device, &tdev);
    pthread_join(th, NULL);
    check(tdev == 0, "current device is per thread (new thread: 0)");
    check(xpu_malloc((void **)&p, 100) == 0 && p, "xpu_malloc");
    check(xpurt_double_live_allocations() == live + 1, "live allocations");
    check(xpu_pointer_get_attrs(&at, p) == 0 &&
          at.memory_type == XPU_MEMORY_DEVICE && at.device == 3,
          "attrs of an allocation: device 3");
    check(xpu_pointer_get_attrs(&at, p + 57) == 0 &&
          at.memory_type == XPU_MEMORY_DEVICE && at.device == 3 &&
          xpu_pointer_get_attrs(&at, p + 99) == 0 &&
          at.memory_type == XPU_MEMORY_DEVICE, "attrs of interior pointers");
    check(xpu_pointer_get_attrs(&at, p + 100) == 0 &&
          at.memory_type == XPU_MEMORY_HOST, "attrs one past the end: host");
    check(xpu_pointer_get_attrs(&at, host) == 0 &&
          at.memory_type == XPU_MEMORY_HOST &&
          xpu_pointer_get_attrs(&at, NULL) == 0 &&
          at.memory_type == XPU_MEMORY_HOST, "attrs of host pointers");
    check(xpu_pointer_get_attrs(NULL, p) != 0, "attrs: NULL attrs refused");
    check(xpu_memcpy(p, host, sizeof host, XPU_HOST_TO_DEVICE) == 0 &&
          xpu_memcpy(copy, p, sizeof copy, XPU_DEVICE_TO_HOST) == 0 &&
          strcmp(copy, "host") == 0 &&
          xpu_memcpy(p, host, 1, 7) != 0, "xpu_memcpy");
    check(xpu_stream_create(&s) == 0 && s && xpu_wait(s) == 0 &&
          xpu_stream_destroy(s) == 0, "streams");
    fprintf(stderr, "# an expected xpu_free error message follows\n");
    check(xpu_free(p + 1) != 0 && xpu_free(NULL) == 0 && xpu_free(p) == 0 &&
          xpurt_double_live_allocations() == live,
          "xpu_free: interior pointer refused, then freed");
    check(xpu_pointer_get_attrs(&at, p) == 0 &&
          at.memory_type == XPU_MEMORY_HOST, "attrs after free: host");
    xpu_set_device(0);
}

static void test_init_arguments(void)
{
    BKCLContext_t comm = NULL;
    BKCLUniqueId bogus;

    memset(&bogus, 'x', sizeof bogus);
    check(bkcl_init_rank(&comm, 2, 2, &ids[0]) == BKCL_INVALID_ARGUMENT &&
          bkcl_init_rank(&comm, -1, 2, &ids[0]) == BKCL_INVALID_ARGUMENT &&
          bkcl_init_rank(&comm, 0, 0, &ids[0]) == BKCL_INVALID_ARGUMENT &&
          bkcl_init_rank(NULL, 0, 1, &ids[0]) == BKCL_INVALID_ARGUMENT &&
          bkcl_init_rank(&comm, 0, 1, NULL) == BKCL_INVALID_ARGUMENT &&
          bkcl_get_unique_id(NULL) == BKCL_INVALID_ARGUMENT,
          "bkcl_init_rank refuses bad rank, nranks and NULL pointers");
    fprintf(stderr, "# an expected bad-id message follows\n");
    check(bkcl_init_rank(&comm, 0, 1, &bogus) == BKCL_INVALID_ARGUMENT,
          "bkcl_init_rank refuses an id not from bkcl_get_unique_id");
}

static void test_no_leftovers(void)
{
    int left = 0;

    for (int i = 0; i < nids; i++) {
        char path[600];

        snprintf(path, sizeof path, "/dev/shm%s", ids[i].internal);
        if (access(path, F_OK) == 0 || errno != ENOENT) {
            fprintf(stderr, "# leftover %s\n", path);
            left++;
        }
    }
    check(left == 0, "no shared-memory segment left in /dev/shm (%d ids)",
          nids);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    int want[MAX_RANKS] = {0}, st[MAX_RANKS] = {0}, bad;
    const BKCLUniqueId *id;

    if (n < 1 || n > MAX_RANKS) {
        fprintf(stderr, "usage: %s N (ranks, 1..%d)\n", argv[0], MAX_RANKS);
        return 2;
    }
    test_runtime();
    id = new_id();
    test_init_arguments();
    bad = run_ranks(n, id, child_main, want, st);
    check(bad == 0, "%d ranks: collectives x types x ops, send/recv, errors "
          "(exit codes %d %d %d %d)", n, st[0], st[1], st[2], st[3]);

    want[0] = want[1] = BKCL_INVALID_ARGUMENT;
    fprintf(stderr, "# expected same-device messages follow\n");
    bad = run_ranks(2, new_id(), same_device_rank, want, st);
    check(bad == 0, "two ranks on one device refused (got %d %d)", st[0],
          st[1]);

    fprintf(stderr, "# expected timeout messages follow\n");
    want[0] = BKCL_SYSTEM_ERROR;
    bad = run_ranks(1, new_id(), lonely_rank0, want, st);
    check(bad == 0, "rank 0 of 2 alone times out (got %d)", st[0]);
    bad = run_ranks(1, new_id(), lonely_rank1, want, st);
    check(bad == 0, "rank 1 of 2 without rank 0 times out (got %d)", st[0]);
    test_no_leftovers();
    printf("1..%d\n", tests_run);
    return tests_failed != 0;
}
