/*
 * Shared-memory transport for the ranks of one communicator that share a
 * host: the intra-host half of the hierarchical host path (coll/hier.c).
 *
 * One POSIX shared-memory segment per communicator per host. Ranks signal
 * each other through per-rank sequence counters in the segment and move
 * data through per-rank slots, double buffered so that consecutive steps
 * overlap; a waiting rank spins, then yields, then sleeps on a futex, and
 * notices a local rank that died instead of waiting for it forever.
 *
 * Like a backend it sees buffers, element counts and sizes, a reduction
 * kernel -- never MPI handles. Results are bitwise identical on every
 * rank: every element is reduced once, in local-rank order.
 */
#ifndef PD_BACKEND_SHM_H
#define PD_BACKEND_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/backend.h"
#include "base/call_sig.h"
#include "base/coll_kind.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pd_shm_comm;

/* The smallest chunk: a page per slot. */
#define PD_SHM_MIN_CHUNK ((size_t)4 << 10)

struct pd_shm_init {
    int rank;                       /* local rank: 0 creates the segment */
    int size;                       /* local ranks on this host */
    const int *comm_ranks;          /* communicator rank of each, for messages */
    const int *pids;                /* process id of each, to watch */
    struct pd_store_client *store;  /* to pass the segment's name */
    const char *store_prefix;       /* unique per communicator and host */
    const char *job_key;            /* part of the segment's name */
    int timeout_ms;                 /* bounds every wait */
    long spin;                      /* microseconds of polling before
                                       yielding; < 0: automatic */
    size_t chunk;                   /* slot bytes per rank per buffer */
    bool chunk_fixed;               /* chunk was asked for: never smaller
                                       (else halved while /dev/shm lacks
                                       room, down to PD_SHM_MIN_CHUNK) */
    size_t stream;                  /* pieces of at least this many bytes
                                       go in with non-temporal stores;
                                       0: never */
    size_t extra;                   /* bytes of an area at the end of the
                                       segment for the caller's own use
                                       (pd_shm_extra); 0: none */
};

/* Bytes of the segment pd_shm_comm_create makes for size ranks. */
size_t pd_shm_segment_bytes(int size, size_t chunk);

/* Collective over the local ranks. The segment's name leaves the file
 * system as soon as every rank has mapped it, so nothing is left behind in
 * /dev/shm even if a rank dies later. */
int pd_shm_comm_create(const struct pd_shm_init *init,
                       struct pd_shm_comm **out, struct pd_backend_error *err);
void pd_shm_comm_destroy(struct pd_shm_comm *comm);

/* One line for logs: ranks, processors, whether oversubscribed, chunk
 * and spin. */
void pd_shm_describe(const struct pd_shm_comm *comm, char *buf, size_t len);

/* The caller's area (init.extra bytes, zeroed, page aligned), NULL when
 * none was asked for. */
void *pd_shm_extra(struct pd_shm_comm *comm);

/* The chunk the segment was made with: init's, or less when /dev/shm
 * had no room for that one. */
size_t pd_shm_chunk(const struct pd_shm_comm *comm);

/* The call the following operations serve (until the next one is set). */
void pd_shm_set_call(struct pd_shm_comm *comm, const struct pd_call_sig *call);

/* Calls that move their data elsewhere (a device library's collective),
 * compared between the local ranks without a wait: each rank notes call
 * number n (the communicator's call order) before it starts it, then
 * compares it with what the others noted for n. A rank that noted n with
 * another call gives PD_BACKEND_ERR_MISMATCH, both calls named in err; a
 * rank not there yet (or already past n + 3) is not compared -- it
 * compares when it notes its own. */
void pd_shm_note_call(struct pd_shm_comm *comm, uint32_t n,
                      const struct pd_call_sig *call);
int pd_shm_compare_call(struct pd_shm_comm *comm, uint32_t n,
                        const struct pd_call_sig *call,
                        struct pd_backend_error *err);

/* A buffer the caller lays out, moved a piece at a time: pack puts bytes
 * [from, from + n) of its data at out; unpack takes n bytes at data as
 * bytes [from, from + n). Each piece once, in order. */
struct pd_shm_mover {
    void (*pack)(void *ctx, size_t from, size_t n, void *out);
    void (*unpack)(void *ctx, size_t from, size_t n, const void *data);
    void *ctx;
};

/* A reduction of count elements of elem_size bytes at in. Each rank keeps
 * elements [want_from, want_to) of the result, element want_from at out
 * (an empty range keeps nothing): allreduce keeps all, reduce only at the
 * root, reduce-scatter each its block. out may be in itself, or lie in it
 * no later than element want_from (the in-place reduce-scatter). With
 * mover (not NULL), the input and the kept result are mover's bytes
 * instead, a chunk at a time: input element e is packed from byte
 * e * elem_size, kept element want_from + e unpacked to byte
 * e * elem_size (as at out). */
int pd_shm_reduce(struct pd_shm_comm *comm, const void *in, void *out,
                  const struct pd_shm_mover *mover, size_t count,
                  size_t elem_size, pd_reduce_fn fn, const void *ctx,
                  size_t want_from, size_t want_to,
                  struct pd_backend_error *err);

/* root's bytes at buf to every rank whose keep is true; with mover (not
 * NULL), those bytes are mover's instead: packed straight into shared
 * memory by the root and unpacked straight out of it by the others, a
 * step at a time, with no copy of the whole message. */
int pd_shm_bcast(struct pd_shm_comm *comm, void *buf,
                 const struct pd_shm_mover *mover, size_t bytes, int root,
                 bool keep, struct pd_backend_error *err);

/* Rank i's bytes[i] bytes to offset offs[i] of out on every rank; in is
 * this rank's block (NULL: already in place in out). With mover (not
 * NULL), in and out are mover's bytes instead: this rank's block is
 * packed from its bytes [0, bytes) -- in place, [offs[rank], ...) -- and
 * every block unpacked as its bytes at offs[i]. */
int pd_shm_allgatherv(struct pd_shm_comm *comm, const void *in, void *out,
                      const struct pd_shm_mover *mover, const size_t *offs,
                      const size_t *bytes, struct pd_backend_error *err);

int pd_shm_barrier(struct pd_shm_comm *comm, struct pd_backend_error *err);

/* Rank r's block for rank d is send_bytes[d] bytes at in + send_offs[d];
 * what it gets from rank s goes to out + recv_offs[s], recv_bytes[s]
 * bytes (equal to what s sends it). in may be out with the same layout
 * both ways (in place). With mover (not NULL), in and out are mover's
 * bytes at those offsets instead. PD_BACKEND_ERR_UNSUPPORTED, before any
 * step, when the chunk cannot give every rank a piece. */
int pd_shm_alltoallv(struct pd_shm_comm *comm, const void *in,
                     const size_t *send_offs, const size_t *send_bytes,
                     void *out, const size_t *recv_offs,
                     const size_t *recv_bytes,
                     const struct pd_shm_mover *mover,
                     struct pd_backend_error *err);

#ifdef __cplusplus
}
#endif

#endif
