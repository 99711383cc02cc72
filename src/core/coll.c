/*
 * Collectives: the backend's own algorithm where one fits, else composed
 * from backend steps (allgather, exchange) and local reductions.
 *
 * Reductions whose op is not commutative, or whose items the backend
 * cannot move as a unit, gather every rank's input and fold it locally in
 * rank order -- the order MPI prescribes -- so every rank computes the
 * same bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/algo.h"
#include "core/calls.h"
#include "core/coll.h"
#include "core/devcoll.h"
#include "core/hier.h"
#include "core/log.h"
#include "core/runtime.h"
#include "core/stats.h"

enum pd_step {
    PD_STEP_ALLREDUCE,
    PD_STEP_REDUCE,
    PD_STEP_BCAST,
    PD_STEP_ALLGATHER,
    PD_STEP_BARRIER,
};

static const char *const pd_step_name[] = {
    [PD_STEP_ALLREDUCE] = "allreduce",
    [PD_STEP_REDUCE] = "reduce",
    [PD_STEP_BCAST] = "broadcast",
    [PD_STEP_ALLGATHER] = "allgather",
    [PD_STEP_BARRIER] = "barrier",
};

static void pd_coll_name_gone(struct ompi_communicator_t *comm, char *buf,
                              size_t len)
{
    size_t n = strlen(buf);
    for (int r = 0; r < comm->size && n < len; r++) {
        int w = pd_comm_world_rank(comm, r);
        if (!pd_runtime_local_rank_gone(w))
            continue;
        n += (size_t)snprintf(buf + n, len - n, "; rank %d (%s, pid %d) is gone",
                              r, pd_rt.host, pd_rt.world.pid_of[w]);
    }
}

int pd_coll_backend_failed(int status, struct ompi_communicator_t *comm,
                           const char *what, const char *detail,
                           struct pd_fail *fail)
{
    int errclass = MPI_ERR_OTHER;
    if (status == PD_BACKEND_ERR_IO)
        pd_runtime_note_peer_lost();
    if (status == PD_BACKEND_ERR_NOMEM)
        errclass = MPI_ERR_NO_MEM;
    else if (status == PD_BACKEND_ERR_UNSUPPORTED)
        errclass = MPI_ERR_UNSUPPORTED_OPERATION;
    else if (status == PD_BACKEND_ERR_INTERNAL)
        errclass = MPI_ERR_INTERN;
    else if (status == PD_BACKEND_ERR_MISMATCH)
        errclass = MPI_ERR_OTHER;
    pd_fail_set(fail, errclass, "%s on %s failed%s: %s", what,
                comm->name[0] ? comm->name : comm->state->id,
                status == PD_BACKEND_ERR_TIMEOUT
                    ? " (timed out; PDMPI_TIMEOUT bounds every wait)" : "",
                detail);
    /* A lost connection: name the ranks of this host that are gone. */
    if (status == PD_BACKEND_ERR_IO)
        pd_coll_name_gone(comm, fail->msg, sizeof(fail->msg));
    /* A stall: say what every other rank was last doing. */
    if (status == PD_BACKEND_ERR_TIMEOUT)
        pd_calls_stall_table(comm, fail->msg, sizeof(fail->msg));
    return errclass;
}

/* One backend step. PD_BACKEND_ERR_UNSUPPORTED is returned as is (no
 * message) when the backend lacks the step or cannot take this element
 * size, so the caller can compose the call another way; every other
 * failure becomes an MPI error class in fail. */
