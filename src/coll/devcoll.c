/*
 * Collectives on device memory (see devcoll.h). route/ decides the route
 * per call from the buffers that pd_stage_plan lists; this file carries
 * it out: the device CCL for whole calls it can take, the shared
 * composition over device send/receive for the v-collectives, or staging
 * -- device buffers copied to host memory, the host path run, results
 * copied back -- for everything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/devcoll.h"
#include "coll/hier.h"
#include "core/op.h"
#include "core/runtime.h"
#include "core/stats.h"
#include "route/route.h"

/* One buffer of a call as staging sees it. */
struct pd_stage {
    const void *user;       /* the caller's buffer */
    void *host;             /* what the host path works on */
    size_t bytes;
    bool in;                /* holds input: copy to host before */
    bool out;               /* receives output: copy back after */
    bool staged;            /* host is a temporary of ours */
};

static int pd_stage_in(struct pd_stage *s, size_t n, struct pd_fail *fail)
{
    pd_stats_way(PD_WAY_STAGED);
    struct pd_dccl *rt = pd_route_runtime();
    char err[256];
    for (size_t i = 0; i < n; i++) {
        int device;
        s[i].host = (void *)s[i].user;
        s[i].staged = false;
        if (s[i].user == NULL || s[i].bytes == 0 ||
            rt->b->memory_kind(s[i].user, &device) != PD_MEM_DEVICE)
            continue;
        s[i].host = rt->b->host_alloc(s[i].bytes);
        if (s[i].host == NULL) {
            pd_fail_set(fail, MPI_ERR_NO_MEM,
                        "out of host memory staging %zu bytes of %s memory",
                        s[i].bytes, rt->b->memory);
            return fail->errclass;
        }
        s[i].staged = true;
        if (s[i].in && rt->b->copy(s[i].host, s[i].user, s[i].bytes, err,
                                   sizeof(err)) != 0) {
            pd_fail_set(fail, MPI_ERR_OTHER, "staging %s memory: %s",
                        rt->b->memory, err);
            return fail->errclass;
        }
    }
    return MPI_SUCCESS;
}

/* Copy results back (when rc is a success) and free the temporaries. */
static int pd_stage_out(struct pd_stage *s, size_t n, int rc,
                        struct pd_fail *fail)
{
    struct pd_dccl *rt = pd_route_runtime();
    char err[256];
    for (size_t i = 0; i < n; i++) {
        if (!s[i].staged)
            continue;
        if (rc == MPI_SUCCESS && s[i].out &&
            rt->b->copy((void *)s[i].user, s[i].host, s[i].bytes, err,
                        sizeof(err)) != 0) {
            pd_fail_set(fail, MPI_ERR_OTHER, "copying back to %s memory: %s",
                        rt->b->memory, err);
            rc = fail->errclass;
        }
        rt->b->host_free(s[i].host);
        s[i].staged = false;
    }
    return rc;
}

/* A device library's failure, mapped like the host path's (dead ranks of
 * this host named, the stall table on a timeout). */
static int pd_device_failed(int status, struct ompi_communicator_t *comm,
                            const char *what, const char *err,
                            struct pd_fail *fail)
{
    char step[96];
    snprintf(step, sizeof(step), "%s via %s", what,
             pd_route_device()->b->name);
    return pd_coll_backend_failed(status, comm, step, err, fail);
}

/* The buffers of c as staging sees them (and routing reads): at most two,
 * a rank's unused buffer left out. Returns how many. */
