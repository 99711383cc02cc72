/*
 * Buffers of non-contiguous datatypes in communication: the data is
 * packed into one scratch buffer that the transport moves as plain bytes,
 * and what was received is unpacked from it into the user's buffer when
 * the call completes. Each block is count items of a type at a user
 * address, at a byte offset of the scratch buffer.
 */
#ifndef PD_CORE_TYPE_STAGE_H
#define PD_CORE_TYPE_STAGE_H

#include <stdbool.h>
#include <stddef.h>

struct ompi_datatype_t;

struct pd_stage_block {
    char *user;
    struct ompi_datatype_t *type;   /* a reference, let go with the stage */
    size_t count;
    size_t offset;
    bool in;                        /* packed before the call */
    bool out;                       /* unpacked after it */
};

struct pd_type_stage {
    char *packed;                   /* the scratch buffer */
    size_t bytes;
    size_t n, cap;
    struct pd_stage_block *blocks;
    /* Device memory, which the host cannot pack from: the blocks point
     * into mirror, a host copy of mirror_bytes at device address
     * mirror_of, which copy_back (0: done) returns there once the
     * out-blocks are unpacked into it. */
    char *mirror;
    void *mirror_of;
    size_t mirror_bytes;
    int (*copy_back)(void *device, const void *host, size_t bytes);
    bool unpacked;                  /* piece by piece, as it arrived */
    struct pd_type_stage *next;     /* a request's list */
};

/* A stage with no blocks; NULL: out of memory. */
struct pd_type_stage *pd_stage_new(void);
/* One more block; -1: out of memory. */
int pd_stage_add(struct pd_type_stage *st, void *user,
                 struct ompi_datatype_t *type, size_t count, size_t offset,
                 bool in, bool out);
/* The scratch buffer, as large as the blocks reach, with the in-blocks
 * packed into it; -1: out of memory. */
int pd_stage_pack(struct pd_type_stage *st);
/* The out-blocks of st and the stages after it into the user's buffers,
 * as far as the first limit
 * bytes of the scratch buffer go (a receive's message may be shorter than
 * its buffer: the rest of the user's buffer stays as it was). -1: a
 * mirror did not go back to device memory. */
int pd_stage_unpack(const struct pd_type_stage *st, size_t limit);
/* Bytes [from, from + n) of what st's scratch buffer would hold, at
 * data, unpacked into the out-blocks now, while they are in the cache: a
 * message that arrives a piece at a time (in order, each piece once),
 * after which pd_stage_unpack leaves st alone. Only for a lone stage of
 * host memory (pd_stage_by_pieces). */
bool pd_stage_by_pieces(const struct pd_type_stage *st);
void pd_stage_unpack_piece(struct pd_type_stage *st, size_t from, size_t n,
                           const void *data);
/* ... and the other way: bytes [from, from + n) of what the in-blocks
 * pack to, packed to out now (st needs no scratch buffer for it). */
void pd_stage_pack_piece(const struct pd_type_stage *st, size_t from,
                         size_t n, void *out);
/* The same with the stage as a callback's context (a stream's or a
 * packed message's packer). */
void pd_stage_packer(void *st, size_t from, size_t n, void *out);
/* st and the stages after it. */
void pd_stage_free(struct pd_type_stage *st);

#endif
