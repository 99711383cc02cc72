/*
 * The host path: for each collective kind, one row of pd_host_algos says
 * which algorithms may serve it, tried in order --
 *   by host      shared memory inside a host, leaders across (hier.c),
 *   flat         the host backend's own algorithm (gloo, self),
 *   composed     point-to-point messages, or every rank's input folded
 *                locally in rank order.
 * An algorithm that cannot take this call answers PD_BACKEND_ERR_UNSUPPORTED
 * before it moves anything, and the next one is tried.
 *
 * Reductions whose op is not commutative, or whose items the backend
 * cannot move as a unit, gather every rank's input and fold it locally in
 * rank order -- the order MPI prescribes -- so every rank computes the
 * same bits.
 */
#include <stdlib.h>
#include <string.h>

#include "core/algo.h"
#include "core/runtime.h"
#include "coll/agree.h"
#include "coll/coll.h"
#include "coll/hier.h"
#include "base/log.h"
#include "core/stats.h"
#include "coll/pieces.h"
#include "core/type_stage.h"

/* One call on the host: the descriptor, comm's hierarchy (NULL: no
 * shared memory) and, for reductions, the kernel. */
struct pd_host_call {
    const struct pd_coll *c;
    struct pd_hier *h;
    struct pd_reduction red;
};

typedef int (*pd_host_algo)(const struct pd_host_call *hc,
                            struct pd_fail *fail);

/* ---- flat: one step of the host backend ------------------------------ */

/* The agreement's context on comm's own host backend. */
static struct pd_agree_ctx pd_host_agree_ctx(struct ompi_communicator_t *comm,
                                             const struct pd_backend_ops *ops,
                                             struct pd_backend_comm *bc)
{
    return (struct pd_agree_ctx){
        .comm = comm, .ops = ops, .bc = bc, .size = comm->size,
        .rank = comm->rank, .owed = &comm->state->host_owed,
    };
}

/* PD_BACKEND_ERR_UNSUPPORTED is returned as is (no message) when the
 * backend lacks the step or cannot take this element size; every other
 * failure becomes an MPI error class in fail. */
