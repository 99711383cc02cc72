/*
 * coll_check.c - conformance test for the collectives pdmpi supports.
 *
 * A plain MPI program: it must give the same output under Open MPI's mpirun
 * and under pdmpirun. Every input element is a pure function of
 * (rank, index), so each rank computes the expected result of a collective
 * on its own, with a loop over ranks, without communicating. Values are
 * small integers or multiples of 0.5 or 0.25, so floating-point sums are
 * exact whatever the reduction order.
 *
 * Output is TAP-like and printed by rank 0 only, after the ranks agree on
 * the verdict (MPI_Allreduce MAX of a local failure flag); a failure on
 * another rank is explained by that rank's own message, fetched with a
 * broadcast. The exit status is non-zero when any check failed.
 *
 * Usage: coll_check [--big N]   (N elements for the few large cases,
 *                                default 4 Mi; 0 skips them)
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Element types                                                        */
/* ------------------------------------------------------------------ */

enum c_type {
    C_FLOAT, C_DOUBLE, C_INT, C_LONG, C_LONG_LONG,
    C_UNSIGNED, C_SHORT, C_INT64, C_CHAR, C_BYTE
};

enum type_kind { KIND_FLOATING, KIND_SIGNED, KIND_UNSIGNED, KIND_RAW };

struct elem_type {
    const char *name;
    MPI_Datatype mpi;
    enum c_type ctype;
    enum type_kind kind;
    size_t size;
    const char *alias;   /* another name MPI_Type_get_name may report */
};

#define TYPE_COUNT 10
static struct elem_type types[TYPE_COUNT];

/* Filled at run time rather than statically, so the table does not depend
 * on whether the handles of this mpi.h are address constants. */
static void init_types(void)
{
    const struct elem_type table[TYPE_COUNT] = {
        {"MPI_FLOAT", MPI_FLOAT, C_FLOAT, KIND_FLOATING, sizeof(float), NULL},
        {"MPI_DOUBLE", MPI_DOUBLE, C_DOUBLE, KIND_FLOATING, sizeof(double), NULL},
        {"MPI_INT", MPI_INT, C_INT, KIND_SIGNED, sizeof(int), NULL},
        {"MPI_LONG", MPI_LONG, C_LONG, KIND_SIGNED, sizeof(long), NULL},
        /* MPI_LONG_LONG and MPI_LONG_LONG_INT are one handle in Open MPI. */
        {"MPI_LONG_LONG", MPI_LONG_LONG, C_LONG_LONG, KIND_SIGNED,
         sizeof(long long), "MPI_LONG_LONG_INT"},
        {"MPI_UNSIGNED", MPI_UNSIGNED, C_UNSIGNED, KIND_UNSIGNED,
         sizeof(unsigned), NULL},
        {"MPI_SHORT", MPI_SHORT, C_SHORT, KIND_SIGNED, sizeof(short), NULL},
        {"MPI_INT64_T", MPI_INT64_T, C_INT64, KIND_SIGNED, sizeof(int64_t), NULL},
        {"MPI_CHAR", MPI_CHAR, C_CHAR, KIND_RAW, sizeof(char), NULL},
        {"MPI_BYTE", MPI_BYTE, C_BYTE, KIND_RAW, 1, NULL},
    };
    memcpy(types, table, sizeof(table));
}

/* The standard defines reductions on MPI_CHAR (a character, not a number)
 * and MPI_BYTE only for no arithmetic op, so those two move data only. */
static bool is_reducible(const struct elem_type *t)
{
    return t->kind != KIND_RAW;
}

static void store_elem(const struct elem_type *t, void *buf, size_t i, double v)
{
    switch (t->ctype) {
    case C_FLOAT: ((float *)buf)[i] = (float)v; break;
    case C_DOUBLE: ((double *)buf)[i] = v; break;
    case C_INT: ((int *)buf)[i] = (int)v; break;
    case C_LONG: ((long *)buf)[i] = (long)v; break;
    case C_LONG_LONG: ((long long *)buf)[i] = (long long)v; break;
    case C_UNSIGNED: ((unsigned *)buf)[i] = (unsigned)v; break;
    case C_SHORT: ((short *)buf)[i] = (short)v; break;
    case C_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case C_CHAR: ((char *)buf)[i] = (char)v; break;
    case C_BYTE: ((unsigned char *)buf)[i] = (unsigned char)v; break;
    }
}

