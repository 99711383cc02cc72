/* Datatype properties, and the derived types built from them. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/objects.h"
#include "core/typemap.h"

struct pd_type_props {
    unsigned char cls;     /* enum pd_type_class */
    unsigned char ek;      /* enum pd_elem_kind */
};

static const struct pd_type_props pd_type_props[PD_TYPE_COUNT] = {
#define PD_TYPE(sym, id, size, extent, name, cls, ek) [id] = { cls, ek },
#include "core/datatype_list.h"
#undef PD_TYPE
};

bool pd_type_is_valid(const struct ompi_datatype_t *type)
{
    if (type == NULL || type->magic != PD_MAGIC_TYPE)
        return false;
    if (type->id == PD_T_DERIVED)
        return true;
    if (type->id <= PD_T_DATATYPE_NULL || type->id >= PD_TYPE_COUNT)
        return false;
    /* MPI_LB, MPI_UB and the placeholder have no data to move. */
    return type->id != PD_T_LB && type->id != PD_T_UB &&
           type->id != PD_T_UNAVAILABLE;
}

bool pd_type_is_predefined(const struct ompi_datatype_t *type)
{
    return type->id != PD_T_DERIVED;
}

/* A type of mixed elements has no class and no element kind: no
 * predefined op applies to it. */
enum pd_type_class pd_type_class_of(const struct ompi_datatype_t *type)
{
    if (type->base_id == PD_BASE_MIXED)
        return PD_TC_NONE;
    return (enum pd_type_class)pd_type_props[type->base_id].cls;
}

enum pd_elem_kind pd_type_elem_kind(const struct ompi_datatype_t *type)
{
    if (type->base_id == PD_BASE_MIXED)
        return PD_EK_NONE;
    return (enum pd_elem_kind)pd_type_props[type->base_id].ek;
}

enum pd_elem_kind pd_type_signature(const struct ompi_datatype_t *type)
{
    enum pd_elem_kind k = pd_type_elem_kind(type);
    switch (k) {
    case PD_EK_U8:  return PD_EK_I8;
    case PD_EK_U16: return PD_EK_I16;
    case PD_EK_U32: return PD_EK_I32;
    case PD_EK_U64: return PD_EK_I64;
    default:        return k;
    }
}

ptrdiff_t pd_type_extent(const struct ompi_datatype_t *type)
{
    return type->extent;
}

size_t pd_type_size(const struct ompi_datatype_t *type)
{
    return type->size;
}

size_t pd_type_packed(const struct ompi_datatype_t *type)
{
    return type->packed;
}

const char *pd_type_name(const struct ompi_datatype_t *type)
{
    return type->name[0] != '\0' ? type->name : "an unnamed derived datatype";
}

/*
 * Derived types. Bounds follow MPI-3.1 section 4.1: a block of n items at
 * disp spans [disp + lb, disp + (n - 1) * extent + lb + extent), its data
 * [.. + true_lb, .. + true_lb + true_extent); a type spans the union of
 * its blocks. Arithmetic is done wide and refused past a 64-bit MPI_Aint.
 */
typedef __int128 pd_wide;

static bool pd_wide_fits(pd_wide v)
{
    return v >= INT64_MIN && v <= INT64_MAX;
}

/* The alignment of a predefined type's most aligned member: what
 * MPI_Type_create_struct rounds a struct's extent to, as C does. */
static size_t pd_predefined_align(const struct ompi_datatype_t *t)
{
    size_t e = (size_t)t->extent;   /* predefined: never negative */
    if (e == 0)
        return 1;
    if (pd_type_props[t->id].cls == PD_TC_COMPLEX)
        e /= 2;                     /* two floating-point parts */
    else if (pd_type_props[t->id].cls == PD_TC_PAIR)
        return e >= 32 ? 16 : e == 16 ? 8 : 4;
    size_t a = 1;
    while (a < 16 && e % (a * 2) == 0)
        a *= 2;
    return a;
}

size_t pd_type_align(const struct ompi_datatype_t *type)
{
    return pd_type_is_predefined(type) ? pd_predefined_align(type)
                                       : type->align;
}

