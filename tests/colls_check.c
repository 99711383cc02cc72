/*
 * colls_check.c - the collectives beyond allreduce/reduce/bcast/allgather:
 * MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv, MPI_Allgatherv,
 * MPI_Alltoall, MPI_Alltoallv, MPI_Reduce_scatter,
 * MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan.
 *
 * A plain MPI program: it must give the same output under Open MPI's
 * mpirun and under pdmpirun. Every element sent is a pure function of
 * (source rank, destination rank, index), and every reduction input of
 * (rank, index), so each rank computes the whole expected image of its
 * receive buffer on its own, without communicating. Receive buffers have
 * poisoned guard elements before and after, and every element the call
 * must not write (gaps between displacements, the buffers of non-roots)
 * must still hold the poison afterwards. Send buffers must be unchanged.
 *
 * Each collective is run with every root, with MPI_IN_PLACE wherever the
 * standard allows it, with zero counts (all ranks, and some ranks only in
 * the v-variants), with displacements that leave gaps and reverse the
 * rank order, with MPI_INT, MPI_DOUBLE and the pair type MPI_DOUBLE_INT,
 * and with different but matching type signatures (4 x MPI_INT on one
 * side, 1 x a contiguous type of 4 MPI_INT on the other).
 *
 * Output is TAP-like and printed by rank 0 only, after the ranks agree on
 * the verdict; the exit status is non-zero when any check failed. The run
 * uses MPI_ERRORS_RETURN, so a refused call is a failed check.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap_harness.h"

/* ------------------------------------------------------------------ */
/* Element types and values                                             */
/* ------------------------------------------------------------------ */

enum ekind { E_INT, E_DOUBLE, E_PAIR };

struct double_int { double v; int i; };

struct etype {
    const char *name;
    MPI_Datatype mpi;
    enum ekind kind;
    size_t extent;
};

/* How a call describes its data: the element type itself, or (MPI_INT
 * only) a contiguous type of 4 of them. `per` is elements per unit. */
struct unit {
    const char *name;
    MPI_Datatype mpi;
    int per;
};

static struct etype t_int, t_double, t_pair;
static struct unit unit_int, unit_double, unit_pair, unit_quad;

static void init_types(void)
{
    struct etype i = {"MPI_INT", MPI_INT, E_INT, sizeof(int)};
    struct etype d = {"MPI_DOUBLE", MPI_DOUBLE, E_DOUBLE, sizeof(double)};
    struct etype p = {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, E_PAIR,
                      sizeof(struct double_int)};
    t_int = i;
    t_double = d;
    t_pair = p;
    struct unit ui = {"MPI_INT", MPI_INT, 1};
    struct unit ud = {"MPI_DOUBLE", MPI_DOUBLE, 1};
    struct unit up = {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, 1};
    unit_int = ui;
    unit_double = ud;
    unit_pair = up;
    MPI_Datatype quad;
    MPI_Type_contiguous(4, MPI_INT, &quad);
    MPI_Type_commit(&quad);
    struct unit uq = {"contiguous(4 x MPI_INT)", quad, 4};
    unit_quad = uq;
}

static struct unit plain_unit(const struct etype *e)
{
    return e->kind == E_INT ? unit_int : e->kind == E_DOUBLE ? unit_double : unit_pair;
}

#define POISON_BYTE 0xA5
#define GUARD 2   /* poisoned elements before and after every buffer */