static double load_elem(const struct elem_type *t, const void *buf, size_t i)
{
    switch (t->ctype) {
    case C_FLOAT: return ((const float *)buf)[i];
    case C_DOUBLE: return ((const double *)buf)[i];
    case C_INT: return ((const int *)buf)[i];
    case C_LONG: return (double)((const long *)buf)[i];
    case C_LONG_LONG: return (double)((const long long *)buf)[i];
    case C_UNSIGNED: return ((const unsigned *)buf)[i];
    case C_SHORT: return ((const short *)buf)[i];
    case C_INT64: return (double)((const int64_t *)buf)[i];
    case C_CHAR: return ((const char *)buf)[i];
    case C_BYTE: return ((const unsigned char *)buf)[i];
    }
    return NAN;
}

/* ------------------------------------------------------------------ */
/* Reduction ops and deterministic inputs                               */
/* ------------------------------------------------------------------ */

enum op_id { OP_SUM, OP_MAX, OP_MIN, OP_PROD };

struct reduce_op {
    const char *name;
    MPI_Op mpi;
    enum op_id id;
};

#define OP_COUNT 4
static struct reduce_op ops[OP_COUNT];

static void init_ops(void)
{
    const struct reduce_op table[OP_COUNT] = {
        {"MPI_SUM", MPI_SUM, OP_SUM},
        {"MPI_MAX", MPI_MAX, OP_MAX},
        {"MPI_MIN", MPI_MIN, OP_MIN},
        {"MPI_PROD", MPI_PROD, OP_PROD},
    };
    memcpy(ops, table, sizeof(table));
}

/*
 * Input of `rank` at index i for a reduction. Magnitudes stay small so that
 * the result fits an MPI_SHORT at any plausible job size: SUM multiplies by
 * at most 8 * 13 per rank, PROD uses factors in {-1, 1, 2} and only the
 * first 14 ranks contribute a 2. Floating inputs are halves, which sum
 * exactly; PROD keeps integers, which multiply exactly.
 */
static double reduce_input(const struct elem_type *t, enum op_id op,
                           int rank, size_t i)
{
    bool has_sign = t->kind != KIND_UNSIGNED;
    double scale = (t->kind == KIND_FLOATING && op != OP_PROD) ? 0.5 : 1.0;
    long v = 0;

    switch (op) {
    case OP_SUM:
        v = (long)(rank % 8 + 1) * (has_sign ? (long)(i % 13) - 6
                                             : (long)(i % 13) + 1);
        break;
    case OP_MAX:
    case OP_MIN:
        v = (long)((i * 31 + (size_t)rank * 17) % 23);
        if (has_sign)
            v -= 11;
        break;
    case OP_PROD: {
        static const long signed_factors[3] = {1, 2, -1};
        size_t pick = (i * 7 + (size_t)rank * 3) % (has_sign ? 3 : 2);
        v = signed_factors[pick];
        if (rank >= 14 && v == 2)
            v = 1;
        break;
    }
    }
    return (double)v * scale;
}

static double combine(enum op_id op, double acc, double v)
{
    switch (op) {
    case OP_SUM: return acc + v;
    case OP_MAX: return v > acc ? v : acc;
    case OP_MIN: return v < acc ? v : acc;
    case OP_PROD: return acc * v;
    }
    return NAN;
}

static double expected_reduction(const struct elem_type *t, enum op_id op,
                                 int nranks, size_t i)
{
    double acc = reduce_input(t, op, 0, i);
    for (int r = 1; r < nranks; r++)
        acc = combine(op, acc, reduce_input(t, op, r, i));
    return acc;
}

/* Data for the non-reducing collectives: fits a char, and quarters make
 * the floating types carry a fraction too. */
