/*
 * Point-to-point queues between the ranks of one host, in the caller's
 * area of a shared-memory segment (the world's, pd_shm_extra): one
 * single-producer, single-consumer byte ring per ordered pair of ranks,
 * and a doorbell per rank that a sleeping receiver waits on.
 *
 * Small messages travel in the ring (eager). A large one sends only a
 * request to send (RTS): the receiver, once a receive matches it, reads
 * the data straight from the sender's memory with process_vm_readv -- one
 * copy, which from 512 KiB the sender, when it polls, shares by writing
 * pieces into the receive buffer with process_vm_writev -- and
 * acknowledges it in a word of the pair's (or, when the
 * sender has more such messages in flight than words, in the sender's own
 * memory with process_vm_writev); or,
 * where the kernel forbids that (ptrace_scope, seccomp), the sender
 * copies the data into a shared-memory file that the receiver reads and
 * removes, and the send is complete once its RTS is in the ring.
 *
 * Like the collectives' half of backend/shm it knows bytes, ranks and
 * queues, never MPI's matching: service/p2p.c does that. The caller
 * serializes pushes to one destination and reads from one source.
 */
#ifndef PD_BACKEND_SHM_PAIRS_H
#define PD_BACKEND_SHM_PAIRS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "backend/shm/shm.h"

struct pd_shm_pairs;

enum pd_pair_kind {
    PD_PAIR_EAGER = 1,      /* the payload follows the header */
    PD_PAIR_RTS = 2,        /* the data stays with the sender */
    PD_PAIR_WRAP = 3,       /* (internal) the ring goes on at its start */
};

enum pd_pair_pull {
    PD_PULL_CMA = 0,        /* addr in the sender's memory */
    PD_PULL_FILE = 1,       /* a shared-memory file named by the payload */
    PD_PULL_STREAM = 2,     /* packed by the sender as the receiver reads
                               (pd_shm_pairs_stream_open) */
};

/* Packs bytes [from, from + n) of a message's packed stream to out. */
typedef void (*pd_pair_pack_fn)(void *ctx, size_t from, size_t n, void *out);

/* One record's header, a cache line. An eager message's data starts in
 * its second half (up to 32 bytes travel in the header's line alone); an
 * RTS keeps its fields there and any payload (a file's name) follows the
 * line. */
struct pd_pair_msg {
    uint64_t stamp;         /* (internal) where the record starts in the
                               ring's stream, plus one: set last, it says
                               the record is whole */
    uint32_t payload;       /* eager: the message's bytes; RTS: the bytes
                               after the header */
    uint16_t kind;          /* enum pd_pair_kind */
    uint16_t pull;          /* RTS: enum pd_pair_pull */
    uint64_t cid;           /* the communicator (its id's hash) */
    int32_t src;            /* the sender's rank in that communicator */
    int32_t tag;
    /* RTS only (an eager message's data lies here): */
    uint64_t bytes;         /* the message's bytes */
    uint64_t addr;          /* memory: where the data is in the sender */
    uint64_t ack;           /* ... and the sender's own word to set when
                               the pair's are all in use */
    uint32_t slot;          /* (internal) the pair's word, or none */
    uint32_t gen;           /* (internal) what to write there */
};

#define PD_PAIR_INLINE_OFFSET 32

/* The bytes of the message m announces, and where its payload is. */
static inline uint64_t pd_pair_bytes(const struct pd_pair_msg *m)
{
    return m->kind == PD_PAIR_EAGER ? m->payload : m->bytes;
}
static inline const void *pd_pair_payload(const struct pd_pair_msg *m)
{
    return m->kind == PD_PAIR_EAGER
               ? (const void *)((const unsigned char *)m +
                                PD_PAIR_INLINE_OFFSET)
               : (const void *)(m + 1);
}

/* Bytes of the area pairs for size ranks need. */
size_t pd_shm_pairs_bytes(int size);

/* Collective over the segment's ranks (at MPI_Init): lay the area out and
 * find which ranks may read which others' memory (cma false: none, the
 * file path forced). */
int pd_shm_pairs_open(struct pd_shm_comm *seg, bool cma,
                      struct pd_shm_pairs **out, struct pd_backend_error *err);
void pd_shm_pairs_close(struct pd_shm_pairs *p);

int pd_shm_pairs_rank(const struct pd_shm_pairs *p);
int pd_shm_pairs_size(const struct pd_shm_pairs *p);
/* The largest payload sent eager. */
size_t pd_shm_pairs_eager(const struct pd_shm_pairs *p);
/* Whether local rank dst may read this rank's memory. */
bool pd_shm_pairs_cma(const struct pd_shm_pairs *p, int dst);

/* Append m (its kind, payload and fields set) and m->payload bytes at
 * payload to the ring to dst, waking dst if it sleeps; false when the
 * ring has no room now. */
bool pd_shm_pairs_push(struct pd_shm_pairs *p, int dst,
                       struct pd_pair_msg *m, const void *payload);
/* The oldest record from src, or NULL; valid until pd_shm_pairs_pop. */
const struct pd_pair_msg *pd_shm_pairs_peek(struct pd_shm_pairs *p, int src);
/* pd_shm_pairs_peek, polling for a record as long as a waiting rank
 * polls before it yields (not at all where ranks share processors). */