struct pd_type_contents {
    int combiner;
    int ni, na, nd;
    int *ints;
    MPI_Aint *aints;
    struct ompi_datatype_t **types;
};

void pd_type_retain(struct ompi_datatype_t *type)
{
    if (!pd_type_is_predefined(type))
        __atomic_add_fetch(&type->refs, 1, __ATOMIC_RELAXED);
}

static void pd_type_destroy(struct ompi_datatype_t *type)
{
    struct pd_type_contents *c = type->contents;
    if (c != NULL) {
        for (int i = 0; i < c->nd; i++)
            pd_type_release(c->types[i]);
        free(c);
    }
    for (size_t i = 0; i < type->n_uses; i++)
        pd_type_release(type->uses[i]);
    free(type->uses);
    pd_nodes_free(type->owned);
    pd_handle_forget(PD_HANDLE_TYPE, type);
    type->magic = PD_MAGIC_FREED;
    free(type);
}

void pd_type_release(struct ompi_datatype_t *type)
{
    if (pd_type_is_predefined(type))
        return;
    if (__atomic_sub_fetch(&type->refs, 1, __ATOMIC_ACQ_REL) == 0)
        pd_type_destroy(type);
}

int pd_type_set_contents(struct ompi_datatype_t *type, int combiner, int ni,
                         const int *ints, int na, const MPI_Aint *aints,
                         int nd, struct ompi_datatype_t *const *types)
{
    size_t bytes = sizeof(struct pd_type_contents) +
                   (size_t)na * sizeof(MPI_Aint) +
                   (size_t)nd * sizeof(*types) + (size_t)ni * sizeof(int);
    struct pd_type_contents *c = calloc(1, bytes);
    if (c == NULL)
        return -1;
    c->combiner = combiner;
    c->ni = ni;
    c->na = na;
    c->nd = nd;
    /* Widest members first, so each array is aligned. */
    c->aints = (MPI_Aint *)(c + 1);
    c->types = (struct ompi_datatype_t **)(c->aints + na);
    c->ints = (int *)(c->types + nd);
    if (na > 0)
        memcpy(c->aints, aints, (size_t)na * sizeof(MPI_Aint));
    if (ni > 0)
        memcpy(c->ints, ints, (size_t)ni * sizeof(int));
    for (int i = 0; i < nd; i++) {
        c->types[i] = types[i];
        pd_type_retain(types[i]);
    }
    type->contents = c;
    return 0;
}

/* The first part's bytes of a pair type's item whose parts hold pair
 * bytes (its size, not its padded extent; id: the pair's): half of a pair
 * of twins, else all but the trailing int. A pair travels padded, so its
 * int begins at the same offset. */
static size_t pd_pair_first(int id, size_t pair)
{
    switch (id) {
    case PD_T_2INT: case PD_T_2INTEGER: case PD_T_2REAL: case PD_T_2DBLPREC:
        return pair / 2;
    default:
        return pair - sizeof(int);
    }
}

bool pd_type_elements_in(const struct ompi_datatype_t *type, size_t bytes,
                         size_t *elements)
{
    size_t packed = type->packed;
    if (packed == 0)
        return bytes == 0;
    size_t whole = bytes / packed, rest = bytes % packed;
    *elements += whole * type->elements;
    if (rest == 0)
        return true;
    if (type->base_id != PD_BASE_MIXED) {
        /* One kind of element, all the same size; a pair's parts, per
         * its two elements, count apart. */
        size_t each = packed / type->base_count;
        size_t per = type->elements / type->base_count;
        *elements += rest / each * per;
        size_t part = rest % each;
        if (part == 0)
            return true;
        if (per == 2 &&
            part == pd_pair_first(type->base_id,
                                  type->size / type->base_count)) {
            *elements += 1;
            return true;
        }
        return false;
    }
    /* Mixed elements come from a struct, or from copies of one in the
     * stream order its constructor gives: the partial item's blocks in
     * turn, whole ones counted, the one the bytes end in taken apart. */
    const struct pd_type_contents *c = type->contents;
    if (c == NULL || c->nd == 0)
        return false;
    if (c->combiner != MPI_COMBINER_STRUCT)
        return pd_type_elements_in(c->types[0], rest, elements);
    for (int i = 0; i < c->nd && rest > 0; i++) {
        const struct ompi_datatype_t *t = c->types[i];
        size_t block = (size_t)c->ints[1 + i] * t->packed;
        size_t take = block < rest ? block : rest;
        if (!pd_type_elements_in(t, take, elements))
            return false;
        rest -= take;
    }
    return rest == 0;
}