static double pattern_value(const struct elem_type *t, int rank, size_t i)
{
    double v = (double)(((size_t)rank * 31 + i * 7) % 101);
    return t->kind == KIND_FLOATING ? v * 0.25 : v;
}

/* ------------------------------------------------------------------ */
/* Buffers with a canary element after the end                          */
/* ------------------------------------------------------------------ */

#define POISON_BYTE 0xA5

/* count elements plus one trailing element of POISON_BYTE, so a write past
 * the end is seen. */
static void *alloc_buffer(const struct elem_type *t, size_t count)
{
    size_t bytes = (count + 1) * t->size;
    unsigned char *buf = malloc(bytes);
    if (buf == NULL) {
        fprintf(stderr, "coll_check: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(buf, POISON_BYTE, bytes);
    return buf;
}

static bool canary_intact(const struct elem_type *t, const void *buf,
                          size_t count)
{
    const unsigned char *tail = (const unsigned char *)buf + count * t->size;
    for (size_t b = 0; b < t->size; b++)
        if (tail[b] != POISON_BYTE)
            return false;
    return true;
}

/* ------------------------------------------------------------------ */
/* Verdicts and TAP output                                              */
/* ------------------------------------------------------------------ */

#define DETAIL_LEN 256

/* The local outcome of one check: an empty detail means it passed. Only the
 * first problem is kept; it is the one worth reading. */
struct verdict {
    char detail[DETAIL_LEN];
};

static void verdict_fail(struct verdict *v, const char *fmt, ...)
{
    if (v->detail[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
    va_end(ap);
    if (v->detail[0] == '\0')
        strcpy(v->detail, "failed");
}

static void verdict_check_rc(struct verdict *v, const char *call, int rc)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    verdict_fail(v, "%s returned %d (%s)", call, rc, text);
}

static int world_rank, world_size;
static int checks_run, checks_failed;

/* Collective: every rank calls it with its own verdict for the same check. */
static void report(const char *description, const struct verdict *v)
{
    int local_failed = v->detail[0] != '\0';
    int any_failed = 0;
    MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX,
                  MPI_COMM_WORLD);
    checks_run++;

    if (!any_failed) {
        if (world_rank == 0)
            printf("ok %d - %s\n", checks_run, description);
        fflush(stdout);
        return;
    }

    /* Explain the failure as seen by the lowest failing rank. */
    int candidate = local_failed ? world_rank : world_size;
    int first_bad_rank = 0;
    MPI_Allreduce(&candidate, &first_bad_rank, 1, MPI_INT, MPI_MIN,
                  MPI_COMM_WORLD);
    char detail[DETAIL_LEN];
    memcpy(detail, v->detail, sizeof(detail));
    MPI_Bcast(detail, DETAIL_LEN, MPI_CHAR, first_bad_rank, MPI_COMM_WORLD);
    detail[DETAIL_LEN - 1] = '\0';

    checks_failed++;
    if (world_rank == 0)
        printf("not ok %d - %s (rank %d: %s)\n", checks_run, description,
               first_bad_rank, detail);
    fflush(stdout);
}

/* Compares got[0..count) with expected(i); also checks the canary. */
typedef double (*expected_fn)(const struct elem_type *t, const void *ctx,
                              size_t i);

static void verify_elements(struct verdict *v, const struct elem_type *t,
                            const void *got, size_t count, expected_fn expect,
                            const void *ctx)
{
    for (size_t i = 0; i < count; i++) {
        double want = expect(t, ctx, i);
        double have = load_elem(t, got, i);
        if (have != want) {
            verdict_fail(v, "first bad index %zu, got %.17g, expected %.17g",
                         i, have, want);
            return;
        }
    }
    if (!canary_intact(t, got, count))
        verdict_fail(v, "wrote past the end of the %zu-element buffer", count);
}

/* ------------------------------------------------------------------ */
/* Reductions: MPI_Allreduce and MPI_Reduce                             */
/* ------------------------------------------------------------------ */

struct reduce_ctx {
    enum op_id op;
    int rank;     /* whose input, for the send-buffer check */
};

static double expect_reduced(const struct elem_type *t, const void *ctx,
                             size_t i)
{
    const struct reduce_ctx *c = ctx;
    return expected_reduction(t, c->op, world_size, i);
}

static double expect_own_input(const struct elem_type *t, const void *ctx,
                               size_t i)
{
    const struct reduce_ctx *c = ctx;
    return reduce_input(t, c->op, c->rank, i);
}

/* A collective must never write to its send buffer. */
static void verify_send_untouched(struct verdict *v, const struct elem_type *t,
                                  const void *send, size_t count,
                                  const struct reduce_ctx *ctx)
{
    struct verdict sv = {""};
    verify_elements(&sv, t, send, count, expect_own_input, ctx);
    if (sv.detail[0] != '\0')
        verdict_fail(v, "send buffer modified: %s", sv.detail);
}

static void fill_reduce_input(const struct elem_type *t, enum op_id op,
                              void *buf, size_t count)
{
    for (size_t i = 0; i < count; i++)
        store_elem(t, buf, i, reduce_input(t, op, world_rank, i));
}

static void check_allreduce(const struct elem_type *t,
                            const struct reduce_op *op, size_t count,
                            bool in_place)
{
    struct verdict v = {""};
    struct reduce_ctx ctx = {op->id, world_rank};
    void *send = alloc_buffer(t, count);
    void *recv = alloc_buffer(t, count);

    fill_reduce_input(t, op->id, in_place ? recv : send, count);
    int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)count,
                           t->mpi, op->mpi, MPI_COMM_WORLD);
    verdict_check_rc(&v, "MPI_Allreduce", rc);
    verify_elements(&v, t, recv, count, expect_reduced, &ctx);
    if (!in_place)
        verify_send_untouched(&v, t, send, count, &ctx);

    char description[160];
    snprintf(description, sizeof(description),
             "allreduce %s %s count=%zu%s", t->name, op->name, count,
             in_place ? " in-place" : "");
    report(description, &v);
    free(send);
    free(recv);
}

