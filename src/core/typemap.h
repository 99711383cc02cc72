/*
 * Where a datatype's bytes lie, and the one engine that packs them into a
 * contiguous stream and unpacks them back.
 *
 * An item's layout is a tree of nodes. A node is count repetitions, stride
 * bytes apart, of a body: either len plain bytes (a leaf) or a sequence of
 * children, each a node at a displacement. Every MPI constructor maps onto
 * it without expanding its blocks (a vector of a million doubles is one
 * leaf), and the engine can start anywhere in the stream, so a message can
 * be packed piece by piece.
 */
#ifndef PD_CORE_TYPEMAP_H
#define PD_CORE_TYPEMAP_H

#include <stdbool.h>
#include <stddef.h>

struct pd_type_node;

struct pd_type_child {
    ptrdiff_t disp;                 /* bytes from the repetition's start */
    size_t before;                  /* packed bytes of the earlier children */
    const struct pd_type_node *node;
};

struct pd_type_node {
    size_t count;                   /* repetitions, at least 1 */
    ptrdiff_t stride;
    size_t body;                    /* packed bytes of one repetition, > 0 */
    size_t len;                     /* a leaf's bytes (n == 0) */
    struct pd_type_node *next_owned;    /* the owning type's list */
    size_t n;
    struct pd_type_child child[];
};

/* The packed bytes of a whole node: count * body. */
static inline size_t pd_node_total(const struct pd_type_node *nd)
{
    return nd->count * nd->body;
}

/*
 * Building a layout. Nodes are allocated onto *owned (the new type's
 * list, freed with pd_nodes_free); they may point at nodes of older types,
 * which the new type keeps alive by holding a reference to them.
 */
/* count repetitions of len plain bytes, stride apart. NULL: no memory. */
struct pd_type_node *pd_node_leaf(struct pd_type_node **owned, size_t count,
                                  ptrdiff_t stride, size_t len);
/* blocklen copies of an item of layout item (extent apart), as one node:
 * merged into a single leaf where the copies abut. */
const struct pd_type_node *pd_node_repeat(struct pd_type_node **owned,
                                          const struct pd_type_node *item,
                                          size_t blocklen, ptrdiff_t extent);
/* count repetitions, stride apart, of the n children (disp, node) --
 * before is filled in, and leaves that abut are merged. */
const struct pd_type_node *pd_node_seq(struct pd_type_node **owned,
                                       size_t count, ptrdiff_t stride,
                                       const struct pd_type_child *children,
                                       size_t n);
void pd_nodes_free(struct pd_type_node *owned);

/* Bytes [from, from + n) of the packed stream of items laid out by map
 * (item k at buf + k * extent, each item packed bytes) copied out to
 * stream (pack) or in from it (unpack). */
void pd_map_pack(const struct pd_type_node *map, size_t packed,
                 ptrdiff_t extent, const void *buf, size_t from, size_t n,
                 void *stream);
void pd_map_unpack(const struct pd_type_node *map, size_t packed,
                   ptrdiff_t extent, void *buf, size_t from, size_t n,
                   const void *stream);

/* True when the layout is one run of plain bytes starting at offset 0. */
bool pd_map_is_dense(const struct pd_type_node *map);

#endif