static int pd_step(struct ompi_communicator_t *comm, enum pd_step step,
                   struct pd_coll_args *args, struct pd_fail *fail)
{
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    if (pd_comm_backend(comm, &ops, &bc, fail) != MPI_SUCCESS)
        return fail->errclass;
    pd_stats_way(PD_WAY_HOST);
    if (comm->size > 1 && (step == PD_STEP_ALLREDUCE ||
                           step == PD_STEP_BCAST || step == PD_STEP_ALLGATHER))
        pd_stats_algo(args->algorithm);
    struct pd_backend_error berr;
    berr.msg[0] = '\0';
    int status = PD_BACKEND_ERR_UNSUPPORTED;
    if (pd_log_enabled(PD_LOG_TRACE))
        pd_log(PD_LOG_TRACE,
               "%s on %s: %zu x %zu B, root %d, tag %u, via %s (%s)",
               pd_step_name[step], comm->state->id, args->count,
               args->elem_size, args->root, args->tag, ops->name,
               pd_algo_name(args->algorithm));
    switch (step) {
    case PD_STEP_ALLREDUCE:
        if (ops->allreduce) status = ops->allreduce(bc, args, &berr);
        break;
    case PD_STEP_REDUCE:
        if (ops->reduce) status = ops->reduce(bc, args, &berr);
        break;
    case PD_STEP_BCAST:
        if (ops->bcast) status = ops->bcast(bc, args, &berr);
        break;
    case PD_STEP_ALLGATHER:
        if (ops->allgather) status = ops->allgather(bc, args, &berr);
        break;
    case PD_STEP_BARRIER:
        if (ops->barrier) status = ops->barrier(bc, args->tag, &berr);
        break;
    }
    if (status == PD_BACKEND_OK || status == PD_BACKEND_ERR_UNSUPPORTED)
        return status;
    return pd_coll_backend_failed(status, comm, pd_step_name[step], berr.msg, fail);
}

static int pd_exchange(struct ompi_communicator_t *comm, uint32_t tag,
                       const struct pd_p2p_op *msgs, size_t n,
                       struct pd_fail *fail)
{
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
    struct pd_backend_error berr;
    berr.msg[0] = '\0';
    int status = ops->exchange(bc, msgs, n, tag, &berr);
    if (status == PD_BACKEND_OK)
        return MPI_SUCCESS;
    return pd_coll_backend_failed(status, comm, "exchange", berr.msg, fail);
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

static void *pd_alloc(size_t bytes, struct pd_fail *fail)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory (%zu bytes)", bytes);
    return p;
}

static int pd_bad_op(MPI_Op op, MPI_Datatype type, struct pd_fail *fail)
{
    pd_fail_set(fail, MPI_ERR_OP, "%s is not defined on datatype %s",
                pd_op_name(op), pd_type_name(type));
    return fail->errclass;
}

/* Every rank's input, in rank order, in one buffer of size * bytes. */
static int pd_gather_inputs(struct ompi_communicator_t *comm, uint32_t tag,
                            const void *input, size_t bytes, char **all,
                            struct pd_fail *fail)
{
    *all = pd_alloc((size_t)comm->size * bytes, fail);
    if (*all == NULL)
        return fail->errclass;
    int rc = pd_coll_allgather(comm, tag, input, *all, bytes, fail);
    if (rc != MPI_SUCCESS) {
        free(*all);
        *all = NULL;
    }
    return rc;
}

/* all[r] := all[r-1] (op) all[r] for r = 1..size-1: afterwards all[r]
 * holds the reduction of ranks 0..r in rank order. */
static void pd_fold_in_rank_order(const struct pd_reduction *red, char *all,
                                  int size, size_t count, size_t bytes)
{
    for (int r = 1; r < size; r++)
        pd_reduce_items(red, all + (size_t)r * bytes,
                        all + (size_t)(r - 1) * bytes,
                        all + (size_t)r * bytes, count);
}

