/*
 * Unit check of the pack engine (core/typemap.c) on its own: for layouts
 * built with its constructors, packing and unpacking any byte range
 * [from, from + n) of the stream of a few items must give exactly the
 * bytes of a reference stream that this file writes out run by run from
 * the layout's description. Ranges that start and end inside runs, runs
 * of every length the engine moves by constant (and odd ones), negative
 * strides and extents, items that are one run each, and nested
 * sequences. Exit 0 when all pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/typemap.h"

#define ITEMS 3
#define MAX_RUNS 256

/* One item's bytes as the test sees them: runs at offsets from the
 * item's start, in stream order. */
struct ref {
    const char *name;
    const struct pd_type_node *map;
    long extent;
    int n;
    long off[MAX_RUNS], len[MAX_RUNS];
};

static int failures, cases;

static void run(struct ref *r, long off, long len)
{
    if (r->n == MAX_RUNS) {
        fprintf(stderr, "FAIL: %s: too many runs for the test\n", r->name);
        exit(1);
    }
    r->off[r->n] = off;
    r->len[r->n++] = len;
}

static long ref_packed(const struct ref *r)
{
    long s = 0;
    for (int i = 0; i < r->n; i++)
        s += r->len[i];
    return s;
}

/* The lowest and highest byte (plus one) ITEMS items touch. */
static void ref_span(const struct ref *r, long *lo, long *hi)
{
    *lo = 0;
    *hi = 0;
    for (int k = 0; k < ITEMS; k++)
        for (int i = 0; i < r->n; i++) {
            long a = k * r->extent + r->off[i], b = a + r->len[i];
            if (a < *lo)
                *lo = a;
            if (b > *hi)
                *hi = b;
        }
}

/* The stream of ITEMS items at base, run by run. */
static void ref_pack(const struct ref *r, const unsigned char *base,
                     unsigned char *stream)
{
    for (int k = 0; k < ITEMS; k++)
        for (int i = 0; i < r->n; i++) {
            memcpy(stream, base + k * r->extent + r->off[i],
                   (size_t)r->len[i]);
            stream += r->len[i];
        }
}

/* Where stream byte s of the reference lands in memory, from base. */
static long ref_where(const struct ref *r, long s)
{
    long packed = ref_packed(r), k = s / packed, in = s % packed;
    for (int i = 0; i < r->n; i++) {
        if (in < r->len[i])
            return k * r->extent + r->off[i] + in;
        in -= r->len[i];
    }
    return -1;
}

static void check(struct ref *r)
{
    if (r->map == NULL) {
        fprintf(stderr, "FAIL: %s: the layout was not built\n", r->name);
        failures++;
        return;
    }
    long packed = ref_packed(r), total = packed * ITEMS, lo, hi;
    if ((long)(r->map->count * r->map->body) != packed) {
        fprintf(stderr, "FAIL: %s: %zu packed bytes per item, expected "
                "%ld\n", r->name, r->map->count * r->map->body, packed);
        failures++;
        return;
    }
    ref_span(r, &lo, &hi);
    size_t span = (size_t)(hi - lo);
    unsigned char *mem = malloc(span), *want = malloc((size_t)total),
                  *got = malloc((size_t)total + 1),
                  *back = malloc(span);
    unsigned char *base = mem - lo, *back_base = back - lo;
    for (size_t i = 0; i < span; i++)
        mem[i] = (unsigned char)(i * 7 + 3);
    ref_pack(r, base, want);
    int bad = 0;
    for (long from = 0; from <= total && !bad; from++) {
        for (long n = 0; from + n <= total && !bad; n++) {
            /* Every start; lengths up to two items, then the rest. */
            if (n > 2 * packed + 2 && from + n != total)
                continue;
            memset(got, 0xEE, (size_t)total + 1);
            pd_map_pack(r->map, (size_t)packed, r->extent, base,
                        (size_t)from, (size_t)n, got);
            if (memcmp(got, want + from, (size_t)n) != 0 ||
                got[n] != 0xEE) {
                fprintf(stderr, "FAIL: %s: pack of [%ld, %ld) differs\n",
                        r->name, from, from + n);
                bad = 1;
                break;
            }
            /* Unpack into a cleared buffer: exactly those bytes come
             * back, each where the reference puts it. */
            memset(back, 0, span);
            pd_map_unpack(r->map, (size_t)packed, r->extent, back_base,
                          (size_t)from, (size_t)n, want + from);
            unsigned char *expect = calloc(1, span);
            for (long s = from; s < from + n; s++) {
                long at = ref_where(r, s);
                expect[at - lo] = base[at];
            }
            if (memcmp(back, expect, span) != 0) {
                fprintf(stderr, "FAIL: %s: unpack of [%ld, %ld) differs\n",
                        r->name, from, from + n);
                bad = 1;
            }
            free(expect);
        }
    }
    failures += bad;
    cases++;
    free(mem);
    free(want);
    free(got);
    free(back);
}

