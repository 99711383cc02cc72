/*
 * The one interface every collective backend implements.
 *
 * A backend sees buffers, element counts and sizes, a reduction kernel and
 * a tag -- never MPI handles or environment variables (core/ translates
 * those), and never sockets of the store (it gets a client from boot/).
 * An operation a backend lacks is left NULL; route/ then falls back or
 * reports a clear error.
 */
#ifndef PD_BACKEND_BACKEND_H
#define PD_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/coll_kind.h"
#include "base/elem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Failure kinds a backend reports; core maps them to MPI error classes. */
enum pd_backend_status {
    PD_BACKEND_OK = 0,
    PD_BACKEND_ERR_IO = -1,         /* peer gone, connection lost */
    PD_BACKEND_ERR_TIMEOUT = -2,
    PD_BACKEND_ERR_NOMEM = -3,
    PD_BACKEND_ERR_UNSUPPORTED = -4,
    PD_BACKEND_ERR_INTERNAL = -5,
    PD_BACKEND_ERR_MISMATCH = -6,   /* ranks are in different calls */
};

/* Callers start it with msg[0] = '\0' rather than zeroing it all: it
 * is on the path of every call, and only a failure writes the rest. */
struct pd_backend_error {
    char msg[512];
    int peer;       /* the backend rank a wait that failed was for, where
                       the backend can tell; callers of agree, exchange and
                       the steps set -1 */
};

struct pd_store_client;

/* What a backend needs to form one communicator's context. */
struct pd_backend_comm_init {
    int rank;
    int size;
    struct pd_store_client *store;  /* rendezvous; NULL for size 1 */
    const char *store_prefix;       /* unique per communicator and job */
    int timeout_ms;                 /* every wait is bounded by this */
    const char *bind_host;          /* local address for data sockets */
    const char *bind_iface;         /* or an interface name; may be NULL */
    int p2p_sockets;                /* messages on sockets pdmpi reads and
                                       writes itself where it can (1), or
                                       through the backend's own (0) */
};

/* An algorithm core asks for (see core/algo.c); DEFAULT = the backend's. */
enum pd_algo {
    PD_ALGO_DEFAULT = 0,
    PD_ALGO_RING,               /* allreduce, allgather */
    PD_ALGO_BCUBE,              /* allreduce */
    PD_ALGO_BINOMIAL,           /* broadcast */
    PD_ALGO_CARRIED,            /* small calls: the data rides in the
                                   agreement (coll/coll_host.c) */
    PD_ALGO_PIPELINED,          /* allreduce and allgather as a ring,
                                   broadcast as a chain, in pieces on
                                   the calling thread */
};

/* One collective call in backend terms. */
struct pd_coll_args {
    const void *sendbuf;        /* NULL means in place (recvbuf holds input) */
    void *recvbuf;
    size_t count;               /* elements per rank */
    size_t elem_size;           /* bytes per element (datatype extent) */
    pd_reduce_fn reduce;        /* reductions only */
    const void *reduce_ctx;     /* passed to reduce */
    int root;                   /* rooted calls only */
    uint32_t tag;               /* same on every rank for the same call */
    enum pd_algo algorithm;     /* allreduce, broadcast, allgather */
};

/* One message of an exchange: to (send) or from (recv) one peer, of a
 * size both sides know. */
struct pd_p2p_op {
    int peer;
    int is_send;
    void *buf;
    size_t bytes;
};

struct pd_backend_comm;         /* backend-private per-communicator state */
struct pd_p2p_send;             /* an in-flight point-to-point send */

/* Where point-to-point messages go, called on the backend's receiving
 * thread in arrival order per sender:
 *   claim    (may be NULL; asked once a large message's header is in) a
 *            receive that matches it, taken for it, whose buffer holds
 *            all bytes: the payload is read straight there, one copy
 *            less; *token names it. NULL: none (the message goes the
 *            usual way).
 *   deliver  every message: with token NULL, data is malloc'ed and
 *            becomes the callee's; with a claim's token, the data lies in
 *            the claimed buffer already.
 *   unclaim  the payload of a claimed message could not be read (why):
 *            its receive fails.
 *   claim_pieces  (optional, asked before claim where the backend
 *            reads its own sockets) the receive that matches a message
 *            of bytes from src with tag, taken for it, that wants it a
 *            piece at a time: true with *token naming it; take then gets
 *            each piece in order (bytes [from, from + n) of the message
 *            at data, valid for the call only), and deliver the end,
 *            with data NULL and that token; unclaim where it broke off. */
typedef void *(*pd_p2p_claim_fn)(void *ctx, int src, int tag, size_t bytes,
                                 void **token);
typedef void (*pd_p2p_deliver_fn)(void *ctx, int src, int tag, void *data,
                                  size_t bytes, void *token);
typedef void (*pd_p2p_unclaim_fn)(void *ctx, void *token, const char *why);
typedef bool (*pd_p2p_claim_pieces_fn)(void *ctx, int src, int tag,
                                       size_t bytes, void **token);
typedef void (*pd_p2p_take_fn)(void *ctx, void *token, size_t from, size_t n,
                               const void *data);
struct pd_p2p_sink {
    void *ctx;
    pd_p2p_claim_fn claim;
    pd_p2p_deliver_fn deliver;
    pd_p2p_unclaim_fn unclaim;
    pd_p2p_claim_pieces_fn claim_pieces;
    pd_p2p_take_fn take;
};

/* A message's payload produced as it is written: pack(ctx, from, n, out)
 * puts its bytes [from, from + n) at out. */
struct pd_p2p_source {
    void (*pack)(void *ctx, size_t from, size_t n, void *out);
    void *ctx;
};