/* Non-roots pass a NULL receive buffer in the in-place variant: it is
 * significant only at the root, and real programs do pass NULL there. */
static void check_reduce(const struct elem_type *t, const struct reduce_op *op,
                         size_t count, int root, bool in_place)
{
    struct verdict v = {""};
    struct reduce_ctx ctx = {op->id, world_rank};
    bool am_root = world_rank == root;
    void *send = alloc_buffer(t, count);
    void *recv = alloc_buffer(t, count);
    const void *send_arg = send;
    void *recv_arg = recv;

    if (in_place && am_root) {
        fill_reduce_input(t, op->id, recv, count);
        send_arg = MPI_IN_PLACE;
    } else {
        fill_reduce_input(t, op->id, send, count);
        if (in_place)
            recv_arg = NULL;
    }
    int rc = MPI_Reduce(send_arg, recv_arg, (int)count, t->mpi, op->mpi, root,
                        MPI_COMM_WORLD);
    verdict_check_rc(&v, "MPI_Reduce", rc);
    if (am_root)
        verify_elements(&v, t, recv, count, expect_reduced, &ctx);
    if (send_arg == send)
        verify_send_untouched(&v, t, send, count, &ctx);

    char description[160];
    snprintf(description, sizeof(description),
             "reduce %s %s count=%zu root=%d%s", t->name, op->name, count,
             root, in_place ? " in-place" : "");
    report(description, &v);
    free(send);
    free(recv);
}

/* ------------------------------------------------------------------ */
/* Data movement: MPI_Bcast and MPI_Allgather                           */
/* ------------------------------------------------------------------ */

struct pattern_ctx {
    int rank;            /* whose pattern, for a single block */
    size_t block;        /* elements per rank, for a gathered buffer */
    bool gathered;
};

static double expect_pattern(const struct elem_type *t, const void *ctx,
                             size_t i)
{
    const struct pattern_ctx *c = ctx;
    if (c->gathered)
        return pattern_value(t, (int)(i / c->block), i % c->block);
    return pattern_value(t, c->rank, i);
}

static void fill_pattern(const struct elem_type *t, int rank, void *buf,
                         size_t count)
{
    for (size_t i = 0; i < count; i++)
        store_elem(t, buf, i, pattern_value(t, rank, i));
}