static size_t pd_stage_plan(const struct pd_coll *c, struct pd_stage s[2])
{
    struct ompi_communicator_t *comm = c->comm;
    bool is_root = comm->rank == c->root, in_place = c->sendbuf == NULL;
    size_t bytes = c->type != NULL ? c->count * pd_type_packed(c->type)
                                   : c->count;
    size_t send = bytes, recv = bytes;
    const void *sendbuf = c->sendbuf, *recvbuf = c->recvbuf;
    bool recv_in = in_place;
    switch (c->kind) {
    case PD_COLL_BARRIER:
        return 0;
    case PD_COLL_BCAST:
        s[0] = (struct pd_stage){ c->recvbuf, NULL, bytes, is_root, !is_root,
                                  false };
        return 1;
    case PD_COLL_REDUCE:
        recvbuf = is_root ? c->recvbuf : NULL;  /* means nothing elsewhere */
        break;
    case PD_COLL_ALLGATHER:
        recv = bytes * (size_t)comm->size;
        break;
    case PD_COLL_ALLGATHERV: {
        size_t off;
        pd_layout_block(&c->recv, comm->rank, &off, &send);
        recv = pd_layout_span(&c->recv, comm->size);
        break;
    }
    case PD_COLL_GATHERV:
        recvbuf = is_root ? c->recvbuf : NULL;
        recv = is_root ? pd_layout_span(&c->recv, comm->size) : 0;
        break;
    case PD_COLL_SCATTERV:
        sendbuf = is_root ? c->sendbuf : NULL;
        send = is_root ? pd_layout_span(&c->send, comm->size) : 0;
        recv_in = false;
        break;
    case PD_COLL_ALLTOALLV:
        send = in_place ? 0 : pd_layout_span(&c->send, comm->size);
        recv = pd_layout_span(&c->recv, comm->size);
        break;
    case PD_COLL_REDUCE_SCATTER: {
        size_t from, total, extent = pd_type_packed(c->type);
        pd_coll_block_span(c, comm->rank, &from, &total);
        send = total * extent;
        recv = in_place ? send : pd_coll_block_count(c, comm->rank) * extent;
        break;
    }
    case PD_COLL_SCAN:
    case PD_COLL_EXSCAN:
        recv_in = true;         /* exscan's rank 0 keeps its recvbuf */
        break;
    default:
        break;
    }
    s[0] = (struct pd_stage){ sendbuf, NULL, send, true, false, false };
    s[1] = (struct pd_stage){ recvbuf, NULL, recv, recv_in, true, false };
    return 2;
}

enum pd_route pd_devcoll_route(const struct pd_coll *c, char *why,
                                 size_t whylen)
{
    struct pd_stage s[2];
    size_t n = pd_stage_plan(c, s);
    if (n == 0)
        return PD_ROUTE_HOST;
    const void *bufs[2] = { s[0].user, n > 1 ? s[1].user : NULL };
    /* plain: a predefined datatype and op (else always the host path). */
    bool plain = c->type == NULL || pd_type_is_predefined(c->type);
    if (c->op != NULL && !pd_op_is_predefined(c->op))
        plain = false;
    enum pd_route route = pd_route_buffers(
        bufs, n, c->op != NULL,
        c->type ? pd_type_elem_kind(c->type) : PD_EK_U8,
        c->op ? (enum pd_op_id)c->op->id : PD_OP_NULL, plain, why, whylen);
    if (route != PD_ROUTE_DEVICE)
        return route;
    switch (c->kind) {
    case PD_COLL_ALLTOALLV:     /* in place needs a scratch copy: host */
        return c->sendbuf == NULL ? PD_ROUTE_STAGE : route;
    case PD_COLL_REDUCE_SCATTER: /* equal blocks of a separate input only */
        if (c->sendbuf == NULL)
            return PD_ROUTE_STAGE;
        for (int i = 1; i < c->comm->size; i++)
            if (pd_coll_block_count(c, i) != pd_coll_block_count(c, 0))
                return PD_ROUTE_STAGE;
        return route;
    case PD_COLL_SCAN:          /* no CCL has a scan */
    case PD_COLL_EXSCAN:
        return PD_ROUTE_STAGE;
    default:
        return route;
    }
}

/* The library orders messages per communicator itself: no tag. */
static int pd_device_exchange(const struct pd_coll *c,
                              const struct pd_p2p_op *msgs, size_t n,
                              struct pd_fail *fail)
{
    struct ompi_communicator_t *comm = c->comm;
    struct pd_dccl_comm *dc = NULL;
    if (n == 0)
        return MPI_SUCCESS;
    char err[512];
    if (pd_comm_device(comm, &dc, fail) != MPI_SUCCESS)
        return fail->errclass;
    int status = pd_dccl_exchange(dc, msgs, n, err, sizeof(err));
    return status == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_device_failed(status, comm, "send/receive group", err,
                                  fail);
}

static int pd_device_copy(void *dst, const void *src, size_t bytes,
                          struct pd_fail *fail)
{
    char err[512];
    if (pd_dccl_copy(pd_route_device(), dst, src, bytes, err, sizeof(err)) ==
        0)
        return MPI_SUCCESS;
    pd_fail_set(fail, MPI_ERR_OTHER, "device copy failed: %s", err);
    return fail->errclass;
}

static const struct pd_path pd_device_path = { pd_device_exchange,
                                               pd_device_copy };

/* Note c as this rank's device call for the ranks of its host to compare
 * (the device library compares nothing: a rank in another call would
 * leave the others waiting, or mix data of different shapes). */