size_t pd_type_bytes_of_elements(const struct ompi_datatype_t *type,
                                 size_t elements)
{
    if (type->elements == 0)
        return 0;
    size_t whole = elements / type->elements,
           rest = elements % type->elements;
    size_t bytes = whole * type->packed;
    if (rest == 0)
        return bytes;
    if (type->base_id != PD_BASE_MIXED) {
        size_t each = type->packed / type->base_count;
        size_t per = type->elements / type->base_count;
        bytes += rest / per * each;
        if (rest % per != 0)        /* a pair's first part */
            bytes += pd_pair_first(type->base_id,
                                   type->size / type->base_count);
        return bytes;
    }
    /* The partial item's first rest elements, as pd_type_elements_in
     * walks them. */
    const struct pd_type_contents *c = type->contents;
    if (c == NULL || c->nd == 0)
        return bytes;
    if (c->combiner != MPI_COMBINER_STRUCT)
        return bytes + pd_type_bytes_of_elements(c->types[0], rest);
    for (int i = 0; i < c->nd && rest > 0; i++) {
        const struct ompi_datatype_t *t = c->types[i];
        size_t block = (size_t)c->ints[1 + i] * t->elements;
        size_t take = block < rest ? block : rest;
        bytes += pd_type_bytes_of_elements(t, take);
        rest -= take;
    }
    return bytes;
}

bool pd_type_stream_runs(const struct ompi_datatype_t *type, size_t count,
                         pd_type_run_fn visit, void *ctx)
{
    if (count == 0 || type->base_count == 0)
        return true;
    if (type->base_id != PD_BASE_MIXED)
        return visit(ctx, type, count * type->base_count);
    /* Mixed elements: a struct's blocks in turn, item by item, or whole
     * copies of the one type another constructor repeats. */
    const struct pd_type_contents *c = type->contents;
    if (c == NULL || c->nd == 0)
        return false;
    if (c->combiner != MPI_COMBINER_STRUCT)
        return pd_type_stream_runs(c->types[0],
                                   count * (type->packed / c->types[0]->packed),
                                   visit, ctx);
    for (size_t k = 0; k < count; k++)
        for (int i = 0; i < c->nd; i++)
            if (!pd_type_stream_runs(c->types[i], (size_t)c->ints[1 + i],
                                     visit, ctx))
                return false;
    return true;
}

int pd_type_combiner(const struct ompi_datatype_t *type)
{
    return type->contents != NULL ? type->contents->combiner
                                  : MPI_COMBINER_NAMED;
}

void pd_type_contents_counts(const struct ompi_datatype_t *type, int *ni,
                             int *na, int *nd)
{
    const struct pd_type_contents *c = type->contents;
    *ni = c != NULL ? c->ni : 0;
    *na = c != NULL ? c->na : 0;
    *nd = c != NULL ? c->nd : 0;
}

void pd_type_contents_get(const struct ompi_datatype_t *type, int *ints,
                          MPI_Aint *aints, struct ompi_datatype_t **types)
{
    const struct pd_type_contents *c = type->contents;
    if (c == NULL)
        return;
    /* An empty array may come as NULL, which memcpy must not see. */
    if (c->ni > 0)
        memcpy(ints, c->ints, (size_t)c->ni * sizeof(int));
    if (c->na > 0)
        memcpy(aints, c->aints, (size_t)c->na * sizeof(MPI_Aint));
    for (int i = 0; i < c->nd; i++) {
        types[i] = c->types[i];
        pd_type_retain(types[i]);   /* the caller frees what it gets */
    }
}

/* The item layout of any type (predefined: one run of its extent). */
static const struct pd_type_node *pd_type_map(const struct ompi_datatype_t *t,
                                              struct pd_type_node **owned)
{
    if (t->map != NULL || t->packed == 0)
        return t->map;
    return pd_node_leaf(owned, 1, 0, t->packed);
}