/* The value sent from src to dst at index idx. */
static void put_data(const struct etype *e, void *buf, size_t slot, int src,
                     int dst, int idx)
{
    unsigned char *p = (unsigned char *)buf + slot * e->extent;
    long base = (long)src * 1000003L + (long)dst * 1009L + idx;
    switch (e->kind) {
    case E_INT: {
        int v = (int)base;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case E_DOUBLE: {
        double v = (double)base + 0.5;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case E_PAIR: {
        /* Fields only: the padding keeps whatever the buffer held. */
        double v = (double)base + 0.25;
        int i = src * 7 + idx;
        memcpy(p + offsetof(struct double_int, v), &v, sizeof(v));
        memcpy(p + offsetof(struct double_int, i), &i, sizeof(i));
        break;
    }
    }
}

/* Compares the fields of two elements. */
static bool same_elem(const struct etype *e, const void *a, const void *b)
{
    switch (e->kind) {
    case E_INT:
        return memcmp(a, b, sizeof(int)) == 0;
    case E_DOUBLE: {
        double x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return x == y;
    }
    case E_PAIR: {
        struct double_int x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return x.v == y.v && x.i == y.i;
    }
    }
    return false;
}

static void format_elem(const struct etype *e, const void *p, char *out,
                        size_t len)
{
    switch (e->kind) {
    case E_INT: {
        int v;
        memcpy(&v, p, sizeof(v));
        snprintf(out, len, "%d", v);
        break;
    }
    case E_DOUBLE: {
        double v;
        memcpy(&v, p, sizeof(v));
        snprintf(out, len, "%.17g", v);
        break;
    }
    case E_PAIR: {
        struct double_int v;
        memcpy(&v, p, sizeof(v));
        snprintf(out, len, "(%.17g, %d)", v.v, v.i);
        break;
    }
    }
}

/* ------------------------------------------------------------------ */
/* Buffers with guards, and their expected images                       */
/* ------------------------------------------------------------------ */

/* n elements between GUARD poisoned elements on each side; the result
 * points at element 0. NULL-safe to free with free_buf. */
static void *alloc_buf(const struct etype *e, size_t n)
{
    size_t bytes = (n + 2 * GUARD) * e->extent;
    unsigned char *base = malloc(bytes);
    if (base == NULL) {
        fprintf(stderr, "colls_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(base, POISON_BYTE, bytes);
    return base + GUARD * e->extent;
}

static void free_buf(const struct etype *e, void *buf)
{
    if (buf != NULL)
        free((unsigned char *)buf - GUARD * e->extent);
}

/* What a buffer must hold: elements marked in `set` equal the element at
 * the same place in `want`, all others (and the guards) are poison. */
struct image {
    const struct etype *e;
    size_t n;
    void *want;
    bool *set;
};

static struct image image_new(const struct etype *e, size_t n)
{
    struct image im = {e, n, alloc_buf(e, n), calloc(n + 1, sizeof(bool))};
    return im;
}

static void image_free(struct image *im)
{
    free_buf(im->e, im->want);
    free(im->set);
}

static void image_data(struct image *im, size_t slot, int src, int dst,
                       int idx)
{
    put_data(im->e, im->want, slot, src, dst, idx);
    im->set[slot] = true;
}

static bool is_poison(const void *p, size_t bytes)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < bytes; k++)
        if (b[k] != POISON_BYTE)
            return false;
    return true;
}

static void verify_image(struct verdict *v, const struct image *im,
                         const void *buf, const char *what)
{
    const struct etype *e = im->e;
    const unsigned char *p = buf;
    if (!is_poison(p - GUARD * e->extent, GUARD * e->extent)) {
        fail(v, "%s: wrote before the start of the buffer", what);
        return;
    }
    if (!is_poison(p + im->n * e->extent, GUARD * e->extent)) {
        fail(v, "%s: wrote past the end of the %zu-element buffer", what,
             im->n);
        return;
    }
    for (size_t k = 0; k < im->n; k++) {
        const unsigned char *got = p + k * e->extent;
        const unsigned char *want = (const unsigned char *)im->want
                                    + k * e->extent;
        if (!im->set[k]) {
            if (!is_poison(got, e->extent)) {
                fail(v, "%s: element %zu, which is not to be written, was "
                     "changed", what, k);
                return;
            }
        } else if (!same_elem(e, got, want)) {
            char g[64], w[64];
            format_elem(e, got, g, sizeof(g));
            format_elem(e, want, w, sizeof(w));
            fail(v, "%s: element %zu is %s, expected %s", what, k, g, w);
            return;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Counts and displacements                                             */
/* ------------------------------------------------------------------ */

/* Every type runs the patterns before CP_PATTERNS; CP_CHUNKS, blocks of
 * more than one shared-memory chunk, runs for int only. */
enum count_pattern {
    CP_MIXED, CP_ZERO, CP_LARGE, CP_PATTERNS, CP_CHUNKS = CP_PATTERNS
};
static const char *count_pattern_names[CP_CHUNKS + 1] = {
    "counts 0..3 (some ranks 0)", "all counts 0", "large counts (some 0)",
    "blocks of 360 KB and more (some 0)"
};

/* Elements contributed by rank r. */
static int count_of(enum count_pattern cp, int r)
{
    switch (cp) {
    case CP_MIXED: return (r * 3 + 1) % 4;
    case CP_ZERO: return 0;
    case CP_LARGE: return r % 3 == 1 ? 0 : 700 + 50 * r;
    /* Over a 256 KiB chunk and a piece of another; at np 2 rank 1's
     * second piece is 128 KiB or more (written with non-temporal stores
     * there), rank 0's is not. */
    case CP_CHUNKS: return r % 3 == 2 ? 0 : 90001 + 12289 * r;
    default: return 0;
    }
}

enum layout { L_PACKED, L_REVERSED_GAPS, L_LAYOUTS };
static const char *layout_names[L_LAYOUTS] = {
    "packed displacements", "reversed displacements with gaps"
};

/* displs[] (in elements) for counts[] of n ranks; returns the length of
 * the whole buffer. Reversed: rank n-1 first, one unit before the first
 * block and two after every block left unused (a unit is gap elements, so
 * that displacements stay multiples of a derived type's size). */
static size_t make_displs(enum layout l, int n, const int *counts,
                          int *displs, int gap)
{
    size_t at = 0;
    if (l == L_PACKED) {
        for (int r = 0; r < n; r++) {
            displs[r] = (int)at;
            at += (size_t)counts[r];
        }
        return at;
    }
    at = (size_t)gap;
    for (int r = n - 1; r >= 0; r--) {
        displs[r] = (int)at;
        at += (size_t)counts[r] + 2 * (size_t)gap;
    }
    return at;
}

/* ------------------------------------------------------------------ */
/* Gather and Scatter                                                   */
/* ------------------------------------------------------------------ */

/* count is in elements per rank, a multiple of both units' sizes. With
 * in_place, the root passes MPI_IN_PLACE and non-roots a NULL receive
 * buffer; otherwise non-roots pass a buffer that must stay untouched. */
static void check_gather(const struct etype *e, struct unit su,
                         struct unit ru, int count)
{
    struct verdict v = {""};
    bool units_differ = su.per != ru.per;
    for (int root = 0; root < world_size; root++) {
        for (int in_place = 0; in_place <= 1; in_place++) {
            char what[64];
            snprintf(what, sizeof(what), "root %d%s", root,
                     in_place ? " in place" : "");
            bool am_root = world_rank == root;
            size_t total = (size_t)count * (size_t)world_size;
            void *send = alloc_buf(e, (size_t)count);
            void *recv = alloc_buf(e, am_root || !in_place ? total : 0);
            struct image sim = image_new(e, (size_t)count);
            struct image rim = image_new(e, total);
            for (int k = 0; k < count; k++) {
                put_data(e, send, (size_t)k, world_rank, 0, k);
                image_data(&sim, (size_t)k, world_rank, 0, k);
            }
            if (am_root)
                for (int r = 0; r < world_size; r++)
                    for (int k = 0; k < count; k++)
                        image_data(&rim, (size_t)r * (size_t)count + (size_t)k,
                                   r, 0, k);
            const void *send_arg = send;
            void *recv_arg = recv;
            if (in_place && am_root) {
                for (int k = 0; k < count; k++)
                    put_data(e, recv, (size_t)root * (size_t)count + (size_t)k,
                             root, 0, k);
                send_arg = MPI_IN_PLACE;
            } else if (in_place) {
                recv_arg = NULL;
            }
            /* In place, the root's send count and type are ignored. */
            int scount = count / su.per;
            MPI_Datatype stype = su.mpi;
            if (send_arg == MPI_IN_PLACE) {
                scount = 0;
                stype = MPI_DATATYPE_NULL;
            }
            int rc = MPI_Gather(send_arg, scount, stype, recv_arg,
                                count / ru.per, ru.mpi, root, MPI_COMM_WORLD);
            check_rc(&v, "MPI_Gather", rc);
            if (rc == MPI_SUCCESS) {
                if (am_root || !in_place)
                    verify_image(&v, &rim, recv, what);
                if (send_arg == send)
                    verify_image(&v, &sim, send, what);
            }
            image_free(&sim);
            image_free(&rim);
            free_buf(e, send);
            free_buf(e, recv);
            if (units_differ)
                break;   /* in place has one type only */
        }
    }
    if (units_differ)
        report(&v, "gather %d x %s into %d x %s at every root", count / su.per,
               su.name, count / ru.per, ru.name);
    else
        report(&v, "gather %s count %d at every root (also in place)",
               ru.name, count / ru.per);
}

/* Non-roots pass NULL send buffers in the in-place variant. In place, the
 * root passes MPI_IN_PLACE as its receive buffer and keeps its block in
 * the send buffer. */
static void check_scatter(const struct etype *e, struct unit su,
                          struct unit ru, int count)
{
    struct verdict v = {""};
    bool units_differ = su.per != ru.per;
    for (int root = 0; root < world_size; root++) {
        for (int in_place = 0; in_place <= 1; in_place++) {
            char what[64];
            snprintf(what, sizeof(what), "root %d%s", root,
                     in_place ? " in place" : "");
            bool am_root = world_rank == root;
            size_t total = (size_t)count * (size_t)world_size;
            void *send = alloc_buf(e, total);
            void *recv = alloc_buf(e, (size_t)count);
            struct image sim = image_new(e, total);
            struct image rim = image_new(e, (size_t)count);
            if (am_root)
                for (int r = 0; r < world_size; r++)
                    for (int k = 0; k < count; k++) {
                        size_t slot = (size_t)r * (size_t)count + (size_t)k;
                        put_data(e, send, slot, root, r, k);
                        image_data(&sim, slot, root, r, k);
                    }
            bool recv_written = !(in_place && am_root);
            if (recv_written)
                for (int k = 0; k < count; k++)
                    image_data(&rim, (size_t)k, root, world_rank, k);
            const void *send_arg = send;
            void *recv_arg = recv;
            int rcount = count / ru.per;
            MPI_Datatype rtype = ru.mpi;
            if (in_place && am_root) {
                recv_arg = MPI_IN_PLACE;
                rcount = 0;
                rtype = MPI_DATATYPE_NULL;
            } else if (in_place) {
                send_arg = NULL;
            }
            int rc = MPI_Scatter(send_arg, count / su.per, su.mpi, recv_arg,
                                 rcount, rtype, root, MPI_COMM_WORLD);
            check_rc(&v, "MPI_Scatter", rc);
            if (rc == MPI_SUCCESS) {
                verify_image(&v, &rim, recv, what);
                verify_image(&v, &sim, send, what);
            }
            image_free(&sim);
            image_free(&rim);
            free_buf(e, send);
            free_buf(e, recv);
            if (units_differ)
                break;
        }
    }
    if (units_differ)
        report(&v, "scatter %d x %s into %d x %s from every root",
               count / su.per, su.name, count / ru.per, ru.name);
    else
        report(&v, "scatter %s count %d from every root (also in place)",
               ru.name, count / ru.per);
}

/* scale multiplies the pattern's counts (4 for the quad unit). */
static void check_gatherv(const struct etype *e, struct unit su,
                          struct unit ru, enum count_pattern cp,
                          enum layout l, int scale)
{
    struct verdict v = {""};
    bool units_differ = su.per != ru.per;
    int *counts = calloc((size_t)world_size, sizeof(int));
    int *displs = calloc((size_t)world_size, sizeof(int));
    int *rcounts = calloc((size_t)world_size, sizeof(int));
    int *rdispls = calloc((size_t)world_size, sizeof(int));
    for (int r = 0; r < world_size; r++)
        counts[r] = count_of(cp, r) * scale;
    size_t total = make_displs(l, world_size, counts, displs, scale);
    for (int r = 0; r < world_size; r++) {
        rcounts[r] = counts[r] / ru.per;
        rdispls[r] = displs[r] / ru.per;
    }
    int mine = counts[world_rank];

    for (int root = 0; root < world_size; root++) {
        for (int in_place = 0; in_place <= 1; in_place++) {
            char what[64];
            snprintf(what, sizeof(what), "root %d%s", root,
                     in_place ? " in place" : "");
            bool am_root = world_rank == root;
            void *send = alloc_buf(e, (size_t)mine);
            void *recv = alloc_buf(e, total);
            struct image sim = image_new(e, (size_t)mine);
            struct image rim = image_new(e, total);
            for (int k = 0; k < mine; k++) {
                put_data(e, send, (size_t)k, world_rank, 0, k);
                image_data(&sim, (size_t)k, world_rank, 0, k);
            }
            if (am_root)
                for (int r = 0; r < world_size; r++)
                    for (int k = 0; k < counts[r]; k++)
                        image_data(&rim, (size_t)displs[r] + (size_t)k, r, 0,
                                   k);
            const void *send_arg = send;
            void *recv_arg = recv;
            const int *rc_arg = rcounts, *rd_arg = rdispls;
            int scount = mine / su.per;
            MPI_Datatype stype = su.mpi;
            if (in_place && am_root) {
                for (int k = 0; k < mine; k++)
                    put_data(e, recv, (size_t)displs[root] + (size_t)k, root,
                             0, k);
                send_arg = MPI_IN_PLACE;
                scount = 0;
                stype = MPI_DATATYPE_NULL;
            } else if (in_place) {
                /* Not significant at non-roots. */
                recv_arg = NULL;
                rc_arg = NULL;
                rd_arg = NULL;
            }
            int rc = MPI_Gatherv(send_arg, scount, stype, recv_arg, rc_arg,
                                 rd_arg, ru.mpi, root, MPI_COMM_WORLD);
            check_rc(&v, "MPI_Gatherv", rc);
            if (rc == MPI_SUCCESS) {
                verify_image(&v, &rim, recv, what);
                if (send_arg == send)
                    verify_image(&v, &sim, send, what);
            }
            image_free(&sim);
            image_free(&rim);
            free_buf(e, send);
            free_buf(e, recv);
            if (units_differ)
                break;
        }
    }
    if (units_differ)
        report(&v, "gatherv %s into %s, %s, %s, at every root", su.name,
               ru.name, count_pattern_names[cp], layout_names[l]);
    else
        report(&v, "gatherv %s, %s, %s, at every root (also in place)",
               ru.name, count_pattern_names[cp], layout_names[l]);
    free(counts);
    free(displs);
    free(rcounts);
    free(rdispls);
}

static void check_scatterv(const struct etype *e, struct unit su,
                           struct unit ru, enum count_pattern cp,
                           enum layout l, int scale)
{
    struct verdict v = {""};
    bool units_differ = su.per != ru.per;
    int *counts = calloc((size_t)world_size, sizeof(int));
    int *displs = calloc((size_t)world_size, sizeof(int));
    int *scounts = calloc((size_t)world_size, sizeof(int));
    int *sdispls = calloc((size_t)world_size, sizeof(int));
    for (int r = 0; r < world_size; r++)
        counts[r] = count_of(cp, r) * scale;
    size_t total = make_displs(l, world_size, counts, displs, scale);
    for (int r = 0; r < world_size; r++) {
        scounts[r] = counts[r] / su.per;
        sdispls[r] = displs[r] / su.per;
    }
    int mine = counts[world_rank];

    for (int root = 0; root < world_size; root++) {
        for (int in_place = 0; in_place <= 1; in_place++) {
            char what[64];
            snprintf(what, sizeof(what), "root %d%s", root,
                     in_place ? " in place" : "");
            bool am_root = world_rank == root;
            void *send = alloc_buf(e, total);
            void *recv = alloc_buf(e, (size_t)mine);
            struct image sim = image_new(e, total);
            struct image rim = image_new(e, (size_t)mine);
            if (am_root)
                for (int r = 0; r < world_size; r++)
                    for (int k = 0; k < counts[r]; k++) {
                        size_t slot = (size_t)displs[r] + (size_t)k;
                        put_data(e, send, slot, root, r, k);
                        image_data(&sim, slot, root, r, k);
                    }
            if (!(in_place && am_root))
                for (int k = 0; k < mine; k++)
                    image_data(&rim, (size_t)k, root, world_rank, k);
            const void *send_arg = send;
            const int *sc_arg = scounts, *sd_arg = sdispls;
            void *recv_arg = recv;
            int rcount = mine / ru.per;
            MPI_Datatype rtype = ru.mpi;
            if (in_place && am_root) {
                recv_arg = MPI_IN_PLACE;
                rcount = 0;
                rtype = MPI_DATATYPE_NULL;
            } else if (in_place) {
                send_arg = NULL;
                sc_arg = NULL;
                sd_arg = NULL;
            }
            int rc = MPI_Scatterv(send_arg, sc_arg, sd_arg, su.mpi, recv_arg,
                                  rcount, rtype, root, MPI_COMM_WORLD);
            check_rc(&v, "MPI_Scatterv", rc);
            if (rc == MPI_SUCCESS) {
                verify_image(&v, &rim, recv, what);
                verify_image(&v, &sim, send, what);
            }
            image_free(&sim);
            image_free(&rim);
            free_buf(e, send);
            free_buf(e, recv);
            if (units_differ)
                break;
        }
    }
    if (units_differ)
        report(&v, "scatterv %s into %s, %s, %s, from every root", su.name,
               ru.name, count_pattern_names[cp], layout_names[l]);
    else
        report(&v, "scatterv %s, %s, %s, from every root (also in place)",
               ru.name, count_pattern_names[cp], layout_names[l]);
    free(counts);
    free(displs);
    free(scounts);
    free(sdispls);
}

/* ------------------------------------------------------------------ */
/* Allgatherv                                                           */
/* ------------------------------------------------------------------ */

static void check_allgatherv(const struct etype *e, struct unit su,
                             struct unit ru, enum count_pattern cp,
                             enum layout l, int scale)
{
    struct verdict v = {""};
    bool units_differ = su.per != ru.per;
    int *counts = calloc((size_t)world_size, sizeof(int));
    int *displs = calloc((size_t)world_size, sizeof(int));
    int *rcounts = calloc((size_t)world_size, sizeof(int));
    int *rdispls = calloc((size_t)world_size, sizeof(int));
    for (int r = 0; r < world_size; r++)
        counts[r] = count_of(cp, r) * scale;
    size_t total = make_displs(l, world_size, counts, displs, scale);
    for (int r = 0; r < world_size; r++) {
        rcounts[r] = counts[r] / ru.per;
        rdispls[r] = displs[r] / ru.per;
    }
    int mine = counts[world_rank];

    for (int in_place = 0; in_place <= (units_differ ? 0 : 1); in_place++) {
        const char *what = in_place ? "in place" : "separate buffers";
        void *send = alloc_buf(e, (size_t)mine);
        void *recv = alloc_buf(e, total);
        struct image sim = image_new(e, (size_t)mine);
        struct image rim = image_new(e, total);
        for (int k = 0; k < mine; k++) {
            put_data(e, send, (size_t)k, world_rank, 0, k);
            image_data(&sim, (size_t)k, world_rank, 0, k);
        }
        for (int r = 0; r < world_size; r++)
            for (int k = 0; k < counts[r]; k++)
                image_data(&rim, (size_t)displs[r] + (size_t)k, r, 0, k);
        int rc;
        if (in_place) {
            for (int k = 0; k < mine; k++)
                put_data(e, recv, (size_t)displs[world_rank] + (size_t)k,
                         world_rank, 0, k);
            rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv,
                                rcounts, rdispls, ru.mpi, MPI_COMM_WORLD);
        } else {
            rc = MPI_Allgatherv(send, mine / su.per, su.mpi, recv, rcounts,
                                rdispls, ru.mpi, MPI_COMM_WORLD);
        }
        check_rc(&v, "MPI_Allgatherv", rc);
        if (rc == MPI_SUCCESS) {
            verify_image(&v, &rim, recv, what);
            if (!in_place)
                verify_image(&v, &sim, send, what);
        }
        image_free(&sim);
        image_free(&rim);
        free_buf(e, send);
        free_buf(e, recv);
    }
    if (units_differ)
        report(&v, "allgatherv %s into %s, %s, %s", su.name, ru.name,
               count_pattern_names[cp], layout_names[l]);
    else
        report(&v, "allgatherv %s, %s, %s (also in place)", ru.name,
               count_pattern_names[cp], layout_names[l]);
    free(counts);
    free(displs);
    free(rcounts);
    free(rdispls);
}

/* ------------------------------------------------------------------ */
/* Alltoall and Alltoallv                                               */
/* ------------------------------------------------------------------ */

static void check_alltoall(const struct etype *e, struct unit su,
                           struct unit ru, int count)
{
    struct verdict v = {""};
    bool units_differ = su.per != ru.per;
    size_t total = (size_t)count * (size_t)world_size;
    for (int in_place = 0; in_place <= (units_differ ? 0 : 1); in_place++) {
        const char *what = in_place ? "in place" : "separate buffers";
        void *send = alloc_buf(e, total);
        void *recv = alloc_buf(e, total);
        struct image sim = image_new(e, total);
        struct image rim = image_new(e, total);
        for (int r = 0; r < world_size; r++)
            for (int k = 0; k < count; k++) {
                size_t slot = (size_t)r * (size_t)count + (size_t)k;
                put_data(e, in_place ? recv : send, slot, world_rank, r, k);
                image_data(&sim, slot, world_rank, r, k);
                image_data(&rim, slot, r, world_rank, k);
            }
        int rc;
        if (in_place)
            rc = MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv,
                              count / ru.per, ru.mpi, MPI_COMM_WORLD);
        else
            rc = MPI_Alltoall(send, count / su.per, su.mpi, recv,
                              count / ru.per, ru.mpi, MPI_COMM_WORLD);
        check_rc(&v, "MPI_Alltoall", rc);
        if (rc == MPI_SUCCESS) {
            verify_image(&v, &rim, recv, what);
            if (!in_place)
                verify_image(&v, &sim, send, what);
        }
        image_free(&sim);
        image_free(&rim);
        free_buf(e, send);
        free_buf(e, recv);
    }
    if (units_differ)
        report(&v, "alltoall %d x %s into %d x %s", count / su.per, su.name,
               count / ru.per, ru.name);
    else
        report(&v, "alltoall %s count %d (also in place)", ru.name,
               count / ru.per);
}

/* Elements from src to dst. In place, the standard needs the same count
 * both ways, so that variant uses a symmetric function. */
static int a2av_count(enum count_pattern cp, bool symmetric, int src, int dst)
{
    switch (cp) {
    case CP_MIXED:
        return symmetric ? (src + dst) % 3 : (src * 2 + dst) % 4;
    case CP_ZERO:
        return 0;
    case CP_LARGE:
        if (symmetric)
            return (src + dst) % 3 == 1 ? 0 : 300 + 20 * (src + dst);
        return (src + 2 * dst) % 3 == 1 ? 0 : 300 + 20 * src + 7 * dst;
    default:
        return 0;
    }
}

static void check_alltoallv(const struct etype *e, struct unit su,
                            struct unit ru, enum count_pattern cp,
                            enum layout l, int scale)
{
    struct verdict v = {""};
    bool units_differ = su.per != ru.per;
    size_t n = (size_t)world_size;
    int *scounts = calloc(n, sizeof(int)), *sdispls = calloc(n, sizeof(int));
    int *rcounts = calloc(n, sizeof(int)), *rdispls = calloc(n, sizeof(int));
    int *sc = calloc(n, sizeof(int)), *sd = calloc(n, sizeof(int));
    int *rcu = calloc(n, sizeof(int)), *rdu = calloc(n, sizeof(int));

    for (int in_place = 0; in_place <= (units_differ ? 0 : 1); in_place++) {
        const char *what = in_place ? "in place" : "separate buffers";
        bool sym = in_place;
        for (int r = 0; r < world_size; r++) {
            scounts[r] = a2av_count(cp, sym, world_rank, r) * scale;
            rcounts[r] = a2av_count(cp, sym, r, world_rank) * scale;
        }
        /* The send side packed, the receive side in the given layout, so
         * the two layouts differ whenever l is not packed. */
        size_t stotal = make_displs(L_PACKED, world_size, scounts, sdispls,
                                     scale);
        size_t rtotal = make_displs(l, world_size, rcounts, rdispls, scale);
        for (int r = 0; r < world_size; r++) {
            sc[r] = scounts[r] / su.per;
            sd[r] = sdispls[r] / su.per;
            rcu[r] = rcounts[r] / ru.per;
            rdu[r] = rdispls[r] / ru.per;
        }
        void *send = alloc_buf(e, stotal);
        void *recv = alloc_buf(e, rtotal);
        struct image sim = image_new(e, stotal);
        struct image rim = image_new(e, rtotal);
        for (int r = 0; r < world_size; r++) {
            for (int k = 0; k < scounts[r]; k++) {
                size_t slot = (size_t)sdispls[r] + (size_t)k;
                put_data(e, send, slot, world_rank, r, k);
                image_data(&sim, slot, world_rank, r, k);
            }
            for (int k = 0; k < rcounts[r]; k++) {
                size_t slot = (size_t)rdispls[r] + (size_t)k;
                if (in_place)   /* what goes to r is where r's data lands */
                    put_data(e, recv, slot, world_rank, r, k);
                image_data(&rim, slot, r, world_rank, k);
            }
        }
        int rc;
        if (in_place)
            rc = MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL,
                               recv, rcu, rdu, ru.mpi, MPI_COMM_WORLD);
        else
            rc = MPI_Alltoallv(send, sc, sd, su.mpi, recv, rcu, rdu, ru.mpi,
                               MPI_COMM_WORLD);
        check_rc(&v, "MPI_Alltoallv", rc);
        if (rc == MPI_SUCCESS) {
            verify_image(&v, &rim, recv, what);
            if (!in_place)
                verify_image(&v, &sim, send, what);
        }
        image_free(&sim);
        image_free(&rim);
        free_buf(e, send);
        free_buf(e, recv);
    }
    if (units_differ)
        report(&v, "alltoallv %s into %s, %s, receive side %s", su.name,
               ru.name, count_pattern_names[cp], layout_names[l]);
    else
        report(&v, "alltoallv %s, %s, receive side %s (also in place)",
               ru.name, count_pattern_names[cp], layout_names[l]);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(sc);
    free(sd);
    free(rcu);
    free(rdu);
}

/* ------------------------------------------------------------------ */
/* Reductions: Reduce_scatter, Reduce_scatter_block, Scan, Exscan       */
/* ------------------------------------------------------------------ */

struct rop {
    const char *name;
    MPI_Op mpi;
    enum { RO_SUM, RO_MAX, RO_MAXLOC, RO_MINLOC } id;
};

/* Input of rank r at element j. Small integers, or halves, so sums are
 * exact; pairs have few values (ties) and locations that fall with rank. */
static void put_input(const struct etype *e, const struct rop *op, void *buf,
                      size_t slot, int r, int j)
{
    unsigned char *p = (unsigned char *)buf + slot * e->extent;
    switch (e->kind) {
    case E_INT: {
        int v = op->id == RO_SUM ? (r * 7 + j * 3) % 11 - 5
                                 : (r * 13 + j * 5) % 17 - 8;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case E_DOUBLE: {
        double v = op->id == RO_SUM ? ((r * 7 + j * 3) % 11 - 5) * 0.5
                                    : ((r * 13 + j * 5) % 17 - 8) * 0.25;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case E_PAIR: {
        double v = (double)((r * 3 + j) % 4);
        int i = (world_size - r) * 2 + j % 2;
        memcpy(p + offsetof(struct double_int, v), &v, sizeof(v));
        memcpy(p + offsetof(struct double_int, i), &i, sizeof(i));
        break;
    }
    }
}

/* The reduction over ranks lo..hi of element j, into want[slot]. */
static void put_fold(const struct etype *e, const struct rop *op, void *want,
                     size_t slot, int lo, int hi, int j)
{
    unsigned char tmp[2 * sizeof(struct double_int)];
    put_input(e, op, want, slot, lo, j);
    unsigned char *acc = (unsigned char *)want + slot * e->extent;
    for (int r = lo + 1; r <= hi; r++) {
        put_input(e, op, tmp, 0, r, j);
        switch (e->kind) {
        case E_INT: {
            int a, b;
            memcpy(&a, acc, sizeof(a));
            memcpy(&b, tmp, sizeof(b));
            a = op->id == RO_SUM ? a + b : (b > a ? b : a);
            memcpy(acc, &a, sizeof(a));
            break;
        }
        case E_DOUBLE: {
            double a, b;
            memcpy(&a, acc, sizeof(a));
            memcpy(&b, tmp, sizeof(b));
            a = op->id == RO_SUM ? a + b : (b > a ? b : a);
            memcpy(acc, &a, sizeof(a));
            break;
        }
        case E_PAIR: {
            struct double_int a, b;
            memcpy(&a, acc, sizeof(a));
            memcpy(&b, tmp, sizeof(b));
            bool better = op->id == RO_MAXLOC ? b.v > a.v : b.v < a.v;
            if (better)
                a = b;
            else if (b.v == a.v && b.i < a.i)
                a.i = b.i;
            memcpy(acc, &a, sizeof(a));
            break;
        }
        }
    }
}

static void image_fold(struct image *im, const struct rop *op, size_t slot,
                       int lo, int hi, int j)
{
    put_fold(im->e, op, im->want, slot, lo, hi, j);
    im->set[slot] = true;
}

static void check_reduce_scatter(const struct etype *e, const struct rop *op,
                                 enum count_pattern cp)
{
    struct verdict v = {""};
    int *counts = calloc((size_t)world_size, sizeof(int));
    size_t total = 0, offset = 0;
    for (int r = 0; r < world_size; r++) {
        counts[r] = count_of(cp, r);
        if (r == world_rank)
            offset = total;
        total += (size_t)counts[r];
    }
    size_t mine = (size_t)counts[world_rank];

    for (int in_place = 0; in_place <= 1; in_place++) {
        const char *what = in_place ? "in place" : "separate buffers";
        void *send = alloc_buf(e, total);
        void *recv = alloc_buf(e, in_place ? total : mine);
        struct image sim = image_new(e, total);
        struct image rim = image_new(e, in_place ? total : mine);
        for (size_t j = 0; j < total; j++) {
            put_input(e, op, in_place ? recv : send, j, world_rank, (int)j);
            put_input(e, op, sim.want, j, world_rank, (int)j);
            sim.set[j] = true;
        }
        for (size_t k = 0; k < mine; k++)
            image_fold(&rim, op, k, 0, world_size - 1, (int)(offset + k));
        int rc = MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : send, recv,
                                    counts, e->mpi, op->mpi, MPI_COMM_WORLD);
        check_rc(&v, "MPI_Reduce_scatter", rc);
        if (rc == MPI_SUCCESS) {
            if (in_place) {
                /* Only the first `mine` elements are defined afterwards. */
                for (size_t k = mine; k < total; k++)
                    memcpy((unsigned char *)recv + k * e->extent,
                           (unsigned char *)rim.want + k * e->extent,
                           e->extent);
            }
            verify_image(&v, &rim, recv, what);
            if (!in_place)
                verify_image(&v, &sim, send, what);
        }
        image_free(&sim);
        image_free(&rim);
        free_buf(e, send);
        free_buf(e, recv);
    }
    report(&v, "reduce_scatter %s %s, %s (also in place)", e->name, op->name,
           count_pattern_names[cp]);
    free(counts);
}

static void check_reduce_scatter_block(const struct etype *e,
                                       const struct rop *op, int count)
{
    struct verdict v = {""};
    size_t total = (size_t)count * (size_t)world_size;
    size_t offset = (size_t)count * (size_t)world_rank;
    for (int in_place = 0; in_place <= 1; in_place++) {
        const char *what = in_place ? "in place" : "separate buffers";
        void *send = alloc_buf(e, total);
        void *recv = alloc_buf(e, in_place ? total : (size_t)count);
        struct image sim = image_new(e, total);
        struct image rim = image_new(e, in_place ? total : (size_t)count);
        for (size_t j = 0; j < total; j++) {
            put_input(e, op, in_place ? recv : send, j, world_rank, (int)j);
            put_input(e, op, sim.want, j, world_rank, (int)j);
            sim.set[j] = true;
        }
        for (int k = 0; k < count; k++)
            image_fold(&rim, op, (size_t)k, 0, world_size - 1,
                       (int)offset + k);
        int rc = MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send,
                                          recv, count, e->mpi, op->mpi,
                                          MPI_COMM_WORLD);
        check_rc(&v, "MPI_Reduce_scatter_block", rc);
        if (rc == MPI_SUCCESS) {
            if (in_place)
                for (size_t k = (size_t)count; k < total; k++)
                    memcpy((unsigned char *)recv + k * e->extent,
                           (unsigned char *)rim.want + k * e->extent,
                           e->extent);
            verify_image(&v, &rim, recv, what);
            if (!in_place)
                verify_image(&v, &sim, send, what);
        }
        image_free(&sim);
        image_free(&rim);
        free_buf(e, send);
        free_buf(e, recv);
    }
    report(&v, "reduce_scatter_block %s %s count %d (also in place)",
           e->name, op->name, count);
}

static void check_scan(const struct etype *e, const struct rop *op,
                       int count, bool exclusive)
{
    struct verdict v = {""};
    const char *call = exclusive ? "MPI_Exscan" : "MPI_Scan";
    for (int in_place = 0; in_place <= 1; in_place++) {
        const char *what = in_place ? "in place" : "separate buffers";
        void *send = alloc_buf(e, (size_t)count);
        void *recv = alloc_buf(e, (size_t)count);
        struct image sim = image_new(e, (size_t)count);
        struct image rim = image_new(e, (size_t)count);
        for (int j = 0; j < count; j++) {
            put_input(e, op, in_place ? recv : send, (size_t)j, world_rank, j);
            put_input(e, op, sim.want, (size_t)j, world_rank, j);
            sim.set[j] = true;
        }
        int hi = exclusive ? world_rank - 1 : world_rank;
        for (int j = 0; j < count && hi >= 0; j++)
            image_fold(&rim, op, (size_t)j, 0, hi, j);
        const void *send_arg = in_place ? MPI_IN_PLACE : send;
        int rc = exclusive ? MPI_Exscan(send_arg, recv, count, e->mpi,
                                        op->mpi, MPI_COMM_WORLD)
                           : MPI_Scan(send_arg, recv, count, e->mpi, op->mpi,
                                      MPI_COMM_WORLD);
        check_rc(&v, call, rc);
        if (rc == MPI_SUCCESS) {
            if (hi < 0) {
                /* Rank 0 of MPI_Exscan: the buffer is undefined; only the
                 * guards are checked. */
                memcpy(rim.want, recv, (size_t)count * e->extent);
                for (int j = 0; j < count; j++)
                    rim.set[j] = false;
                if (!is_poison((unsigned char *)recv + (size_t)count * e->extent,
                               GUARD * e->extent)
                    || !is_poison((unsigned char *)recv - GUARD * e->extent,
                                  GUARD * e->extent))
                    fail(&v, "%s: wrote outside the buffer", what);
            } else {
                verify_image(&v, &rim, recv, what);
            }
            if (!in_place)
                verify_image(&v, &sim, send, what);
        }
        image_free(&sim);
        image_free(&rim);
        free_buf(e, send);
        free_buf(e, recv);
    }
    report(&v, "%s %s %s count %d (also in place)",
           exclusive ? "exscan" : "scan", e->name, op->name, count);
}

/* ------------------------------------------------------------------ */
/* Zero counts with NULL buffers                                        */
/* ------------------------------------------------------------------ */

/* A count of 0 makes any buffer legal, NULL included. */
static void check_zero_counts_null_buffers(void)
{
    struct verdict v = {""};
    int *zeros = calloc((size_t)world_size, sizeof(int));
    for (int root = 0; root < world_size; root++) {
        check_rc(&v, "MPI_Gather",
                 MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, root,
                            MPI_COMM_WORLD));
        check_rc(&v, "MPI_Gatherv",
                 MPI_Gatherv(NULL, 0, MPI_INT, NULL, zeros, zeros, MPI_INT,
                             root, MPI_COMM_WORLD));
        check_rc(&v, "MPI_Scatter",
                 MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, root,
                             MPI_COMM_WORLD));
        check_rc(&v, "MPI_Scatterv",
                 MPI_Scatterv(NULL, zeros, zeros, MPI_INT, NULL, 0, MPI_INT,
                              root, MPI_COMM_WORLD));
    }
    check_rc(&v, "MPI_Allgatherv",
             MPI_Allgatherv(NULL, 0, MPI_INT, NULL, zeros, zeros, MPI_INT,
                            MPI_COMM_WORLD));
    check_rc(&v, "MPI_Alltoall",
             MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
    check_rc(&v, "MPI_Alltoallv",
             MPI_Alltoallv(NULL, zeros, zeros, MPI_INT, NULL, zeros, zeros,
                           MPI_INT, MPI_COMM_WORLD));
    check_rc(&v, "MPI_Reduce_scatter",
             MPI_Reduce_scatter(NULL, NULL, zeros, MPI_INT, MPI_SUM,
                                MPI_COMM_WORLD));
    check_rc(&v, "MPI_Reduce_scatter_block",
             MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM,
                                      MPI_COMM_WORLD));
    check_rc(&v, "MPI_Scan",
             MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    check_rc(&v, "MPI_Exscan",
             MPI_Exscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    free(zeros);
    report(&v, "every collective here with zero counts and NULL buffers");
}

/* ------------------------------------------------------------------ */
/* The plan                                                             */
/* ------------------------------------------------------------------ */

static void run_data_movement(void)
{
    const struct etype *all[3] = {&t_int, &t_double, &t_pair};
    static const int counts[] = {0, 1, 3, 1000};
    const size_t ncounts = sizeof(counts) / sizeof(counts[0]);

    for (int t = 0; t < 3; t++) {
        const struct etype *e = all[t];
        struct unit u = plain_unit(e);
        for (size_t c = 0; c < ncounts; c++)
            check_gather(e, u, u, counts[c]);
        for (size_t c = 0; c < ncounts; c++)
            check_scatter(e, u, u, counts[c]);
        for (int cp = 0; cp < CP_PATTERNS; cp++)
            for (int l = 0; l < L_LAYOUTS; l++) {
                check_gatherv(e, u, u, (enum count_pattern)cp, (enum layout)l,
                              1);
                check_scatterv(e, u, u, (enum count_pattern)cp,
                               (enum layout)l, 1);
                check_allgatherv(e, u, u, (enum count_pattern)cp,
                                 (enum layout)l, 1);
                check_alltoallv(e, u, u, (enum count_pattern)cp,
                                (enum layout)l, 1);
            }
        for (size_t c = 0; c < ncounts; c++)
            check_alltoall(e, u, u, counts[c]);
    }

    /* Different but matching type signatures. */
    static const int quad_counts[] = {4, 12, 400};
    for (size_t c = 0; c < sizeof(quad_counts) / sizeof(quad_counts[0]); c++) {
        int n = quad_counts[c];
        check_gather(&t_int, unit_int, unit_quad, n);
        check_gather(&t_int, unit_quad, unit_int, n);
        check_scatter(&t_int, unit_quad, unit_int, n);
        check_scatter(&t_int, unit_int, unit_quad, n);
        check_alltoall(&t_int, unit_int, unit_quad, n);
        check_alltoall(&t_int, unit_quad, unit_int, n);
    }
    for (int l = 0; l < L_LAYOUTS; l++) {
        check_gatherv(&t_int, unit_int, unit_quad, CP_MIXED, (enum layout)l, 4);
        check_scatterv(&t_int, unit_quad, unit_int, CP_MIXED, (enum layout)l, 4);
        check_allgatherv(&t_int, unit_int, unit_quad, CP_MIXED, (enum layout)l, 4);
        check_allgatherv(&t_int, unit_quad, unit_int, CP_LARGE, (enum layout)l, 4);
        check_alltoallv(&t_int, unit_quad, unit_int, CP_MIXED, (enum layout)l, 4);
        check_alltoallv(&t_int, unit_int, unit_quad, CP_LARGE, (enum layout)l, 4);
    }
    /* Blocks of several chunks; reversed with gaps, their offsets are
     * not multiples of 16 bytes. */
    for (int l = 0; l < L_LAYOUTS; l++)
        check_allgatherv(&t_int, unit_int, unit_int, CP_CHUNKS,
                         (enum layout)l, 1);
    /* The contiguous type on both sides of an in-place call. */
    check_gather(&t_int, unit_quad, unit_quad, 8);
    check_scatter(&t_int, unit_quad, unit_quad, 8);
    check_alltoall(&t_int, unit_quad, unit_quad, 8);
    check_allgatherv(&t_int, unit_quad, unit_quad, CP_MIXED, L_REVERSED_GAPS, 4);
    check_alltoallv(&t_int, unit_quad, unit_quad, CP_MIXED, L_REVERSED_GAPS, 4);
}

static void run_reductions(void)
{
    const struct rop sum = {"MPI_SUM", MPI_SUM, RO_SUM};
    const struct rop max = {"MPI_MAX", MPI_MAX, RO_MAX};
    const struct rop maxloc = {"MPI_MAXLOC", MPI_MAXLOC, RO_MAXLOC};
    const struct rop minloc = {"MPI_MINLOC", MPI_MINLOC, RO_MINLOC};
    struct {
        const struct etype *e;
        const struct rop *op;
    } cases[] = {
        {&t_int, &sum}, {&t_int, &max}, {&t_double, &sum}, {&t_double, &max},
        {&t_pair, &maxloc}, {&t_pair, &minloc},
    };
    static const int counts[] = {0, 1, 5, 1000};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        for (int cp = 0; cp < CP_PATTERNS; cp++)
            check_reduce_scatter(cases[k].e, cases[k].op,
                                 (enum count_pattern)cp);
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
            check_reduce_scatter_block(cases[k].e, cases[k].op, counts[c]);
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            check_scan(cases[k].e, cases[k].op, counts[c], false);
            check_scan(cases[k].e, cases[k].op, counts[c], true);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();
    init_types();

    if (world_rank == 0)
        printf("# colls_check on %d rank(s)\n", world_size);

    check_zero_counts_null_buffers();
    run_data_movement();
    run_reductions();

    MPI_Type_free(&unit_quad.mpi);
    int status = finish();
    MPI_Finalize();
    return status;
}
