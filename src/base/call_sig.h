/*
 * A collective call as ranks compare it before they move data: ranks in
 * different calls (one skipped or added a call, or passed another count,
 * root, op or kind of datatype) fail with both calls named instead of
 * mixing their data or handing a transport a message longer than the
 * receive posted for it.
 * The shared-memory arrival record and the host backend's agreement
 * (coll/agree.c) both carry it.
 */
#ifndef PD_BASE_CALL_SIG_H
#define PD_BASE_CALL_SIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pd_call_sig {
    uint8_t kind;                   /* enum pd_coll_kind */
    uint8_t op;                     /* reductions: enum pd_op_id; else 0 */
    uint8_t elem;                   /* enum pd_elem_kind: a reduction's, or
                                       a move's type signature */
    uint8_t unused;
    int32_t root;                   /* rooted calls; else -1 */
    uint64_t bytes;                 /* the whole call's bytes, same on all;
                                       0 where block lengths differ */
};

/* Inline: the shared-memory path compares on every step. */
static inline bool pd_call_sig_same(const struct pd_call_sig *a,
                                    const struct pd_call_sig *b)
{
    return a->kind == b->kind && a->root == b->root && a->bytes == b->bytes &&
           a->op == b->op && a->elem == b->elem;
}

/* "ranks are in different collectives: rank A is in ..., rank B in ..."
 * into buf. */
void pd_call_sig_mismatch(char *buf, size_t len, int rank_a,
                          const struct pd_call_sig *a, int rank_b,
                          const struct pd_call_sig *b);

#endif
