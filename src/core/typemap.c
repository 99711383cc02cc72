/* Datatype layouts as trees of repeated blocks, and the pack engine. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/typemap.h"

static struct pd_type_node *pd_node_new(struct pd_type_node **owned,
                                        size_t n)
{
    struct pd_type_node *nd =
        calloc(1, sizeof(*nd) + n * sizeof(struct pd_type_child));
    if (nd == NULL)
        return NULL;
    nd->next_owned = *owned;
    *owned = nd;
    return nd;
}

void pd_nodes_free(struct pd_type_node *owned)
{
    while (owned != NULL) {
        struct pd_type_node *next = owned->next_owned;
        free(owned);
        owned = next;
    }
}

struct pd_type_node *pd_node_leaf(struct pd_type_node **owned, size_t count,
                                  ptrdiff_t stride, size_t len)
{
    struct pd_type_node *nd = pd_node_new(owned, 0);
    if (nd == NULL)
        return NULL;
    /* Repetitions that abut are one run. */
    if (count > 1 && stride == (ptrdiff_t)len) {
        len *= count;
        count = 1;
    }
    nd->count = count;
    nd->stride = count > 1 ? stride : (ptrdiff_t)len;
    nd->body = len;
    nd->len = len;
    return nd;
}

static bool pd_node_is_leaf(const struct pd_type_node *nd)
{
    return nd->n == 0;
}

/* A leaf whose bytes are one run. */
static bool pd_leaf_is_run(const struct pd_type_node *nd)
{
    return pd_node_is_leaf(nd) && nd->count == 1;
}

bool pd_map_is_dense(const struct pd_type_node *map)
{
    return map == NULL || pd_leaf_is_run(map);
}

/* count repetitions of item, stride apart, with item a leaf: still a
 * leaf where its runs continue the same period (or abut), else NULL. */
static struct pd_type_node *pd_leaf_repeat(struct pd_type_node **owned,
                                           const struct pd_type_node *item,
                                           size_t count, ptrdiff_t stride,
                                           bool *failed)
{
    *failed = false;
    struct pd_type_node *nd = NULL;
    if (pd_leaf_is_run(item))
        nd = pd_node_leaf(owned, count, stride, item->len);
    else if (pd_node_is_leaf(item) &&
             (ptrdiff_t)item->count * item->stride == stride)
        nd = pd_node_leaf(owned, item->count * count, item->stride,
                          item->len);
    else
        return NULL;
    *failed = nd == NULL;
    return nd;
}

const struct pd_type_node *pd_node_repeat(struct pd_type_node **owned,
                                          const struct pd_type_node *item,
                                          size_t blocklen, ptrdiff_t extent)
{
    if (blocklen == 1)
        return item;
    struct pd_type_child child = { 0, 0, item };
    return pd_node_seq(owned, blocklen, extent, &child, 1);
}

const struct pd_type_node *pd_node_seq(struct pd_type_node **owned,
                                       size_t count, ptrdiff_t stride,
                                       const struct pd_type_child *children,
                                       size_t n)
{
    struct pd_type_child *kept = malloc((n ? n : 1) * sizeof(*kept));
    if (kept == NULL)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pd_type_node *c = children[i].node;
        if (c == NULL || pd_node_total(c) == 0)
            continue;
        /* A run right after a run: one longer run. */
        if (m > 0 && pd_leaf_is_run(kept[m - 1].node) && pd_leaf_is_run(c) &&
            kept[m - 1].disp + (ptrdiff_t)kept[m - 1].node->len ==
                children[i].disp) {
            struct pd_type_node *run =
                pd_node_leaf(owned, 1, 0, kept[m - 1].node->len + c->len);
            if (run == NULL)
                goto fail;
            kept[m - 1].node = run;
            continue;
        }
        kept[m++] = children[i];
    }
    const struct pd_type_node *result = NULL;
    if (m == 0 || count == 0) {
        free(kept);
        return NULL;                /* an empty layout */
    }
    if (m == 1 && kept[0].disp == 0) {
        if (count == 1) {
            result = kept[0].node;
            free(kept);
            return result;
        }
        bool failed;
        result = pd_leaf_repeat(owned, kept[0].node, count, stride, &failed);
        if (failed)
            goto fail;
        if (result != NULL) {
            free(kept);
            return result;
        }
    }
    struct pd_type_node *nd = pd_node_new(owned, m);
    if (nd == NULL)
        goto fail;
    nd->count = count;
    nd->stride = stride;
    nd->n = m;
    size_t before = 0;
    for (size_t i = 0; i < m; i++) {
        nd->child[i] = kept[i];
        nd->child[i].before = before;
        before += pd_node_total(kept[i].node);
    }
    nd->body = before;
    free(kept);
    return nd;
fail:
    free(kept);
    return NULL;
}

/* One run's bytes, either way; the common element sizes by constant so
 * the compiler moves them without a call. */
static inline void pd_move(char *mem, char *stream, size_t n, bool pack)
{
    char *dst = pack ? stream : mem;
    const char *src = pack ? mem : stream;
    switch (n) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, n); break;
    }
}