int main(void)
{
    struct pd_type_node *owned = NULL;
    static struct ref r;
    static char names[64][80];
    int named = 0;

    /* count repetitions of len bytes, stride apart: each length the
     * engine moves by a constant, odd ones, and a negative stride. */
    static const long lens[] = { 1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 40 };
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        for (int dir = 1; dir >= -1; dir -= 2) {
            long len = lens[i], stride = dir * (len + 3);
            memset(&r, 0, sizeof(r));
            snprintf(names[named], sizeof(names[0]),
                     "leaf of 4 runs of %ld bytes, stride %ld", len, stride);
            r.name = names[named++];
            r.map = pd_node_leaf(&owned, 4, stride, (size_t)len);
            for (int k = 0; k < 4; k++)
                run(&r, k * stride, len);
            r.extent = dir > 0 ? 4 * stride : -stride;
            check(&r);
        }
    }

    /* Items that are one run each, extent apart (MPI_INT resized). */
    static const long extents[] = { 12, -12, 4 };
    for (size_t i = 0; i < 3; i++) {
        memset(&r, 0, sizeof(r));
        snprintf(names[named], sizeof(names[0]),
                 "one 4-byte run per item, extent %ld", extents[i]);
        r.name = names[named++];
        r.map = pd_node_leaf(&owned, 1, 0, 4);
        run(&r, 0, 4);
        r.extent = extents[i];
        check(&r);
    }

    /* Two repetitions of {8 bytes at 0, 3 bytes at 12}, 20 apart. */
    memset(&r, 0, sizeof(r));
    r.name = "sequence of an 8-byte and a 3-byte run, twice";
    struct pd_type_child two[2] = {
        { 0, 0, pd_node_leaf(&owned, 1, 0, 8) },
        { 12, 0, pd_node_leaf(&owned, 1, 0, 3) },
    };
    const struct pd_type_node *pair = pd_node_seq(&owned, 2, 20, two, 2);
    r.map = pair;
    for (int k = 0; k < 2; k++) {
        run(&r, k * 20, 8);
        run(&r, k * 20 + 12, 3);
    }
    r.extent = 40;
    check(&r);

    /* Nested: {the pair above at 8, a leaf of 3 runs of 2 bytes 5 apart
     * at -16}, three times, 100 apart. */
    memset(&r, 0, sizeof(r));
    r.name = "nested: the sequence and a strided leaf, three times";
    struct pd_type_child nest[2] = {
        { 8, 0, pair },
        { -16, 0, pd_node_leaf(&owned, 3, 5, 2) },
    };
    r.map = pd_node_seq(&owned, 3, 100, nest, 2);
    for (int k = 0; k < 3; k++) {
        for (int j = 0; j < 2; j++) {
            run(&r, k * 100 + 8 + j * 20, 8);
            run(&r, k * 100 + 8 + j * 20 + 12, 3);
        }
        for (int j = 0; j < 3; j++)
            run(&r, k * 100 - 16 + j * 5, 2);
    }
    r.extent = 300;
    check(&r);

    pd_nodes_free(owned);
    if (failures == 0)
        printf("ok: %d layouts, every byte range packed and unpacked\n",
               cases);
    return failures == 0 ? 0 : 1;
}