static int pd_allreduce_in_order(struct ompi_communicator_t *comm,
                                 uint32_t tag, const void *input,
                                 void *recvbuf, size_t count,
                                 const struct pd_reduction *red,
                                 size_t bytes, struct pd_fail *fail)
{
    char *all;
    int rc = pd_gather_inputs(comm, tag, input, bytes, &all, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    pd_fold_in_rank_order(red, all, comm->size, count, bytes);
    memcpy(recvbuf, all + (size_t)(comm->size - 1) * bytes, bytes);
    free(all);
    return MPI_SUCCESS;
}

static struct pd_hier_reduction pd_hier_reduction_of(
    const struct pd_reduction *red, size_t count)
{
    struct pd_hier_reduction hr = {
        .count = count * red->elems_per_item, .elem_size = red->elem_size,
        .fn = red->fn, .ctx = red->ctx,
    };
    return hr;
}

/* The host path of an allreduce, before any averaging. */
static int pd_allreduce_host(struct ompi_communicator_t *comm, uint32_t tag,
                             const void *sendbuf, void *recvbuf, size_t count,
                             const struct pd_reduction *red, size_t bytes,
                             struct pd_fail *fail)
{
    struct pd_hier *h;
    int rc = pd_hier_get(comm, &h, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    if (h != NULL && (red->commutative || pd_hier_single_host(h))) {
        struct pd_hier_reduction hr = pd_hier_reduction_of(red, count);
        return pd_hier_allreduce(comm, h, tag, sendbuf, recvbuf, &hr, fail);
    }
    if (red->commutative) {
        struct pd_coll_args args = {
            .sendbuf = sendbuf, .recvbuf = recvbuf,
            .count = count * red->elems_per_item, .elem_size = red->elem_size,
            .reduce = red->fn, .reduce_ctx = red->ctx, .root = -1, .tag = tag,
            .algorithm = pd_algo_allreduce(comm->size, bytes),
        };
        rc = pd_step(comm, PD_STEP_ALLREDUCE, &args, fail);
        if (rc != PD_BACKEND_ERR_UNSUPPORTED)
            return rc;
    }
    return pd_allreduce_in_order(comm, tag + 1,
                                 sendbuf != NULL ? sendbuf : recvbuf, recvbuf,
                                 count, red, bytes, fail);
}

int pd_coll_allreduce(struct ompi_communicator_t *comm, uint32_t tag,
                      const void *sendbuf, void *recvbuf, size_t count,
                      MPI_Datatype type, MPI_Op op, struct pd_fail *fail)
{
    struct pd_reduction red;
    if (!pd_op_reduction(op, type, &red))
        return pd_bad_op(op, type, fail);
    size_t bytes = count * pd_type_extent(type);
    if (count == 0)
        return MPI_SUCCESS;
    int rc;
    if (pd_devcoll_allreduce(comm, tag, sendbuf, recvbuf, count, type, op,
                             fail, &rc))
        return rc;
    rc = pd_allreduce_host(comm, tag, sendbuf, recvbuf, count, &red, bytes,
                           fail);
    if (rc == MPI_SUCCESS && red.average)
        pd_reduction_average(&red, recvbuf, count, comm->size);
    return rc;
}

int pd_coll_reduce(struct ompi_communicator_t *comm, uint32_t tag,
                   const void *sendbuf, void *recvbuf, size_t count,
                   MPI_Datatype type, MPI_Op op, int root,
                   struct pd_fail *fail)
{
    struct pd_reduction red;
    if (!pd_op_reduction(op, type, &red))
        return pd_bad_op(op, type, fail);
    if (count == 0)
        return MPI_SUCCESS;
    size_t bytes = count * pd_type_extent(type);
    int rc;
    if (pd_devcoll_reduce(comm, tag, sendbuf, recvbuf, count, type, op, root,
                          fail, &rc))
        return rc;
    struct pd_hier *h;
    if ((rc = pd_hier_get(comm, &h, fail)) != MPI_SUCCESS)
        return rc;
    if (h != NULL && (red.commutative || pd_hier_single_host(h))) {
        struct pd_hier_reduction hr = pd_hier_reduction_of(&red, count);
        rc = pd_hier_reduce(comm, h, tag, sendbuf, recvbuf, &hr, root, fail);
        if (rc == MPI_SUCCESS && red.average && comm->rank == root)
            pd_reduction_average(&red, recvbuf, count, comm->size);
        return rc;
    }
    if (red.commutative) {
        struct pd_coll_args args = {
            .sendbuf = sendbuf, .recvbuf = recvbuf,
            .count = count * red.elems_per_item, .elem_size = red.elem_size,
            .reduce = red.fn, .reduce_ctx = red.ctx, .root = root, .tag = tag,
        };
        rc = pd_step(comm, PD_STEP_REDUCE, &args, fail);
        if (rc == MPI_SUCCESS && red.average && comm->rank == root)
            pd_reduction_average(&red, recvbuf, count, comm->size);
        if (rc != PD_BACKEND_ERR_UNSUPPORTED)
            return rc;
    }
    /* In rank order: gather every input at the root and fold there. */
    bool is_root = comm->rank == root;
    const void *input = sendbuf != NULL ? sendbuf : recvbuf;
    char *all = NULL;
    if (is_root && (all = pd_alloc((size_t)comm->size * bytes, fail)) == NULL)
        return fail->errclass;
    struct pd_layout packed = { NULL, NULL, bytes };
    rc = pd_coll_gatherv_via(&pd_host_path, comm, tag + 1, input, bytes, all,
                             &packed, root, fail);
    if (rc == MPI_SUCCESS && is_root) {
        pd_fold_in_rank_order(&red, all, comm->size, count, bytes);
        memcpy(recvbuf, all + (size_t)(comm->size - 1) * bytes, bytes);
        if (red.average)
            pd_reduction_average(&red, recvbuf, count, comm->size);
    }
    free(all);
    return rc;
}

int pd_coll_bcast(struct ompi_communicator_t *comm, uint32_t tag,
                  void *buffer, size_t bytes, int root, struct pd_fail *fail)
{
    if (bytes == 0)
        return MPI_SUCCESS;
    int rc;
    if (pd_devcoll_bcast(comm, tag, buffer, bytes, root, fail, &rc))
        return rc;
    struct pd_hier *h;
    if ((rc = pd_hier_get(comm, &h, fail)) != MPI_SUCCESS)
        return rc;
    if (h != NULL)
        return pd_hier_bcast(comm, h, tag, buffer, bytes, root, fail);
    struct pd_coll_args args = {
        .recvbuf = buffer, .count = bytes, .elem_size = 1, .root = root,
        .tag = tag,
        .algorithm = PD_ALGO_BINOMIAL,
    };
    rc = pd_step(comm, PD_STEP_BCAST, &args, fail);
    if (rc != PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    pd_fail_set(fail, MPI_ERR_UNSUPPORTED_OPERATION,
                "the backend of %s cannot broadcast", comm->state->id);
    return fail->errclass;
}

int pd_coll_allgather(struct ompi_communicator_t *comm, uint32_t tag,
                      const void *sendbuf, void *recvbuf, size_t bytes,
                      struct pd_fail *fail)
{
    if (bytes == 0)
        return MPI_SUCCESS;
    int rc;
    if (pd_devcoll_allgather(comm, tag, sendbuf, recvbuf, bytes, fail, &rc))
        return rc;
    struct pd_hier *h;
    if ((rc = pd_hier_get(comm, &h, fail)) != MPI_SUCCESS)
        return rc;
    if (h != NULL) {
        struct pd_layout packed = { NULL, NULL, bytes };
        return pd_hier_allgatherv(comm, h, tag, sendbuf, recvbuf, &packed,
                                  fail);
    }
    struct pd_coll_args args = {
        .sendbuf = sendbuf, .recvbuf = recvbuf, .count = bytes,
        .elem_size = 1, .root = -1, .tag = tag,
        .algorithm = PD_ALGO_RING,
    };
    rc = pd_step(comm, PD_STEP_ALLGATHER, &args, fail);
    if (rc != PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    struct pd_layout packed = { NULL, NULL, bytes };
    return pd_coll_allgatherv_via(&pd_host_path, comm, tag + 1, sendbuf,
                                  recvbuf, &packed, fail);
}

void pd_layout_block(const struct pd_layout *l, int i, size_t *offset,
                     size_t *bytes)
{
    size_t count = l->counts != NULL ? (size_t)l->counts[i] : 1;
    size_t displ = l->displs != NULL ? (size_t)l->displs[i]
                                     : (size_t)i * count;
    *offset = displ * l->extent;
    *bytes = count * l->extent;
}

/* The message list of an exchange: at most two per peer. */
static struct pd_p2p_op *pd_msgs(struct ompi_communicator_t *comm,
                                 struct pd_fail *fail)
{
    return pd_alloc(2 * (size_t)comm->size * sizeof(struct pd_p2p_op), fail);
}

static void pd_add_msg(struct pd_p2p_op *msgs, size_t *n, int peer,
                       int is_send, const void *buf, size_t bytes)
{
    if (bytes == 0)
        return;
    msgs[*n] = (struct pd_p2p_op){ peer, is_send, (void *)buf, bytes };
    (*n)++;
}

int pd_coll_allgatherv_via(const struct pd_path *path,
                    struct ompi_communicator_t *comm, uint32_t tag,
                       const void *sendbuf, void *recvbuf,
                       const struct pd_layout *recv, struct pd_fail *fail)
{
    struct pd_p2p_op *msgs = pd_msgs(comm, fail);
    if (msgs == NULL)
        return fail->errclass;
    size_t n = 0, my_off, my_bytes;
    char *out = recvbuf;
    pd_layout_block(recv, comm->rank, &my_off, &my_bytes);
    const void *mine = sendbuf != NULL ? sendbuf : out + my_off;
    if (sendbuf != NULL && my_bytes > 0 &&
        path->copy(out + my_off, sendbuf, my_bytes, fail) != MPI_SUCCESS) {
        free(msgs);
        return fail->errclass;
    }
    for (int peer = 0; peer < comm->size; peer++) {
        if (peer == comm->rank)
            continue;
        size_t off, bytes;
        pd_layout_block(recv, peer, &off, &bytes);
        pd_add_msg(msgs, &n, peer, 0, out + off, bytes);
        pd_add_msg(msgs, &n, peer, 1, mine, my_bytes);
    }
    int rc = n > 0 ? path->exchange(comm, tag, msgs, n, fail) : MPI_SUCCESS;
    free(msgs);
    return rc;
}

int pd_coll_gatherv_via(const struct pd_path *path,
                    struct ompi_communicator_t *comm, uint32_t tag,
                    const void *sendbuf, size_t send_bytes, void *recvbuf,
                    const struct pd_layout *recv, int root,
                    struct pd_fail *fail)
{
    struct pd_p2p_op *msgs = pd_msgs(comm, fail);
    if (msgs == NULL)
        return fail->errclass;
    size_t n = 0;
    if (comm->rank == root) {
        char *out = recvbuf;
        for (int peer = 0; peer < comm->size; peer++) {
            size_t off, bytes;
            pd_layout_block(recv, peer, &off, &bytes);
            if (peer != root)
                pd_add_msg(msgs, &n, peer, 0, out + off, bytes);
            else if (sendbuf != NULL && bytes > 0 &&
                     path->copy(out + off, sendbuf, bytes, fail) != 0) {
                free(msgs);
                return fail->errclass;
            }
        }
    } else {
        pd_add_msg(msgs, &n, root, 1, sendbuf, send_bytes);
    }
    int rc = n > 0 ? path->exchange(comm, tag, msgs, n, fail) : MPI_SUCCESS;
    free(msgs);
    return rc;
}

int pd_coll_scatterv_via(const struct pd_path *path,
                    struct ompi_communicator_t *comm, uint32_t tag,
                     const void *sendbuf, const struct pd_layout *send,
                     void *recvbuf, size_t recv_bytes, int root,
                     struct pd_fail *fail)
{
    struct pd_p2p_op *msgs = pd_msgs(comm, fail);
    if (msgs == NULL)
        return fail->errclass;
    size_t n = 0;
    if (comm->rank == root) {
        const char *in = sendbuf;
        for (int peer = 0; peer < comm->size; peer++) {
            size_t off, bytes;
            pd_layout_block(send, peer, &off, &bytes);
            if (peer != root)
                pd_add_msg(msgs, &n, peer, 1, in + off, bytes);
            else if (recvbuf != NULL && bytes > 0 &&
                     path->copy(recvbuf, in + off, bytes, fail) != 0) {
                free(msgs);
                return fail->errclass;
            }
        }
    } else {
        pd_add_msg(msgs, &n, root, 0, recvbuf, recv_bytes);
    }
    int rc = n > 0 ? path->exchange(comm, tag, msgs, n, fail) : MPI_SUCCESS;
    free(msgs);
    return rc;
}

int pd_coll_alltoallv_via(const struct pd_path *path,
                    struct ompi_communicator_t *comm, uint32_t tag,
                      const void *sendbuf, const struct pd_layout *send,
                      void *recvbuf, const struct pd_layout *recv,
                      struct pd_fail *fail)
{
    char *out = recvbuf;
    char *copy = NULL;
    const char *in = sendbuf;
    if (sendbuf == NULL) {
        /* In place: what goes out is recvbuf as it was on entry (host
         * memory: the device path stages in-place calls). */
        size_t end = 0;
        for (int i = 0; i < comm->size; i++) {
            size_t off, bytes;
            pd_layout_block(recv, i, &off, &bytes);
            if (off + bytes > end)
                end = off + bytes;
        }
        if ((copy = pd_alloc(end, fail)) == NULL)
            return fail->errclass;
        if (end > 0)            /* recvbuf may be NULL when nothing moves */
            memcpy(copy, recvbuf, end);
        in = copy;
        send = recv;
    }
    struct pd_p2p_op *msgs = pd_msgs(comm, fail);
    if (msgs == NULL) {
        free(copy);
        return fail->errclass;
    }
    size_t n = 0;
    for (int peer = 0; peer < comm->size; peer++) {
        size_t soff, sbytes, roff, rbytes;
        pd_layout_block(send, peer, &soff, &sbytes);
        pd_layout_block(recv, peer, &roff, &rbytes);
        if (peer == comm->rank) {
            if (rbytes > 0 &&
                path->copy(out + roff, in + soff, rbytes, fail) != 0) {
                free(msgs);
                free(copy);
                return fail->errclass;
            }
            continue;
        }
        pd_add_msg(msgs, &n, peer, 0, out + roff, rbytes);
        pd_add_msg(msgs, &n, peer, 1, in + soff, sbytes);
    }
    int rc = n > 0 ? path->exchange(comm, tag, msgs, n, fail) : MPI_SUCCESS;
    free(msgs);
    free(copy);
    return rc;
}

int pd_coll_reduce_scatter(struct ompi_communicator_t *comm, uint32_t tag,
                           const void *sendbuf, void *recvbuf,
                           const int *counts, MPI_Datatype type, MPI_Op op,
                           struct pd_fail *fail)
{
    int rc;
    if (pd_devcoll_reduce_scatter(comm, tag, sendbuf, recvbuf, counts, type,
                                  op, fail, &rc))
        return rc;
    size_t extent = pd_type_extent(type);
    size_t total = 0, before = 0;
    for (int i = 0; i < comm->size; i++) {
        if (i < comm->rank)
            before += (size_t)counts[i];
        total += (size_t)counts[i];
    }
    struct pd_reduction red;
    struct pd_hier *h;
    if (total > 0 && pd_op_reduction(op, type, &red) &&
        red.elems_per_item == 1) {
        if ((rc = pd_hier_get(comm, &h, fail)) != MPI_SUCCESS)
            return rc;
        /* On one host each rank reduces and keeps its block directly. */
        if (h != NULL && pd_hier_single_host(h)) {
            struct pd_hier_reduction hr = pd_hier_reduction_of(&red, total);
            rc = pd_hier_reduce_scatter(comm, h, sendbuf, recvbuf, counts,
                                        &hr, fail);
            if (rc == MPI_SUCCESS && red.average)
                pd_reduction_average(&red, recvbuf,
                                     (size_t)counts[comm->rank], comm->size);
            return rc;
        }
    }
    const void *input = sendbuf != NULL ? sendbuf : recvbuf;
    char *reduced = pd_alloc(total * extent, fail);
    if (reduced == NULL)
        return fail->errclass;
    rc = pd_coll_allreduce(comm, tag, input, reduced, total, type, op, fail);
    if (rc == MPI_SUCCESS && counts[comm->rank] > 0)
        memcpy(recvbuf, reduced + before * extent,
               (size_t)counts[comm->rank] * extent);
    free(reduced);
    return rc;
}

int pd_coll_scan(struct ompi_communicator_t *comm, uint32_t tag,
                 const void *sendbuf, void *recvbuf, size_t count,
                 MPI_Datatype type, MPI_Op op, bool exclusive,
                 struct pd_fail *fail)
{
    struct pd_reduction red;
    if (!pd_op_reduction(op, type, &red))
        return pd_bad_op(op, type, fail);
    if (red.average) {
        pd_fail_set(fail, MPI_ERR_OP, "MPIX_OP_AVG is not defined for scans");
        return fail->errclass;
    }
    if (count == 0)
        return MPI_SUCCESS;
    size_t bytes = count * pd_type_extent(type);
    int rc;
    if (pd_devcoll_scan(comm, tag, sendbuf, recvbuf, count, type, op,
                        exclusive, fail, &rc))
        return rc;
    char *all;
    rc = pd_gather_inputs(comm, tag, sendbuf != NULL ? sendbuf : recvbuf,
                              bytes, &all, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Fold only as far as this rank needs. */
    int last = exclusive ? comm->rank - 1 : comm->rank;
    pd_fold_in_rank_order(&red, all, last + 1, count, bytes);
    if (last >= 0)
        memcpy(recvbuf, all + (size_t)last * bytes, bytes);
    free(all);
    return MPI_SUCCESS;
}

int pd_coll_barrier(struct ompi_communicator_t *comm, uint32_t tag,
                    struct pd_fail *fail)
{
    struct pd_hier *h;
    int rc = pd_hier_get(comm, &h, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    if (h != NULL)
        return pd_hier_barrier(comm, h, tag, fail);
    struct pd_coll_args args = { .root = -1, .tag = tag };
    rc = pd_step(comm, PD_STEP_BARRIER, &args, fail);
    if (rc != PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    char token = 0, *all;
    rc = pd_gather_inputs(comm, tag + 1, &token, 1, &all, fail);
    free(all);
    return rc;
}

int pd_coll_allgatherv(struct ompi_communicator_t *comm, uint32_t tag,
                       const void *sendbuf, void *recvbuf,
                       const struct pd_layout *recv, struct pd_fail *fail)
{
    int rc;
    if (pd_devcoll_allgatherv(comm, tag, sendbuf, recvbuf, recv, fail, &rc))
        return rc;
    struct pd_hier *h;
    if ((rc = pd_hier_get(comm, &h, fail)) != MPI_SUCCESS)
        return rc;
    if (h != NULL)
        return pd_hier_allgatherv(comm, h, tag, sendbuf, recvbuf, recv, fail);
    return pd_coll_allgatherv_via(&pd_host_path, comm, tag, sendbuf, recvbuf,
                                  recv, fail);
}

/* comm's hierarchy when all its ranks share one host, else *h = NULL:
 * gather(v), scatter(v) and alltoall(v) then go through shared memory
 * (across hosts each pair of ranks exchanges directly). */
static int pd_one_host(struct ompi_communicator_t *comm, struct pd_hier **h,
                       struct pd_fail *fail)
{
    int rc = pd_hier_get(comm, h, fail);
    if (rc == MPI_SUCCESS && *h != NULL && !pd_hier_single_host(*h))
        *h = NULL;
    return rc;
}

int pd_coll_gatherv(struct ompi_communicator_t *comm, uint32_t tag,
                    const void *sendbuf, size_t send_bytes, void *recvbuf,
                    const struct pd_layout *recv, int root,
                    struct pd_fail *fail)
{
    int rc;
    if (pd_devcoll_gatherv(comm, tag, sendbuf, send_bytes, recvbuf, recv,
                           root, fail, &rc))
        return rc;
    struct pd_hier *h;
    if ((rc = pd_one_host(comm, &h, fail)) != MPI_SUCCESS)
        return rc;
    if (h != NULL && (rc = pd_hier_gatherv(comm, h, sendbuf, send_bytes,
                                           recvbuf, recv, root, fail)) !=
                         PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    return pd_coll_gatherv_via(&pd_host_path, comm, tag, sendbuf, send_bytes,
                               recvbuf, recv, root, fail);
}

int pd_coll_scatterv(struct ompi_communicator_t *comm, uint32_t tag,
                     const void *sendbuf, const struct pd_layout *send,
                     void *recvbuf, size_t recv_bytes, int root,
                     struct pd_fail *fail)
{
    int rc;
    if (pd_devcoll_scatterv(comm, tag, sendbuf, send, recvbuf, recv_bytes,
                            root, fail, &rc))
        return rc;
    struct pd_hier *h;
    if ((rc = pd_one_host(comm, &h, fail)) != MPI_SUCCESS)
        return rc;
    if (h != NULL && (rc = pd_hier_scatterv(comm, h, sendbuf, send, recvbuf,
                                            recv_bytes, root, fail)) !=
                         PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    return pd_coll_scatterv_via(&pd_host_path, comm, tag, sendbuf, send,
                                recvbuf, recv_bytes, root, fail);
}

int pd_coll_alltoallv(struct ompi_communicator_t *comm, uint32_t tag,
                      const void *sendbuf, const struct pd_layout *send,
                      void *recvbuf, const struct pd_layout *recv,
                      struct pd_fail *fail)
{
    int rc;
    if (pd_devcoll_alltoallv(comm, tag, sendbuf, send, recvbuf, recv, fail,
                             &rc))
        return rc;
    struct pd_hier *h;
    if ((rc = pd_one_host(comm, &h, fail)) != MPI_SUCCESS)
        return rc;
    if (h != NULL && (rc = pd_hier_alltoallv(comm, h, sendbuf, send, recvbuf,
                                             recv, fail)) !=
                         PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    return pd_coll_alltoallv_via(&pd_host_path, comm, tag, sendbuf, send,
                                 recvbuf, recv, fail);
}