static void check_bcast(const struct elem_type *t, size_t count, int root)
{
    struct verdict v = {""};
    struct pattern_ctx ctx = {root, 0, false};
    void *buf = alloc_buffer(t, count);

    if (world_rank == root)
        fill_pattern(t, root, buf, count);
    int rc = MPI_Bcast(buf, (int)count, t->mpi, root, MPI_COMM_WORLD);
    verdict_check_rc(&v, "MPI_Bcast", rc);
    verify_elements(&v, t, buf, count, expect_pattern, &ctx);

    char description[160];
    snprintf(description, sizeof(description), "bcast %s count=%zu root=%d",
             t->name, count, root);
    report(description, &v);
    free(buf);
}

/* Broadcasts back to back, nothing between them: more from one root than
 * a root leads before it checks the others' answers (over gloo, coll/
 * agree.h), then from a rank that received a moment before, then from
 * each rank in turn; among them blocks that ride in the agreement in two
 * messages and one too large to ride in it. Every rank checks every
 * broadcast at the end. */
static void check_bcast_runs(void)
{
    enum { RUNS = 60, SMALL = 3, MID = 5000, LARGE = 40000 };
    struct verdict v = {""};
    int *bufs[RUNS];
    size_t counts[RUNS];
    int roots[RUNS];
    for (int i = 0; i < RUNS; i++) {
        counts[i] = i == 45 ? LARGE : i % 7 == 3 ? MID : SMALL;
        roots[i] = i < 20 ? 0 : i < 40 ? world_size - 1 : i % world_size;
        bufs[i] = calloc(counts[i], sizeof(int));
        if (bufs[i] == NULL) {
            fprintf(stderr, "coll_check: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (world_rank == roots[i])
            for (size_t j = 0; j < counts[i]; j++)
                bufs[i][j] = i * 100000 + (int)j;
    }
    for (int i = 0; i < RUNS; i++)
        verdict_check_rc(&v, "MPI_Bcast",
                         MPI_Bcast(bufs[i], (int)counts[i], MPI_INT, roots[i],
                                   MPI_COMM_WORLD));
    for (int i = 0; i < RUNS; i++) {
        for (size_t j = 0; j < counts[i]; j++)
            if (bufs[i][j] != i * 100000 + (int)j) {
                verdict_fail(&v, "broadcast %d (root %d, %zu ints): element "
                             "%zu is %d, want %d", i, roots[i], counts[i], j,
                             bufs[i][j], i * 100000 + (int)j);
                break;
            }
        free(bufs[i]);
    }
    report("bcast: 60 back to back from rank 0, the last rank, each in turn",
           &v);
}

/* In place, the send count and type are ignored by the standard; passing
 * 0 and MPI_DATATYPE_NULL, as many programs do, checks that they are. */
static void check_allgather(const struct elem_type *t, size_t count,
                            bool in_place)
{
    struct verdict v = {""};
    struct pattern_ctx ctx = {0, count, true};
    size_t total = count * (size_t)world_size;
    void *send = alloc_buffer(t, count);
    void *recv = alloc_buffer(t, total);
    unsigned char *own_block = (unsigned char *)recv
                               + (size_t)world_rank * count * t->size;
    int rc;

    if (in_place) {
        fill_pattern(t, world_rank, own_block, count);
        rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv,
                           (int)count, t->mpi, MPI_COMM_WORLD);
    } else {
        fill_pattern(t, world_rank, send, count);
        rc = MPI_Allgather(send, (int)count, t->mpi, recv, (int)count, t->mpi,
                           MPI_COMM_WORLD);
    }
    verdict_check_rc(&v, "MPI_Allgather", rc);
    verify_elements(&v, t, recv, total, expect_pattern, &ctx);

    char description[160];
    snprintf(description, sizeof(description), "allgather %s count=%zu%s",
             t->name, count, in_place ? " in-place" : "");
    report(description, &v);
    free(send);
    free(recv);
}

/* ------------------------------------------------------------------ */
/* Barrier                                                              */
/* ------------------------------------------------------------------ */

static void sleep_seconds(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Rank 0 arrives late; every other rank must wait for it. The bound is
 * loose (a third of the delay) because the ranks leave the preceding
 * barrier at slightly different times. */
static void check_barrier_waits_for_late_rank(void)
{
    const double delay = 0.3;
    struct verdict v = {""};

    verdict_check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    double start = MPI_Wtime();
    if (world_rank == 0)
        sleep_seconds(delay);
    verdict_check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    double waited = MPI_Wtime() - start;
    if (world_rank != 0 && waited < delay / 3)
        verdict_fail(&v, "left the barrier after %.3f s, rank 0 arrived "
                     "after %.3f s", waited, delay);
    report("barrier waits for a late rank", &v);
}

static void check_many_barriers(void)
{
    struct verdict v = {""};
    for (int i = 0; i < 200; i++)
        verdict_check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    report("200 consecutive barriers", &v);
}

/* ------------------------------------------------------------------ */
/* Bitwise agreement of a floating sum that is not exact                */
/* ------------------------------------------------------------------ */

static uint64_t fnv1a_64(const void *data, size_t bytes)
{
    const unsigned char *p = data;
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < bytes; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

/* Rounding makes the result depend on the reduction order, so the value
 * cannot be predicted; but every rank must hold the same bits, or a
 * data-parallel trainer's replicas drift apart. */
static void check_sum_is_bitwise_identical(const struct elem_type *t,
                                           size_t count)
{
    struct verdict v = {""};
    void *send = alloc_buffer(t, count);
    void *recv = alloc_buffer(t, count);

    for (size_t i = 0; i < count; i++)
        store_elem(t, send, i, sin((double)world_rank * 1e5 + (double)i)
                                   * (1.0 + (double)(i % 7) / 3.0));
    int rc = MPI_Allreduce(send, recv, (int)count, t->mpi, MPI_SUM,
                           MPI_COMM_WORLD);
    verdict_check_rc(&v, "MPI_Allreduce", rc);

    uint64_t mine = fnv1a_64(recv, count * t->size);
    uint64_t *all = calloc((size_t)world_size, sizeof(*all));
    rc = MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all,
                       (int)sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
    verdict_check_rc(&v, "MPI_Allgather", rc);
    for (int r = 0; r < world_size; r++)
        if (all[r] != all[0])
            verdict_fail(&v, "rank %d holds hash %016llx, rank 0 %016llx", r,
                         (unsigned long long)all[r],
                         (unsigned long long)all[0]);

    char description[160];
    snprintf(description, sizeof(description),
             "allreduce %s MPI_SUM count=%zu of inexact values is bitwise "
             "identical on all ranks", t->name, count);
    report(description, &v);
    free(all);
    free(send);
    free(recv);
}

/* ------------------------------------------------------------------ */
/* Environment queries                                                  */
/* ------------------------------------------------------------------ */

static void check_world_layout(void)
{
    struct verdict v = {""};
    int *ranks = calloc((size_t)world_size, sizeof(int));
    int *sizes = calloc((size_t)world_size, sizeof(int));

    verdict_check_rc(&v, "MPI_Allgather",
                     MPI_Allgather(&world_rank, 1, MPI_INT, ranks, 1, MPI_INT,
                                   MPI_COMM_WORLD));
    verdict_check_rc(&v, "MPI_Allgather",
                     MPI_Allgather(&world_size, 1, MPI_INT, sizes, 1, MPI_INT,
                                   MPI_COMM_WORLD));
    for (int r = 0; r < world_size; r++) {
        if (ranks[r] != r)
            verdict_fail(&v, "slot %d holds rank %d", r, ranks[r]);
        if (sizes[r] != world_size)
            verdict_fail(&v, "rank %d reports size %d", r, sizes[r]);
    }
    report("ranks are 0..size-1 and all agree on the size", &v);
    free(ranks);
    free(sizes);
}

static void check_init_state(void)
{
    struct verdict v = {""};
    int initialized = 0, finalized = 1;
    verdict_check_rc(&v, "MPI_Initialized", MPI_Initialized(&initialized));
    verdict_check_rc(&v, "MPI_Finalized", MPI_Finalized(&finalized));
    if (!initialized)
        verdict_fail(&v, "MPI_Initialized says false");
    if (finalized)
        verdict_fail(&v, "MPI_Finalized says true");
    report("MPI_Initialized true and MPI_Finalized false after MPI_Init", &v);
}

static void check_version_queries(void)
{
    struct verdict v = {""};
    int version = 0, subversion = 0, len = -1;
    char library[MPI_MAX_LIBRARY_VERSION_STRING];

    verdict_check_rc(&v, "MPI_Get_version",
                     MPI_Get_version(&version, &subversion));
    if (version < 3)
        verdict_fail(&v, "MPI_Get_version says %d.%d", version, subversion);
    verdict_check_rc(&v, "MPI_Get_library_version",
                     MPI_Get_library_version(library, &len));
    /* The standard puts the terminating NUL at library[len]; Open MPI 4.1
     * counts the NUL in len. Both are accepted so one output fits both. */
    size_t printable = strlen(library);
    if (printable == 0
        || (len != (int)printable && len != (int)printable + 1))
        verdict_fail(&v, "library version length %d for \"%s\"", len, library);
    report("MPI_Get_version >= 3 and MPI_Get_library_version non-empty", &v);
}

static void check_processor_name(void)
{
    struct verdict v = {""};
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = -1;
    verdict_check_rc(&v, "MPI_Get_processor_name",
                     MPI_Get_processor_name(name, &len));
    if (len <= 0 || (size_t)len != strlen(name))
        verdict_fail(&v, "processor name length %d for \"%s\"", len, name);
    report("MPI_Get_processor_name non-empty", &v);
}

static void check_clock(void)
{
    struct verdict v = {""};
    double tick = MPI_Wtick();
    if (!(tick > 0.0 && tick <= 1.0))
        verdict_fail(&v, "MPI_Wtick is %g", tick);
    double previous = MPI_Wtime();
    for (int i = 0; i < 10000; i++) {
        double now = MPI_Wtime();
        if (now < previous) {
            verdict_fail(&v, "MPI_Wtime went back from %.9f to %.9f",
                         previous, now);
            break;
        }
        previous = now;
    }
    report("MPI_Wtick in (0, 1] and MPI_Wtime never goes back", &v);
}

static void check_type_queries(void)
{
    struct verdict v = {""};
    for (int k = 0; k < TYPE_COUNT; k++) {
        const struct elem_type *t = &types[k];
        int size = -1, len = -1;
        char name[MPI_MAX_OBJECT_NAME] = "";
        verdict_check_rc(&v, "MPI_Type_size", MPI_Type_size(t->mpi, &size));
        if (size != (int)t->size)
            verdict_fail(&v, "MPI_Type_size(%s) is %d, expected %zu",
                         t->name, size, t->size);
        verdict_check_rc(&v, "MPI_Type_get_name",
                         MPI_Type_get_name(t->mpi, name, &len));
        bool known = strcmp(name, t->name) == 0
                     || (t->alias != NULL && strcmp(name, t->alias) == 0);
        if (!known || (size_t)len != strlen(name))
            verdict_fail(&v, "MPI_Type_get_name(%s) gave \"%s\" (length %d)",
                         t->name, name, len);
    }
    report("MPI_Type_size and MPI_Type_get_name of every tested type", &v);
}

/* ------------------------------------------------------------------ */
/* The test plan                                                        */
/* ------------------------------------------------------------------ */

static const size_t small_counts[] = {0, 1, 7, 1009};
#define SMALL_COUNT_N (sizeof(small_counts) / sizeof(small_counts[0]))

static void run_small_reductions(void)
{
    for (int k = 0; k < TYPE_COUNT; k++) {
        if (!is_reducible(&types[k]))
            continue;
        for (int o = 0; o < OP_COUNT; o++)
            for (size_t c = 0; c < SMALL_COUNT_N; c++)
                for (int in_place = 0; in_place <= 1; in_place++)
                    check_allreduce(&types[k], &ops[o], small_counts[c],
                                    in_place);
    }
    for (int k = 0; k < TYPE_COUNT; k++) {
        if (!is_reducible(&types[k]))
            continue;
        for (int o = 0; o < OP_COUNT; o++)
            for (size_t c = 0; c < SMALL_COUNT_N; c++)
                for (int root = 0; root < world_size; root++)
                    for (int in_place = 0; in_place <= 1; in_place++)
                        check_reduce(&types[k], &ops[o], small_counts[c],
                                     root, in_place);
    }
}

static void run_small_data_movement(void)
{
    for (int k = 0; k < TYPE_COUNT; k++)
        for (size_t c = 0; c < SMALL_COUNT_N; c++)
            for (int root = 0; root < world_size; root++)
                check_bcast(&types[k], small_counts[c], root);
    for (int k = 0; k < TYPE_COUNT; k++)
        for (size_t c = 0; c < SMALL_COUNT_N; c++)
            for (int in_place = 0; in_place <= 1; in_place++)
                check_allgather(&types[k], small_counts[c], in_place);
}

static const struct elem_type *type_named(const char *name)
{
    for (int k = 0; k < TYPE_COUNT; k++)
        if (strcmp(types[k].name, name) == 0)
            return &types[k];
    return NULL;
}

/* A few multi-megabyte cases: enough to cross any eager/rendezvous or
 * chunking threshold, few enough to keep the run short on small machines. */
static void run_big_cases(size_t big)
{
    const struct elem_type *f = type_named("MPI_FLOAT");
    const struct elem_type *d = type_named("MPI_DOUBLE");
    const struct elem_type *i = type_named("MPI_INT");
    int last = world_size - 1;

    check_allreduce(f, &ops[OP_SUM], big, false);
    check_allreduce(f, &ops[OP_SUM], big, true);
    check_allreduce(d, &ops[OP_SUM], big, true);
    check_allreduce(i, &ops[OP_MAX], big, false);
    check_reduce(f, &ops[OP_SUM], big, 0, true);
    check_reduce(i, &ops[OP_MIN], big, last, false);
    check_bcast(f, big, 0);
    check_bcast(d, big, last);
    check_allgather(f, big / (size_t)world_size, false);
    check_allgather(i, big / (size_t)world_size, true);
}

static size_t parse_big_count(int argc, char **argv)
{
    size_t big = (size_t)4 << 20;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--big") == 0 && a + 1 < argc) {
            big = strtoull(argv[++a], NULL, 0);
        } else {
            if (world_rank == 0)
                fprintf(stderr, "usage: coll_check [--big N]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (big > 0x7fffffff) {
        if (world_rank == 0)
            fprintf(stderr, "coll_check: --big must fit an int\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return big;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    init_types();
    init_ops();
    size_t big = parse_big_count(argc, argv);

    if (world_rank == 0)
        printf("# coll_check on %d rank(s), big count %zu\n", world_size, big);

    check_init_state();
    check_world_layout();
    check_version_queries();
    check_processor_name();
    check_clock();
    check_type_queries();
    check_barrier_waits_for_late_rank();
    check_many_barriers();
    check_bcast_runs();

    run_small_reductions();
    run_small_data_movement();
    check_sum_is_bitwise_identical(type_named("MPI_FLOAT"), 1009);
    check_sum_is_bitwise_identical(type_named("MPI_DOUBLE"), 1009);
    if (big > 0) {
        run_big_cases(big);
        check_sum_is_bitwise_identical(type_named("MPI_FLOAT"), big);
    }

    MPI_Finalize();

    /* Checked locally: no collective is possible any more. */
    int finalized = 0;
    MPI_Finalized(&finalized);
    checks_run++;
    if (!finalized)
        checks_failed++;
    if (world_rank == 0) {
        printf("%sok %d - MPI_Finalized true after MPI_Finalize\n",
               finalized ? "" : "not ", checks_run);
        printf("1..%d\n", checks_run);
        if (checks_failed > 0)
            printf("# %d of %d checks failed\n", checks_failed, checks_run);
    }
    return checks_failed > 0 ? 1 : 0;
}