/* t's map points into the maps of the n types: keep them alive. */
static int pd_type_use(struct ompi_datatype_t *t,
                       const struct pd_type_block *b, size_t n)
{
    t->uses = calloc(n ? n : 1, sizeof(*t->uses));
    if (t->uses == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct ompi_datatype_t *o = (struct ompi_datatype_t *)b[i].type;
        if (b[i].blocklen == 0 || pd_type_is_predefined(o))
            continue;
        pd_type_retain(o);
        t->uses[t->n_uses++] = o;
    }
    return 0;
}

static void pd_type_finish(struct ompi_datatype_t *t)
{
    t->magic = PD_MAGIC_TYPE;
    t->id = PD_T_DERIVED;
    t->refs = 1;
    t->committed = false;
    /* Plain bytes end to end: one run from the item's start, items
     * abutting. */
    t->contiguous = t->extent >= 0 && t->packed == (size_t)t->extent &&
                    t->lb == 0 &&
                    (t->packed == 0 || (t->true_lb == 0 &&
                                        pd_map_is_dense(t->map)));
}

struct ompi_datatype_t *pd_type_new_blocks(const struct pd_type_block *b,
                                           size_t n, size_t reps,
                                           ptrdiff_t rep_stride, bool is_struct)
{
    struct ompi_datatype_t *t = calloc(1, sizeof(*t));
    struct pd_type_child *kids = calloc(n ? n : 1, sizeof(*kids));
    if (t == NULL || kids == NULL)
        goto no_memory;
    pd_wide lb = 0, ub = 0, tlb = 0, tub = 0, size = 0, packed = 0, elems = 0,
           parts = 0;
    bool any = false;
    int base = PD_BASE_MIXED;
    size_t align = 1, m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct ompi_datatype_t *o = b[i].type;
        if (b[i].blocklen == 0)
            continue;
        pd_wide first = b[i].disp;
        pd_wide last = first + (pd_wide)(b[i].blocklen - 1) * (pd_wide)o->extent;
        pd_wide lo = first < last ? first : last, hi = first < last ? last : first;
        pd_wide blb = lo + o->lb, bub = hi + o->lb + (pd_wide)o->extent;
        pd_wide btlb = lo + o->true_lb;
        pd_wide btub = hi + o->true_lb + (pd_wide)o->true_extent;
        if (!any || blb < lb) lb = blb;
        if (!any || bub > ub) ub = bub;
        if (!any || btlb < tlb) tlb = btlb;
        if (!any || btub > tub) tub = btub;
        base = !any || base == o->base_id ? o->base_id : PD_BASE_MIXED;
        any = true;
        size += (pd_wide)b[i].blocklen * (pd_wide)o->size;
        packed += (pd_wide)b[i].blocklen * (pd_wide)o->packed;
        elems += (pd_wide)b[i].blocklen * (pd_wide)o->base_count;
        parts += (pd_wide)b[i].blocklen * (pd_wide)o->elements;
        size_t a = pd_type_align(o);
        align = a > align ? a : align;
        if (!pd_wide_fits(last) || !pd_wide_fits(bub) || !pd_wide_fits(btub))
            goto overflow;
        if (o->packed > 0) {
            const struct pd_type_node *item = pd_type_map(o, &t->owned);
            const struct pd_type_node *blk =
                item == NULL ? NULL
                             : pd_node_repeat(&t->owned, item, b[i].blocklen,
                                              (ptrdiff_t)o->extent);
            if (blk == NULL)
                goto no_memory;
            kids[m++] = (struct pd_type_child){ b[i].disp, 0, blk };
        }
    }
    if (!any)
        base = n > 0 ? b[0].type->base_id : PD_T_BYTE;
    if (is_struct && any && align > 1) {
        /* C pads a struct to a multiple of its most aligned member. */
        pd_wide extent = ub - lb, rem = extent % (pd_wide)align;
        if (rem != 0)
            ub += (pd_wide)align - rem;
    }
    if (reps > 1) {
        pd_wide shift = (pd_wide)(reps - 1) * rep_stride;
        if (shift < 0) {
            lb += shift;
            tlb += shift;
        } else {
            ub += shift;
            tub += shift;
        }
    }
    size *= (pd_wide)reps;
    packed *= (pd_wide)reps;
    elems *= (pd_wide)reps;
    parts *= (pd_wide)reps;
    if (!pd_wide_fits(lb) || !pd_wide_fits(ub) || !pd_wide_fits(tlb) ||
        !pd_wide_fits(tub) || !pd_wide_fits(size) || !pd_wide_fits(packed) ||
        !pd_wide_fits(ub - lb) || !pd_wide_fits(elems) || !pd_wide_fits(parts))
        goto overflow;
    t->lb = (ptrdiff_t)lb;
    t->extent = (ptrdiff_t)(ub - lb);
    t->true_lb = (ptrdiff_t)tlb;
    t->true_extent = (size_t)(tub - tlb);
    t->size = (size_t)size;
    t->packed = (size_t)packed;
    t->base_id = base;
    t->base_count = (size_t)elems;
    t->elements = (size_t)parts;
    t->align = align;
    if (packed > 0) {
        t->map = pd_node_seq(&t->owned, reps, rep_stride, kids, m);
        if (t->map == NULL)
            goto no_memory;
    }
    free(kids);
    if (pd_type_use(t, b, n) != 0)
        goto no_memory;
    pd_type_finish(t);
    return t;