static int pd_step(const struct pd_coll *c, const struct pd_call_sig *sig,
                   enum pd_coll_kind step, struct pd_coll_args *args,
                   struct pd_fail *fail)
{
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    if (pd_comm_backend(c->comm, &ops, &bc, fail) != MPI_SUCCESS)
        return fail->errclass;
    pd_stats_way(PD_WAY_HOST);
    if (c->comm->size > 1 && step != PD_COLL_REDUCE && step != PD_COLL_BARRIER)
        pd_stats_algo(args->algorithm);
    args->tag = c->tag;
    if (pd_log_enabled(PD_LOG_TRACE))
        pd_log(PD_LOG_TRACE,
               "%s on %s: %zu x %zu B, root %d, tag %u, via %s (%s)",
               pd_coll_kind_name(step), c->comm->state->id, args->count,
               args->elem_size, args->root, args->tag, ops->name,
               pd_algo_name(args->algorithm));
    const char *what = pd_coll_kind_name(step);
    struct pd_agree_ctx x = pd_host_agree_ctx(c->comm, ops, bc);
    struct pd_agree_rec rec = {
        .call = *sig, .step = (uint8_t)step, .root = args->root,
        .bytes = args->count * args->elem_size,
    };
    int rc = pd_coll_agree(&x, args->tag, &rec, what, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Agreement is itself a barrier. */
    if (step == PD_COLL_BARRIER && ops->agree != NULL)
        return MPI_SUCCESS;
    struct pd_backend_error berr;
    berr.msg[0] = '\0';
    berr.peer = -1;
    int status = pd_backend_step(ops, bc, step, args, &berr);
    if (status == PD_BACKEND_OK || status == PD_BACKEND_ERR_UNSUPPORTED)
        return status;
    return pd_coll_step_failed(&x, args->tag, status, what, &berr, fail);
}

/* comm's host backend's agreement, in x, for a call of bytes per rank
 * carried in it: PD_BACKEND_ERR_UNSUPPORTED where the call is too large
 * or the backend needs no agreement. */
static int pd_carrier(const struct pd_coll *c, size_t bytes,
                      struct pd_agree_ctx *x, struct pd_fail *fail)
{
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    if (!pd_agree_can_carry(c->comm->size, bytes))
        return PD_BACKEND_ERR_UNSUPPORTED;
    if (pd_comm_backend(c->comm, &ops, &bc, fail) != MPI_SUCCESS)
        return fail->errclass;
    if (ops->agree == NULL)
        return PD_BACKEND_ERR_UNSUPPORTED;
    pd_stats_way(PD_WAY_HOST);
    pd_stats_algo(PD_ALGO_CARRIED);
    *x = pd_host_agree_ctx(c->comm, ops, bc);
    return MPI_SUCCESS;
}

/*
 * A small call on a backend that agrees on every call first: the
 * agreement carries each rank's bytes at data -- one exchange instead of
 * the agreement and the backend's own rounds, each of which is a
 * rendezvous over gloo. Every rank's record and data land in *all,
 * stride apart, the data after each record (free it).
 * PD_BACKEND_ERR_UNSUPPORTED as pd_carrier.
 */
static int pd_carried(const struct pd_coll *c, const struct pd_call_sig *sig,
                      const void *data, size_t bytes, unsigned char **all,
                      size_t *stride, struct pd_fail *fail)
{
    struct pd_agree_ctx x;
    int rc = pd_carrier(c, bytes, &x, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pd_agree_rec rec = { .call = *sig, .step = (uint8_t)c->kind,
                                .root = c->root, .bytes = bytes };
    return pd_coll_agree_carrying(&x, c->tag, &rec, data, bytes, all,
                                  stride, pd_coll_kind_name(c->kind), fail);
}

/* A small allreduce or reduce carried in the agreement: every rank folds
 * the contributions in rank order (bitwise the same everywhere,
 * non-commutative ops too). */
static int pd_flat_folded(const struct pd_host_call *hc, struct pd_fail *fail)
{
    const struct pd_coll *c = hc->c;
    size_t bytes = c->count * pd_type_packed(c->type);
    /* An algorithm asked for by name is the one that runs. */
    if (c->kind == PD_COLL_ALLREDUCE &&
        pd_rt.config.algo_allreduce != PD_ALGO_DEFAULT)
        return PD_BACKEND_ERR_UNSUPPORTED;
    struct pd_call_sig sig = pd_coll_sig(c, (int)hc->red.elem_kind);
    unsigned char *all;
    size_t stride;
    int rc = pd_carried(c, &sig, c->sendbuf != NULL ? c->sendbuf : c->recvbuf,
                        bytes, &all, &stride, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->kind == PD_COLL_ALLREDUCE || c->comm->rank == c->root) {
        size_t n = c->count * hc->red.elems_per_item;
        const unsigned char *data = all + sizeof(struct pd_agree_rec);
        memcpy(c->recvbuf, data, bytes);
        for (int r = 1; r < c->comm->size; r++)
            hc->red.fn(c->recvbuf, c->recvbuf, data + (size_t)r * stride, n,
                       hc->red.ctx);
    }
    free(all);
    return MPI_SUCCESS;
}

/* A small broadcast in a one-way agreement: the root's record and data
 * to every rank, which answers with its record and reads (agree.h); the
 * root returns as soon as it has written, as an MPI broadcast's may. */
static int pd_flat_carried_bcast(const struct pd_coll *c, struct pd_fail *fail)
{
    struct pd_agree_ctx x;
    int rc = pd_carrier(c, c->count, &x, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pd_agree_rec rec = { .call = pd_coll_sig(c, -1),
                                .step = (uint8_t)c->kind, .root = c->root,
                                .bytes = c->count };
    return pd_coll_agree_rooted(&x, c->tag, &rec, c->recvbuf, c->count,
                                pd_coll_kind_name(c->kind), fail);
}

/* A small allgather carried in the agreement: every rank's block to
 * every rank in one exchange. */
static int pd_flat_carried_allgather(const struct pd_coll *c,
                                     struct pd_fail *fail)
{
    struct ompi_communicator_t *comm = c->comm;
    const unsigned char *mine =
        c->sendbuf != NULL
            ? c->sendbuf
            : (const unsigned char *)c->recvbuf + (size_t)comm->rank * c->count;
    struct pd_call_sig sig = pd_coll_sig(c, -1);
    unsigned char *all;
    size_t stride;
    int rc = pd_carried(c, &sig, mine, c->count, &all, &stride, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    const unsigned char *data = all + sizeof(struct pd_agree_rec);
    for (int r = 0; r < comm->size; r++)
        memcpy((unsigned char *)c->recvbuf + (size_t)r * c->count,
               data + (size_t)r * stride, c->count);
    free(all);
    return MPI_SUCCESS;
}

/* An allreduce or reduce by the backend: small ones folded, else those
 * of commutative ops by the backend's algorithms. */
static int pd_flat_reduction(const struct pd_host_call *hc,
                             struct pd_fail *fail)
{
    const struct pd_coll *c = hc->c;
    int rc = pd_flat_folded(hc, fail);
    if (rc != PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    if (!hc->red.commutative)
        return PD_BACKEND_ERR_UNSUPPORTED;
    struct pd_coll_args args = {
        .sendbuf = c->sendbuf, .recvbuf = c->recvbuf,
        .count = c->count * hc->red.elems_per_item,
        .elem_size = hc->red.elem_size, .reduce = hc->red.fn,
        .reduce_ctx = hc->red.ctx, .root = c->root,
        .algorithm = c->kind == PD_COLL_ALLREDUCE
                         ? pd_algo_allreduce(c->comm->size,
                                             c->count * pd_type_packed(c->type))
                         : PD_ALGO_DEFAULT,
    };
    struct pd_call_sig sig = pd_coll_sig(c, (int)hc->red.elem_kind);
    return pd_step(c, &sig, c->kind, &args, fail);
}

static int pd_flat_move(const struct pd_host_call *hc, struct pd_fail *fail)
{
    const struct pd_coll *c = hc->c;
    int rc = c->kind == PD_COLL_BCAST       ? pd_flat_carried_bcast(c, fail)
             : c->kind == PD_COLL_ALLGATHER ? pd_flat_carried_allgather(c, fail)
                                            : PD_BACKEND_ERR_UNSUPPORTED;
    if (rc != PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    struct pd_coll_args args = {
        .sendbuf = c->sendbuf, .recvbuf = c->recvbuf, .count = c->count,
        .elem_size = 1, .root = c->root,
        .algorithm = c->kind == PD_COLL_BCAST || c->kind == PD_COLL_ALLGATHER
                         ? PD_ALGO_PIPELINED
                         : PD_ALGO_DEFAULT,
    };
    struct pd_call_sig sig = pd_coll_sig(c, -1);
    return pd_step(c, &sig, c->kind, &args, fail);
}

/* ---- composed ------------------------------------------------------ */

/* Every rank calls this, with or without messages of its own: the ranks
 * agree on the call and on every block's length first. */
static int pd_exchange(const struct pd_coll *c, const struct pd_p2p_op *msgs,
                       size_t n, struct pd_fail *fail)
{
    struct ompi_communicator_t *comm = c->comm;
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    if (pd_comm_backend(comm, &ops, &bc, fail) != MPI_SUCCESS)
        return fail->errclass;
    if (ops->exchange == NULL) {
        pd_fail_set(fail, MPI_ERR_UNSUPPORTED_OPERATION,
                    "the %s backend cannot exchange messages", ops->name);
        return fail->errclass;
    }
    pd_stats_way(PD_WAY_HOST);
    const char *what = pd_coll_kind_name(c->kind);
    struct pd_agree_ctx x = pd_host_agree_ctx(comm, ops, bc);
    struct pd_agree_rec rec = { .call = pd_coll_sig(c, -1),
                                .step = (uint8_t)c->kind, .root = c->root };
    int rc = pd_coll_agree(&x, c->tag, &rec, what, fail);
    if (rc == MPI_SUCCESS)
        rc = pd_coll_agree_blocks(&x, c->tag, msgs, n, what, fail);
    if (rc != MPI_SUCCESS || n == 0)
        return rc;
    struct pd_backend_error berr;
    berr.msg[0] = '\0';
    berr.peer = -1;
    int status = ops->exchange(bc, msgs, n, c->tag, &berr);
    if (status == PD_BACKEND_OK)
        return MPI_SUCCESS;
    return pd_coll_step_failed(&x, c->tag, status, "exchange", &berr, fail);
}

static int pd_host_copy(void *dst, const void *src, size_t bytes,
                        struct pd_fail *fail)
{
    (void)fail;
    pd_stats_way(PD_WAY_HOST);      /* a rank's own block, by the host */
    memmove(dst, src, bytes);
    return MPI_SUCCESS;
}

const struct pd_path pd_host_path = { pd_exchange, pd_host_copy };

static int pd_composed(const struct pd_host_call *hc, struct pd_fail *fail)
{
    return pd_coll_compose(&pd_host_path, hc->c, fail);
}

static int pd_run_algos(const struct pd_coll *c, struct pd_fail *fail);

/* Allgather of bytes from input on c's communicator, on the host. */
static int pd_allgather_bytes(const struct pd_coll *c, uint32_t tag,
                              const void *input, void *all, size_t bytes,
                              struct pd_fail *fail)
{
    struct pd_coll g = { .kind = PD_COLL_ALLGATHER, .comm = c->comm,
                         .tag = tag, .sendbuf = input, .recvbuf = all,
                         .count = bytes, .root = -1 };
    return pd_run_algos(&g, fail);
}

/* all[r] := all[r-1] (op) all[r] for r = 1..n-1: afterwards all[r] holds
 * the reduction of ranks 0..r in rank order. */
static void pd_fold_in_rank_order(const struct pd_reduction *red, char *all,
                                  int n, size_t count, size_t bytes)
{
    for (int r = 1; r < n; r++)
        pd_reduce_items(red, all + (size_t)r * bytes,
                        all + (size_t)(r - 1) * bytes,
                        all + (size_t)r * bytes, count);
}

/* Allreduce, reduce, scan and exscan: every input gathered (at the root,
 * for a reduce), folded in rank order as far as this rank needs. */
static int pd_in_rank_order(const struct pd_host_call *hc,
                            struct pd_fail *fail)
{
    const struct pd_coll *c = hc->c;
    struct ompi_communicator_t *comm = c->comm;
    size_t bytes = c->count * pd_type_packed(c->type);
    const void *input = c->sendbuf != NULL ? c->sendbuf : c->recvbuf;
    bool rooted = c->kind == PD_COLL_REDUCE;
    int last = c->kind == PD_COLL_SCAN     ? comm->rank
               : c->kind == PD_COLL_EXSCAN ? comm->rank - 1
                                           : comm->size - 1;
    char *all = NULL;
    if ((!rooted || comm->rank == c->root) &&
        (all = pd_coll_alloc((size_t)comm->size * bytes, fail)) == NULL)
        return fail->errclass;
    int rc;
    if (rooted) {
        struct pd_coll g = { .kind = PD_COLL_GATHERV, .comm = comm,
                             .tag = c->tag + 1, .sendbuf = input,
                             .recvbuf = all, .count = bytes,
                             .recv = { NULL, NULL, bytes }, .root = c->root };
        rc = pd_coll_compose(&pd_host_path, &g, fail);
    } else {
        rc = pd_allgather_bytes(c, c->tag + 1, input, all, bytes, fail);
    }
    if (rc == MPI_SUCCESS && all != NULL && last >= 0) {
        pd_fold_in_rank_order(&hc->red, all, last + 1, c->count, bytes);
        memcpy(c->recvbuf, all + (size_t)last * bytes, bytes);
    }
    free(all);
    return rc;
}

/* Allgather as an allgatherv of equal blocks. */
static int pd_allgather_composed(const struct pd_host_call *hc,
                                 struct pd_fail *fail)
{
    struct pd_coll v = *hc->c;
    v.kind = PD_COLL_ALLGATHERV;
    v.tag = hc->c->tag + 1;
    v.recv = (struct pd_layout){ NULL, NULL, hc->c->count };
    return pd_coll_compose(&pd_host_path, &v, fail);
}

/* The whole vector reduced, this rank's block kept. */
static int pd_reduce_scatter_by_allreduce(const struct pd_host_call *hc,
                                          struct pd_fail *fail)
{
    const struct pd_coll *c = hc->c;
    size_t extent = pd_type_packed(c->type), from, total;
    pd_coll_block_span(c, c->comm->rank, &from, &total);
    char *reduced = pd_coll_alloc(total * extent, fail);
    if (reduced == NULL)
        return fail->errclass;
    struct pd_coll a = { .kind = PD_COLL_ALLREDUCE, .comm = c->comm,
                         .tag = c->tag + 1,
                         .sendbuf = c->sendbuf != NULL ? c->sendbuf
                                                       : c->recvbuf,
                         .recvbuf = reduced, .count = total, .type = c->type,
                         .op = c->op, .root = -1 };
    int rc = total > 0 ? pd_run_algos(&a, fail) : MPI_SUCCESS;
    size_t mine = pd_coll_block_count(c, c->comm->rank);
    if (rc == MPI_SUCCESS && mine > 0)
        memcpy(c->recvbuf, reduced + from * extent, mine * extent);
    free(reduced);
    return rc;
}

static int pd_barrier_composed(const struct pd_host_call *hc,
                               struct pd_fail *fail)
{
    char token = 0;
    char *all = pd_coll_alloc((size_t)hc->c->comm->size, fail);
    if (all == NULL)
        return fail->errclass;
    int rc = pd_allgather_bytes(hc->c, hc->c->tag + 1, &token, all, 1, fail);
    free(all);
    return rc;
}

/* ---- by host (shared memory) ----------------------------------------- */

static struct pd_hier_reduction pd_hier_reduction_of(
    const struct pd_host_call *hc, size_t count)
{
    struct pd_hier_reduction hr = {
        .count = count * hc->red.elems_per_item,
        .elem_size = hc->red.elem_size, .fn = hc->red.fn, .ctx = hc->red.ctx,
        .op = (uint8_t)hc->c->op->id,
        .elem = (uint8_t)hc->red.elem_kind,
    };
    return hr;
}

/* Across hosts only commutative ops are served: leaders combine hosts'
 * partial results in host order, not rank order. */
static bool pd_hier_takes(const struct pd_host_call *hc)
{
    return hc->red.commutative || pd_hier_single_host(hc->h);
}

/* MPIX_OP_AVG a piece at a time: each piece of the sum is divided on its
 * way to the receive buffer, in a buffer of a step's bytes (the sum in
 * shared memory is every rank's to read). */
struct pd_average_pieces {
    struct pd_pieces *pieces;
    const struct pd_reduction *red;
    int divisor;
    unsigned char *bounce;
};

static void pd_pack_average(void *ctx, size_t from, size_t n, void *to)
{
    const struct pd_average_pieces *a = ctx;
    pd_pack_piece(a->pieces, from, n, to);
}

static void pd_unpack_average(void *ctx, size_t from, size_t n,
                              const void *data)
{
    struct pd_average_pieces *a = ctx;
    memcpy(a->bounce, data, n);
    pd_reduction_average_bytes(a->red, a->bounce, n, a->divisor);
    pd_unpack_piece(a->pieces, from, n, a->bounce);
}

static int pd_by_host_moving(const struct pd_host_call *hc,
                             const struct pd_shm_mover *mover,
                             struct pd_fail *fail);

static int pd_by_host(const struct pd_host_call *hc, struct pd_fail *fail)
{
    struct pd_pieces pieces;
    if (!pd_pieces_of(hc->c, &pieces))
        return pd_by_host_moving(hc, NULL, fail);
    if (hc->c->op == NULL || !hc->red.average) {
        struct pd_shm_mover by_pieces = { pd_pack_piece, pd_unpack_piece,
                                          &pieces };
        return pd_by_host_moving(hc, &by_pieces, fail);
    }
    size_t step = pd_hier_step_bytes(hc->h);
    if (step == 0)
        return PD_BACKEND_ERR_UNSUPPORTED;
    struct pd_average_pieces avg = { &pieces, &hc->red, hc->c->comm->size,
                                     pd_coll_alloc(step, fail) };
    if (avg.bounce == NULL)
        return fail->errclass;
    struct pd_shm_mover averaging = { pd_pack_average, pd_unpack_average,
                                      &avg };
    int rc = pd_by_host_moving(hc, &averaging, fail);
    free(avg.bounce);
    return rc;
}

/* mover: c's buffers a piece at a time (NULL: they are plain). */
static int pd_by_host_moving(const struct pd_host_call *hc,
                             const struct pd_shm_mover *mover,
                             struct pd_fail *fail)
{
    const struct pd_coll *c = hc->c;
    struct ompi_communicator_t *comm = c->comm;
    struct pd_hier *h = hc->h;
    bool one_host = pd_hier_single_host(h);
    struct pd_hier_reduction hr;
    switch (c->kind) {
    case PD_COLL_ALLREDUCE:
    case PD_COLL_REDUCE:
        if (!pd_hier_takes(hc) ||
            !pd_hier_element_fits(h, hc->red.elem_size))
            return PD_BACKEND_ERR_UNSUPPORTED;
        hr = pd_hier_reduction_of(hc, c->count);
        hr.mover = mover;
        return c->kind == PD_COLL_ALLREDUCE
                   ? pd_hier_allreduce(comm, h, c->tag, c->sendbuf,
                                       c->recvbuf, &hr, fail)
                   : pd_hier_reduce(comm, h, c->tag, c->sendbuf, c->recvbuf,
                                    &hr, c->root, fail);
    case PD_COLL_REDUCE_SCATTER: {
        /* On one host each rank reduces and keeps its block directly
         * (in elements: an item of a derived type holds several). */
        size_t from, total, per = hc->red.elems_per_item;
        pd_coll_block_span(c, comm->rank, &from, &total);
        if (!one_host || total == 0 ||
            !pd_hier_element_fits(h, hc->red.elem_size))
            return PD_BACKEND_ERR_UNSUPPORTED;
        hr = pd_hier_reduction_of(hc, total);
        hr.mover = mover;
        return pd_hier_reduce_scatter(
            comm, h, c->sendbuf, c->recvbuf, from * per,
            (from + pd_coll_block_count(c, comm->rank)) * per, &hr, fail);
    }
    case PD_COLL_BCAST:
        return pd_hier_bcast(comm, h, c->tag, c->recvbuf, mover, c->count,
                             c->root, c->signature, fail);
    case PD_COLL_ALLGATHER: {
        struct pd_layout packed = { NULL, NULL, c->count };
        return pd_hier_allgatherv(comm, h, c->tag, c->sendbuf, c->recvbuf,
                                  mover, &packed, c->signature, fail);
    }
    case PD_COLL_ALLGATHERV:
        return pd_hier_allgatherv(comm, h, c->tag, c->sendbuf, c->recvbuf,
                                  mover, &c->recv, c->signature, fail);
    case PD_COLL_BARRIER:
        return pd_hier_barrier(comm, h, c->tag, fail);
    /* Across hosts each pair of ranks exchanges directly. */
    case PD_COLL_GATHERV:
        return one_host ? pd_hier_gatherv(comm, h, c->sendbuf, c->count,
                                          c->recvbuf, &c->recv, c->root,
                                          mover, c->signature, fail)
                        : PD_BACKEND_ERR_UNSUPPORTED;
    case PD_COLL_SCATTERV:
        return one_host ? pd_hier_scatterv(comm, h, c->sendbuf, &c->send,
                                           c->recvbuf, c->count, c->root,
                                           mover, c->signature, fail)
                        : PD_BACKEND_ERR_UNSUPPORTED;
    case PD_COLL_ALLTOALLV:
        return one_host ? pd_hier_alltoallv(comm, h, c->sendbuf, &c->send,
                                            c->recvbuf, &c->recv, mover,
                                            c->signature, fail)
                        : PD_BACKEND_ERR_UNSUPPORTED;
    default:
        return PD_BACKEND_ERR_UNSUPPORTED;
    }
}

/* ---- the table --------------------------------------------------------- */

static const struct {
    pd_host_algo by_host, flat, composed;
} pd_host_algos[PD_COLL_KINDS] = {
    [PD_COLL_ALLREDUCE] = { pd_by_host, pd_flat_reduction, pd_in_rank_order },
    [PD_COLL_REDUCE] = { pd_by_host, pd_flat_reduction, pd_in_rank_order },
    [PD_COLL_BCAST] = { pd_by_host, pd_flat_move, NULL },
    [PD_COLL_ALLGATHER] = { pd_by_host, pd_flat_move, pd_allgather_composed },
    [PD_COLL_ALLGATHERV] = { pd_by_host, NULL, pd_composed },
    [PD_COLL_GATHERV] = { pd_by_host, NULL, pd_composed },
    [PD_COLL_SCATTERV] = { pd_by_host, NULL, pd_composed },
    [PD_COLL_ALLTOALLV] = { pd_by_host, NULL, pd_composed },
    [PD_COLL_REDUCE_SCATTER] = { pd_by_host, NULL,
                                 pd_reduce_scatter_by_allreduce },
    [PD_COLL_SCAN] = { NULL, NULL, pd_in_rank_order },
    [PD_COLL_EXSCAN] = { NULL, NULL, pd_in_rank_order },
    [PD_COLL_BARRIER] = { pd_by_host, pd_flat_move, pd_barrier_composed },
};

/* The first algorithm of hc's row that takes it, before any averaging. */
static int pd_run_row(struct pd_host_call *hc, struct pd_fail *fail)
{
    const struct pd_coll *c = hc->c;
    int rc;
    if (pd_host_algos[c->kind].by_host != NULL) {
        if ((rc = pd_hier_get(c->comm, &hc->h, fail)) != MPI_SUCCESS)
            return rc;
        if (hc->h != NULL &&
            (rc = pd_host_algos[c->kind].by_host(hc, fail)) !=
                PD_BACKEND_ERR_UNSUPPORTED)
            return rc;
    }
    if (pd_host_algos[c->kind].flat != NULL &&
        (rc = pd_host_algos[c->kind].flat(hc, fail)) !=
            PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    if (pd_host_algos[c->kind].composed != NULL)
        return pd_host_algos[c->kind].composed(hc, fail);
    pd_fail_set(fail, MPI_ERR_UNSUPPORTED_OPERATION,
                "the backend of %s cannot %s", c->comm->state->id,
                pd_coll_kind_name(c->kind));
    return fail->errclass;
}

/* A step of a composed call (its op and type were checked by pd_coll_run). */
static int pd_run_algos(const struct pd_coll *c, struct pd_fail *fail)
{
    struct pd_host_call hc = { .c = c };
    if (c->op != NULL)
        pd_op_reduction(c->op, c->type, &hc.red);
    return pd_run_row(&hc, fail);
}

int pd_coll_host(const struct pd_coll *c, struct pd_fail *fail)
{
    struct pd_host_call hc = { .c = c };
    if (c->op != NULL)
        pd_op_reduction(c->op, c->type, &hc.red);
    bool staged = c->stage != NULL || c->send_stage != NULL;
    int rc;
    if (staged || pd_coll_may_segment(c)) {
        /* A stage moved a piece at a time by shared memory, if that
         * serves c; else c in segments, or packed whole. */
        if ((rc = pd_hier_get(c->comm, &hc.h, fail)) != MPI_SUCCESS)
            return rc;
        if (staged && hc.h != NULL &&
            (rc = pd_by_host(&hc, fail)) != PD_BACKEND_ERR_UNSUPPORTED)
            return rc;
        if ((rc = pd_coll_segments(c, hc.h, fail)) !=
            PD_BACKEND_ERR_UNSUPPORTED)
            return rc;
        if (staged) {
            struct pd_coll whole;
            if ((rc = pd_coll_packed(c, &whole, fail)) != MPI_SUCCESS)
                return rc;
            return pd_coll_host(&whole, fail);
        }
    }
    rc = pd_run_row(&hc, fail);
    if (rc != MPI_SUCCESS || c->op == NULL || !hc.red.average)
        return rc;
    /* MPIX_OP_AVG: the sum, divided where the result lands. */
    size_t n = c->kind == PD_COLL_REDUCE_SCATTER
                   ? pd_coll_block_count(c, c->comm->rank)
               : c->kind != PD_COLL_REDUCE || c->comm->rank == c->root
                   ? c->count : 0;
    if (n > 0)
        pd_reduction_average(&hc.red, c->recvbuf, n, c->comm->size);
    return rc;
}