const struct pd_pair_msg *pd_shm_pairs_peek_polling(struct pd_shm_pairs *p,
                                                    int src);
/* Whether a record waits in any ring to this rank: a look without
 * locks, cheaper than peeking at each source in turn. */
bool pd_shm_pairs_arrived(struct pd_shm_pairs *p);
void pd_shm_pairs_pop(struct pd_shm_pairs *p, int src,
                      const struct pd_pair_msg *m);

/* What a stream's receiver does with each piece: bytes [from, from + n)
 * of the message, at data (in order, each once). */
typedef void (*pd_pair_got_fn)(void *ctx, size_t from, size_t n,
                               const void *data);

/* The receiver of an RTS from src: n bytes of its data to dst (with the
 * record's fields; name: the file's, for PD_PULL_FILE); for a stream
 * with got set, each piece to got(got_ctx, ...) as it lands instead,
 * dst left alone. -1 with why. */
int pd_shm_pairs_pull(struct pd_shm_pairs *p, int src,
                      const struct pd_pair_msg *rts, const char *name,
                      void *dst, size_t n, pd_pair_got_fn got, void *got_ctx,
                      char *why, size_t len);
/* ... then tell src it is done with it: its acknowledgement set (a
 * memory RTS), the file removed (a file RTS). */
void pd_shm_pairs_done(struct pd_shm_pairs *p, int src,
                       const struct pd_pair_msg *rts, const char *name);
/* The sender of memory RTS m (as pushed) to dst: whether dst offers it a
 * share of the copy now (a look, no more), and taking that share --
 * pieces written into dst's receive buffer until none is left; whether
 * it wrote any. m's data stays the sender's until m is acknowledged, and
 * dst acknowledges only once every piece taken is written. */
bool pd_shm_pairs_offered(struct pd_shm_pairs *p, int dst,
                          const struct pd_pair_msg *m);
bool pd_shm_pairs_help(struct pd_shm_pairs *p, int dst,
                       const struct pd_pair_msg *m);
/* The sender of memory RTS m (as pushed) to dst: whether dst is done
 * with it (word: the sender's own word that m->ack names). True once
 * per RTS: the pair's word goes back for reuse then. */
bool pd_shm_pairs_acked(struct pd_shm_pairs *p, int dst,
                        const struct pd_pair_msg *m,
                        const _Atomic uint32_t *word);

/*
 * A message of a non-contiguous datatype, packed while it moves: the
 * sender packs it a piece at a time into one of two buffers of its own,
 * which the receiver reads as they fill and marks read, so the packing
 * and the copy run side by side and the sender holds two pieces, not a
 * packed copy of the whole message. Every thread of either rank that
 * waits in pd_shm_pairs_pull or polls (pd_shm_pairs_stream_advance)
 * moves the packing on, so two ranks that stream to each other at once
 * both get through.
 *
 * Messages of fewer bytes than this go packed whole; so do those to a
 * rank whose memory this one may not read, or that this one may not read
 * (pd_shm_pairs_stream_open says which).
 */
size_t pd_shm_pairs_stream_min(void);
/* Begin streaming total bytes to dst, packed by pack(ctx, ...): m
 * becomes its RTS (kind, pull, bytes, addr and gen set; the caller sets
 * the rest and ack, and pushes it). False: not possible now (another
 * stream to dst is under way, no memory, or either side may not read
 * the other's memory); pack the message whole instead. */
bool pd_shm_pairs_stream_open(struct pd_shm_pairs *p, int dst,
                              struct pd_pair_msg *m, size_t total,
                              pd_pair_pack_fn pack, void *ctx);
/* Whether a stream of this rank's is under way. */
bool pd_shm_pairs_streaming(struct pd_shm_pairs *p);
/* Pack what the receivers of this rank's streams have room for; whether
 * anything was packed. */
bool pd_shm_pairs_stream_advance(struct pd_shm_pairs *p);
/* The stream to dst is over (acknowledged, or given up): dst may be
 * streamed to again. */
void pd_shm_pairs_stream_close(struct pd_shm_pairs *p, int dst);

/* The fallback: bytes at buf copied into a new shared-memory file whose
 * name goes to name (len >= 64). -1 with why. */
int pd_shm_pairs_file(const void *buf, size_t bytes, uint64_t key_hash,
                      char *name, size_t len, char *why, size_t whylen);

/* This rank's doorbell: read it before looking at the queues, then idle
 * with what was read; a record in its rings, an acknowledgement or
 * pd_shm_pairs_wake_self ends the idling (one that begins to sleep just
 * as it comes may nap 1 ms). waited_ns: how long the caller has waited so
 * far -- it polls at first, then yields, then sleeps (at most 1 ms a
 * call). */
uint32_t pd_shm_pairs_bell(struct pd_shm_pairs *p);
void pd_shm_pairs_idle(struct pd_shm_pairs *p, uint32_t bell,
                       int64_t waited_ns);
/* Ring this rank's own doorbell where one of its threads sleeps on it
 * (something completed that the sleeper may wait for). */
void pd_shm_pairs_wake_self(struct pd_shm_pairs *p);

#endif