struct pd_backend_ops {
    const char *name;
    int (*comm_create)(const struct pd_backend_comm_init *init,
                       struct pd_backend_comm **out,
                       struct pd_backend_error *err);
    void (*comm_destroy)(struct pd_backend_comm *comm);
    int (*allreduce)(struct pd_backend_comm *comm,
                     const struct pd_coll_args *args,
                     struct pd_backend_error *err);
    int (*reduce)(struct pd_backend_comm *comm,
                  const struct pd_coll_args *args,
                  struct pd_backend_error *err);
    int (*bcast)(struct pd_backend_comm *comm,
                 const struct pd_coll_args *args,
                 struct pd_backend_error *err);
    /* sendbuf holds count elements; recvbuf receives size * count. */
    int (*allgather)(struct pd_backend_comm *comm,
                     const struct pd_coll_args *args,
                     struct pd_backend_error *err);
    int (*barrier)(struct pd_backend_comm *comm, uint32_t tag,
                   struct pd_backend_error *err);
    /* Post every message, then wait for all of them: the building block
     * of gather/scatter, the v-variants and all-to-all. Messages of one
     * exchange between the same two ranks travel in op order. */
    int (*exchange)(struct pd_backend_comm *comm, const struct pd_p2p_op *ops,
                    size_t n, uint32_t tag, struct pd_backend_error *err);
    /* Every rank's record into all, rank r's at all + r * stride, on a
     * channel no other step uses; a barrier too. This rank's is `bytes`
     * (<= stride) bytes at mine; another's may have any length, so ranks
     * in different calls that send records of different sizes still
     * meet: each slot keeps the first stride bytes of its record, zeros
     * after a shorter one. A backend whose
     * transport cannot survive a message longer than the receive posted
     * for it (gloo's aborts the process) sets this, and core/coll then
     * has the ranks agree on the call before every step and exchange, so
     * ranks in different calls fail instead. */
    int (*agree)(struct pd_backend_comm *comm, const void *mine, size_t bytes,
                 void *all, size_t stride, uint32_t tag,
                 struct pd_backend_error *err);
    /* A one-way agreement on agree's channel, for a broadcast: root
     * sends its `bytes` at mine to every other rank and returns without
     * reading; every other rank sends its `bytes` at mine (its answer) to
     * root, then takes root's message into theirs (cap bytes kept, zeros
     * after a shorter one). The answers wait on the channel: root takes
     * them with agree_take before anything else it reads from those
     * ranks. NULL where the backend has only agree. */
    int (*agree_rooted)(struct pd_backend_comm *comm, int root,
                        const void *mine, size_t bytes, void *theirs,
                        size_t cap, uint32_t tag,
                        struct pd_backend_error *err);
    /* peer's next message on agree's channel into buf, as agree_rooted
     * keeps one. */
    int (*agree_take)(struct pd_backend_comm *comm, int peer, void *buf,
                      size_t cap, struct pd_backend_error *err);
    /* Point-to-point messages (MPI_Send & co.): a message is posted at
     * once, in call order, and completes when the peer has taken it; the
     * peer's receiving thread (p2p_start) takes every message as it
     * comes, so a send never waits for the application to receive. */
    int (*p2p_start)(struct pd_backend_comm *comm,
                     const struct pd_p2p_sink *sink,
                     struct pd_backend_error *err);
    void (*p2p_stop)(struct pd_backend_comm *comm);
    /* *send NULL: the message is already written (complete). */
    int (*p2p_post)(struct pd_backend_comm *comm, int dst, int tag,
                    const void *data, size_t bytes, struct pd_p2p_send **send,
                    struct pd_backend_error *err);
    /* Wait for a posted send and release it. */
    int (*p2p_wait)(struct pd_backend_comm *comm, struct pd_p2p_send *send,
                    struct pd_backend_error *err);
    /* A message of bytes from source, packed a piece at a time as it is
     * written, and written before this returns; the peer receives it as
     * any other. NULL, or PD_BACKEND_ERR_UNSUPPORTED (nothing sent): the
     * backend cannot, post it packed. */
    int (*p2p_post_packed)(struct pd_backend_comm *comm, int dst, int tag,
                           const struct pd_p2p_source *source, size_t bytes,
                           struct pd_backend_error *err);
    /* One line for PDMPI_DEBUG=info: transport, address, version. */
    void (*describe)(struct pd_backend_comm *comm, char *buf, size_t len);
};

/* ops' step of kind -- allreduce, reduce, bcast, allgather or barrier --
 * on args; PD_BACKEND_ERR_UNSUPPORTED when the backend has none. */
static inline int pd_backend_step(const struct pd_backend_ops *ops,
                                  struct pd_backend_comm *bc,
                                  enum pd_coll_kind kind,
                                  const struct pd_coll_args *args,
                                  struct pd_backend_error *err)
{
    int (*fn)(struct pd_backend_comm *, const struct pd_coll_args *,
              struct pd_backend_error *) =
        kind == PD_COLL_ALLREDUCE   ? ops->allreduce
        : kind == PD_COLL_REDUCE    ? ops->reduce
        : kind == PD_COLL_BCAST     ? ops->bcast
        : kind == PD_COLL_ALLGATHER ? ops->allgather : NULL;
    if (kind == PD_COLL_BARRIER && ops->barrier != NULL)
        return ops->barrier(bc, args->tag, err);
    return fn != NULL ? fn(bc, args, err) : PD_BACKEND_ERR_UNSUPPORTED;
}

extern const struct pd_backend_ops pd_backend_self;
#ifdef PD_HAVE_GLOO
extern const struct pd_backend_ops pd_backend_gloo;
#endif

#ifdef __cplusplus
}
#endif

#endif