overflow:
    errno = EOVERFLOW;
    goto fail;
no_memory:
    errno = ENOMEM;
fail:
    if (t != NULL)
        pd_nodes_free(t->owned);
    free(t);
    free(kids);
    return NULL;
}

struct ompi_datatype_t *pd_type_new_resized(const struct ompi_datatype_t *old,
                                            ptrdiff_t lb, ptrdiff_t extent)
{
    struct ompi_datatype_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    t->size = old->size;
    t->packed = old->packed;
    t->base_id = old->base_id;
    t->base_count = old->base_count;
    t->elements = old->elements;
    t->align = pd_type_align(old);
    t->true_lb = old->true_lb;
    t->true_extent = old->true_extent;
    t->lb = lb;
    t->extent = extent;
    t->map = pd_type_map(old, &t->owned);
    struct pd_type_block used = { 0, 1, old };
    if ((old->packed > 0 && t->map == NULL) || pd_type_use(t, &used, 1) != 0) {
        pd_nodes_free(t->owned);
        free(t);
        errno = ENOMEM;
        return NULL;
    }
    pd_type_finish(t);
    return t;
}

struct ompi_datatype_t *pd_type_new_dup(const struct ompi_datatype_t *old)
{
    struct ompi_datatype_t *t = pd_type_new_resized(old, old->lb, old->extent);
    if (t != NULL) {
        t->committed = old->committed;
        snprintf(t->name, sizeof(t->name), "%s", old->name);
    }
    return t;
}

void pd_type_pack(const struct ompi_datatype_t *type, const void *buf,
                  size_t from, size_t n, void *stream)
{
    pd_map_pack(type->map, type->packed, (ptrdiff_t)type->extent, buf, from,
                n, stream);
}

void pd_type_unpack(const struct ompi_datatype_t *type, void *buf,
                    size_t from, size_t n, const void *stream)
{
    pd_map_unpack(type->map, type->packed, (ptrdiff_t)type->extent, buf, from,
                  n, stream);
}

size_t pd_type_span(const struct ompi_datatype_t *type, size_t n)
{
    if (n == 0)
        return 0;
    size_t stride = type->extent < 0 ? (size_t)0 - (size_t)type->extent
                                     : (size_t)type->extent;
    return (n - 1) * stride + type->true_extent;
}

void *pd_type_alloc_items(const struct ompi_datatype_t *type, size_t n,
                          char **items)
{
    size_t span = pd_type_span(type, n);
    char *mem = malloc(span ? span : 1);
    /* Items running downward start at the top of the span. */
    ptrdiff_t below = type->extent < 0 && n > 0
                          ? (ptrdiff_t)(n - 1) * -type->extent : 0;
    if (mem != NULL)
        *items = mem - type->true_lb + below;
    return mem;
}