/* The first child whose bytes include packed offset off. */
static size_t pd_child_at(const struct pd_type_node *nd, size_t off)
{
    size_t lo = 0, hi = nd->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (nd->child[mid].before <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* count runs of len bytes, stride apart from mem, to or from the stream
 * at stream. Inlined with len and pack constant, each loop below moves
 * an element in a load and a store. */
static inline __attribute__((always_inline)) void
pd_runs(char *mem, ptrdiff_t stride, char *stream, size_t count, size_t len,
        bool pack)
{
    for (size_t i = 0; i < count; i++, mem += stride, stream += len) {
        if (pack)
            memcpy(stream, mem, len);
        else
            memcpy(mem, stream, len);
    }
}

#define PD_RUNS(len) \
    (pack ? pd_runs(mem, stride, stream, count, len, true) \
          : pd_runs(mem, stride, stream, count, len, false))

/* The whole repetitions of a leaf: a vector of doubles is millions of
 * 8-byte runs, so the loop must not pay for the general walk per run. */
static void pd_leaf_runs(char *mem, ptrdiff_t stride, char *stream,
                         size_t count, size_t len, bool pack)
{
    switch (len) {
    case 1: PD_RUNS(1); break;
    case 2: PD_RUNS(2); break;
    case 4: PD_RUNS(4); break;
    case 8: PD_RUNS(8); break;
    case 12: PD_RUNS(12); break;
    case 16: PD_RUNS(16); break;
    case 24: PD_RUNS(24); break;
    case 32: PD_RUNS(32); break;
    default: PD_RUNS(len); break;
    }
}

#undef PD_RUNS

/* Bytes [from, from + n) of count runs of len bytes, stride apart from
 * base: a partial run at either end, whole ones between. */
static void pd_walk_runs(char *base, ptrdiff_t stride, size_t len,
                         size_t from, size_t n, char **stream, bool pack)
{
    size_t k = from / len, off = from % len;
    char *at = base + (ptrdiff_t)k * stride;
    if (off != 0) {
        size_t take = len - off < n ? len - off : n;
        pd_move(at + off, *stream, take, pack);
        *stream += take;
        n -= take;
        at += stride;
    }
    size_t whole = n / len;
    pd_leaf_runs(at, stride, *stream, whole, len, pack);
    *stream += whole * len;
    at += (ptrdiff_t)whole * stride;
    n -= whole * len;
    if (n > 0) {
        pd_move(at, *stream, n, pack);
        *stream += n;
    }
}

/* Bytes [from, from + n) of node nd's packed form, nd at base. */
static void pd_walk(const struct pd_type_node *nd, char *base, size_t from,
                    size_t n, char **stream, bool pack)
{
    if (pd_node_is_leaf(nd)) {
        pd_walk_runs(base, nd->stride, nd->len, from, n, stream, pack);
        return;
    }
    size_t k = from / nd->body, off = from % nd->body;
    while (n > 0) {
        char *rep = base + (ptrdiff_t)k * nd->stride;
        size_t take = nd->body - off < n ? nd->body - off : n;
        size_t i = pd_child_at(nd, off), o = off, left = take;
        while (left > 0) {
            const struct pd_type_child *c = &nd->child[i++];
            size_t in = o - c->before, total = pd_node_total(c->node);
            size_t t = total - in < left ? total - in : left;
            pd_walk(c->node, rep + c->disp, in, t, stream, pack);
            left -= t;
            o += t;
        }
        n -= take;
        off = 0;
        k++;
    }
}

static void pd_map_move(const struct pd_type_node *map, size_t packed,
                        ptrdiff_t extent, char *buf, size_t from, size_t n,
                        char *stream, bool pack)
{
    if (n == 0)
        return;
    if (map == NULL || (pd_leaf_is_run(map) && (ptrdiff_t)packed == extent)) {
        /* Dense: the stream is the buffer. */
        pd_move(buf + from, stream, n, pack);
        return;
    }
    if (pd_leaf_is_run(map)) {
        /* One run per item, extent apart: the items are the runs. */
        pd_walk_runs(buf, extent, packed, from, n, &stream, pack);
        return;
    }
    size_t k = from / packed, off = from % packed;
    while (n > 0) {
        size_t take = packed - off < n ? packed - off : n;
        pd_walk(map, buf + (ptrdiff_t)k * extent, off, take, &stream, pack);
        n -= take;
        off = 0;
        k++;
    }
}

void pd_map_pack(const struct pd_type_node *map, size_t packed,
                 ptrdiff_t extent, const void *buf, size_t from, size_t n,
                 void *stream)
{
    pd_map_move(map, packed, extent, (char *)buf, from, n, stream, true);
}

void pd_map_unpack(const struct pd_type_node *map, size_t packed,
                   ptrdiff_t extent, void *buf, size_t from, size_t n,
                   const void *stream)
{
    pd_map_move(map, packed, extent, buf, from, n, (char *)stream, false);
}
