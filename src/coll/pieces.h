/*
 * A call's bytes a piece at a time, where a buffer is of a non-contiguous
 * datatype (struct pd_coll's stages, not packed): no packed copy of the
 * whole message is made. Shared memory takes the pieces as they go
 * (struct pd_shm_mover); every other path takes large calls as a series
 * of smaller calls of the same kind on packed segments (pd_coll_segments).
 */
#ifndef PD_COLL_PIECES_H
#define PD_COLL_PIECES_H

#include <stdbool.h>
#include <stddef.h>

#include "coll/coll.h"

struct pd_hier;

/* The bytes a call moves a piece at a time: packed from a stage's
 * in-blocks or read from a plain input, unpacked into a stage's
 * out-blocks or written to a plain output. */
struct pd_pieces {
    const struct pd_type_stage *in;
    const char *plain_in;
    struct pd_type_stage *out;
    char *plain_out;
};

/* c's stages as pieces; false where c has none. The input is the send
 * buffer, or in place (or a broadcast's) the receive buffer. */
bool pd_pieces_of(const struct pd_coll *c, struct pd_pieces *p);

/* Bytes [from, from + n) of the input to `to`; of the output from data
 * (the callbacks of struct pd_shm_mover, with p as their context). */
void pd_pack_piece(void *p, size_t from, size_t n, void *to);
void pd_unpack_piece(void *p, size_t from, size_t n, const void *data);

/* Off shared memory (h, comm's hierarchy, NULL or not one host's): a
 * broadcast, allreduce or reduce (by a predefined op) of more than a
 * segment's bytes as calls of the same kind on segments of it, on every
 * rank alike whatever its datatype; a stage's segment packed into one
 * scratch buffer, a plain buffer's taken where it lies. So no rank holds
 * a packed copy of more than a segment. PD_BACKEND_ERR_UNSUPPORTED where
 * c is not such a call. */
int pd_coll_segments(const struct pd_coll *c, struct pd_hier *h,
                     struct pd_fail *fail);

/* Whether a call without stages may be one for pd_coll_segments. */
bool pd_coll_may_segment(const struct pd_coll *c);

#endif