static void pd_device_note_call(const struct pd_coll *c)
{
    struct pd_comm_state *st = c->comm->state;
    bool reduction = c->op != NULL && c->type != NULL;
    st->dev_call = pd_coll_sig(c, reduction ? (int)pd_type_elem_kind(c->type)
                                            : -1);
    st->dev_call_n = c->tag;
    pd_hier_note_call(pd_hier_if_known(c->comm), c->tag, &st->dev_call);
}

/* After a device call that completed: the ranks of this host that noted
 * the same call number were in the same call. */
static int pd_device_compare_call(const struct pd_coll *c, int rc,
                                  struct pd_fail *fail)
{
    struct pd_comm_state *st = c->comm->state;
    char why[400];
    if (rc != MPI_SUCCESS ||
        pd_hier_compare_call(pd_hier_if_known(c->comm), st->dev_call_n,
                             &st->dev_call, why, sizeof(why)) ==
            PD_BACKEND_OK)
        return rc;
    return pd_device_failed(PD_BACKEND_ERR_MISMATCH, c->comm,
                            pd_coll_kind_name(c->kind), why, fail);
}

static int pd_devcoll_launch(const struct pd_coll *c, struct pd_fail *fail);

int pd_devcoll_run(const struct pd_coll *c, struct pd_fail *fail)
{
    pd_stats_way(PD_WAY_DEVICE);
    pd_device_note_call(c);
    return pd_device_compare_call(c, pd_devcoll_launch(c, fail), fail);
}

static int pd_devcoll_launch(const struct pd_coll *c, struct pd_fail *fail)
{
    switch (c->kind) {
    case PD_COLL_ALLGATHERV:
    case PD_COLL_GATHERV:
    case PD_COLL_SCATTERV:
    case PD_COLL_ALLTOALLV:
        return pd_coll_compose(&pd_device_path, c, fail);
    default:
        break;
    }
    struct pd_dccl_comm *dc = NULL;
    if (pd_comm_device(c->comm, &dc, fail) != MPI_SUCCESS)
        return fail->errclass;
    enum pd_elem_kind kind = c->type ? pd_type_elem_kind(c->type) : PD_EK_U8;
    enum pd_op_id op = c->op ? (enum pd_op_id)c->op->id : PD_OP_NULL;
    bool is_root = c->comm->rank == c->root;
    char err[512];
    int status = PD_BACKEND_ERR_INTERNAL;
    switch (c->kind) {
    case PD_COLL_ALLREDUCE:
        status = pd_dccl_allreduce(dc, c->sendbuf, c->recvbuf, c->count, kind,
                                   op, err, sizeof(err));
        break;
    case PD_COLL_REDUCE:
        status = pd_dccl_reduce(dc, c->sendbuf, is_root ? c->recvbuf : NULL,
                                c->count, kind, op, c->root, err, sizeof(err));
        break;
    case PD_COLL_BCAST:
        status = pd_dccl_bcast(dc, c->recvbuf, c->count, c->root, err,
                               sizeof(err));
        break;
    case PD_COLL_ALLGATHER:
        status = pd_dccl_allgather(dc, c->sendbuf, c->recvbuf, c->count, err,
                                   sizeof(err));
        break;
    case PD_COLL_REDUCE_SCATTER:
        status = pd_dccl_reduce_scatter(dc, c->sendbuf, c->recvbuf,
                                        pd_coll_block_count(c, 0), kind, op,
                                        err, sizeof(err));
        break;
    default:
        snprintf(err, sizeof(err), "no device %s", pd_coll_kind_name(c->kind));
        break;
    }
    return status == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_device_failed(status, c->comm, pd_coll_kind_name(c->kind),
                                  err,
                                  fail);
}

int pd_devcoll_staged(const struct pd_coll *c, struct pd_fail *fail)
{
    struct pd_stage s[2];
    size_t n = pd_stage_plan(c, s);
    int rc = pd_stage_in(s, n, fail);
    if (rc == MPI_SUCCESS) {
        struct pd_coll h = *c;
        if (c->kind == PD_COLL_BCAST) {
            h.recvbuf = s[0].host;
        } else {
            h.sendbuf = s[0].user != NULL ? s[0].host : c->sendbuf;
            h.recvbuf = s[1].user != NULL ? s[1].host : c->recvbuf;
        }
        rc = pd_coll_host(&h, fail);
    }
    return pd_stage_out(s, n, rc, fail);
}
