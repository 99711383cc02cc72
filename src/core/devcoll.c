/*
 * Collectives on device memory (see devcoll.h). route/ decides the way
 * per call; this file carries it out: the device CCL for whole calls it
 * can take, the shared composition over device send/receive for the
 * v-collectives, or staging -- device buffers copied to host memory, the
 * host path run, results copied back -- for everything else.
 */
#include <stdlib.h>
#include <string.h>

#include "core/devcoll.h"
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

static int pd_refuse(const char *why, struct pd_fail *fail)
{
    pd_fail_set(fail, MPI_ERR_OTHER, "%s (PDMPI_DEVICE_FALLBACK=error)", why);
    return fail->errclass;
}

static int pd_device_failed(struct ompi_communicator_t *comm,
                            const char *what, const char *err,
                            struct pd_fail *fail)
{
    pd_fail_set(fail, MPI_ERR_OTHER, "%s on %s via %s failed: %s", what,
                comm->name[0] ? comm->name : comm->state->id,
                pd_route_device()->b->name, err);
    return fail->errclass;
}

/* Which way one call goes; plain = predefined datatype and op. */
static enum pd_route_way pd_way(const void *const *bufs, size_t n,
                                bool reduction, MPI_Datatype type, MPI_Op op,
                                char *why, size_t whylen)
{
    bool plain = type == NULL || pd_type_is_predefined(type);
    if (op != NULL && !pd_op_is_predefined(op))
        plain = false;
    return pd_route_buffers(bufs, n, reduction,
                            type ? pd_type_elem_kind(type) : PD_EK_U8,
                            op ? (enum pd_op_id)op->id : PD_OP_NULL, plain,
                            why, whylen);
}

static struct pd_dccl_comm *pd_device_comm(struct ompi_communicator_t *comm,
                                           struct pd_fail *fail)
{
    struct pd_dccl_comm *dc = NULL;
    return pd_comm_device(comm, &dc, fail) == MPI_SUCCESS ? dc : NULL;
}

/* One whole call the device library takes. */
enum pd_devcall_kind {
    PD_DEV_ALLREDUCE, PD_DEV_REDUCE, PD_DEV_BCAST, PD_DEV_ALLGATHER,
    PD_DEV_REDUCE_SCATTER,
};

struct pd_devcall {
    enum pd_devcall_kind kind;
    const char *what;               /* for messages */
    const void *sendbuf;
    void *recvbuf;
    size_t count;                   /* elements of type; bytes if no type */
    MPI_Datatype type;              /* NULL: bytes */
    MPI_Op op;                      /* NULL: not a reduction */
    int root;
};

static int pd_device_run(struct ompi_communicator_t *comm,
                         const struct pd_devcall *c, struct pd_fail *fail)
{
    pd_stats_way(PD_WAY_DEVICE);
    struct pd_dccl_comm *dc = pd_device_comm(comm, fail);
    if (dc == NULL)
        return fail->errclass;
    enum pd_elem_kind kind = c->type ? pd_type_elem_kind(c->type) : PD_EK_U8;
    enum pd_op_id op = c->op ? (enum pd_op_id)c->op->id : PD_OP_NULL;
    char err[512];
    int status = PD_BACKEND_ERR_INTERNAL;
    switch (c->kind) {
    case PD_DEV_ALLREDUCE:
        status = pd_dccl_allreduce(dc, c->sendbuf, c->recvbuf, c->count, kind,
                                   op, err, sizeof(err));
        break;
    case PD_DEV_REDUCE:
        status = pd_dccl_reduce(dc, c->sendbuf, c->recvbuf, c->count, kind,
                                op, c->root, err, sizeof(err));
        break;
    case PD_DEV_BCAST:
        status = pd_dccl_bcast(dc, c->recvbuf, c->count, c->root, err,
                               sizeof(err));
        break;
    case PD_DEV_ALLGATHER:
        status = pd_dccl_allgather(dc, c->sendbuf, c->recvbuf, c->count, err,
                                   sizeof(err));
        break;
    case PD_DEV_REDUCE_SCATTER:
        status = pd_dccl_reduce_scatter(dc, c->sendbuf, c->recvbuf, c->count,
                                        kind, op, err, sizeof(err));
        break;
    }
    return status == PD_BACKEND_OK ? MPI_SUCCESS
                                   : pd_device_failed(comm, c->what, err, fail);
}

bool pd_devcoll_allreduce(struct ompi_communicator_t *comm, uint32_t tag,
                          const void *sendbuf, void *recvbuf, size_t count,
                          MPI_Datatype type, MPI_Op op, struct pd_fail *fail,
                          int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    const void *bufs[] = { sendbuf, recvbuf };
    char why[256];
    size_t bytes = count * pd_type_extent(type);
    switch (pd_way(bufs, 2, true, type, op, why, sizeof(why))) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE: {
        struct pd_devcall c = { PD_DEV_ALLREDUCE, "allreduce", sendbuf,
                                recvbuf, count, type, op, -1 };
        *rc = pd_device_run(comm, &c, fail);
        return true;
    }
    case PD_ROUTE_STAGE:
        break;
    }
    struct pd_stage s[] = {
        { sendbuf, NULL, bytes, true, false, false },
        { recvbuf, NULL, bytes, sendbuf == NULL, true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_allreduce(comm, tag, s[0].host, s[1].host, count, type,
                                op, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

bool pd_devcoll_reduce(struct ompi_communicator_t *comm, uint32_t tag,
                       const void *sendbuf, void *recvbuf, size_t count,
                       MPI_Datatype type, MPI_Op op, int root,
                       struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    bool is_root = comm->rank == root;
    /* recvbuf means nothing on the other ranks. */
    const void *bufs[] = { sendbuf, is_root ? recvbuf : NULL };
    char why[256];
    size_t bytes = count * pd_type_extent(type);
    switch (pd_way(bufs, 2, true, type, op, why, sizeof(why))) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE: {
        struct pd_devcall c = { PD_DEV_REDUCE, "reduce", sendbuf,
                                is_root ? recvbuf : NULL, count, type, op,
                                root };
        *rc = pd_device_run(comm, &c, fail);
        return true;
    }
    case PD_ROUTE_STAGE:
        break;
    }
    struct pd_stage s[] = {
        { sendbuf, NULL, bytes, true, false, false },
        { bufs[1], NULL, bytes, sendbuf == NULL, true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_reduce(comm, tag, s[0].host,
                             is_root ? s[1].host : recvbuf, count, type, op,
                             root, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

bool pd_devcoll_bcast(struct ompi_communicator_t *comm, uint32_t tag,
                      void *buffer, size_t bytes, int root,
                      struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    const void *bufs[] = { buffer };
    char why[256];
    switch (pd_way(bufs, 1, false, NULL, NULL, why, sizeof(why))) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE: {
        struct pd_devcall c = { PD_DEV_BCAST, "broadcast", NULL, buffer,
                                bytes, NULL, NULL, root };
        *rc = pd_device_run(comm, &c, fail);
        return true;
    }
    case PD_ROUTE_STAGE:
        break;
    }
    bool is_root = comm->rank == root;
    struct pd_stage s[] = { { buffer, NULL, bytes, is_root, !is_root, false } };
    *rc = pd_stage_in(s, 1, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_bcast(comm, tag, s[0].host, bytes, root, fail);
    *rc = pd_stage_out(s, 1, *rc, fail);
    return true;
}

bool pd_devcoll_allgather(struct ompi_communicator_t *comm, uint32_t tag,
                          const void *sendbuf, void *recvbuf, size_t bytes,
                          struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    const void *bufs[] = { sendbuf, recvbuf };
    char why[256];
    size_t total = bytes * (size_t)comm->size;
    switch (pd_way(bufs, 2, false, NULL, NULL, why, sizeof(why))) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE: {
        struct pd_devcall c = { PD_DEV_ALLGATHER, "allgather", sendbuf,
                                recvbuf, bytes, NULL, NULL, -1 };
        *rc = pd_device_run(comm, &c, fail);
        return true;
    }
    case PD_ROUTE_STAGE:
        break;
    }
    struct pd_stage s[] = {
        { sendbuf, NULL, bytes, true, false, false },
        { recvbuf, NULL, total, sendbuf == NULL, true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_allgather(comm, tag, s[0].host, s[1].host, bytes, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

/* ------------------------------------------------ the v-collectives */

static int pd_device_exchange(struct ompi_communicator_t *comm, uint32_t tag,
                              const struct pd_p2p_op *msgs, size_t n,
                              struct pd_fail *fail)
{
    (void)tag;   /* the library orders messages per communicator itself */
    struct pd_dccl_comm *dc = pd_device_comm(comm, fail);
    char err[512];
    if (dc == NULL)
        return fail->errclass;
    if (pd_dccl_exchange(dc, msgs, n, err, sizeof(err)) != PD_BACKEND_OK)
        return pd_device_failed(comm, "send/receive group", err, fail);
    return MPI_SUCCESS;
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

/* Bytes from the start of a buffer to the end of its last block. */
static size_t pd_layout_span(const struct pd_layout *l, int size)
{
    size_t end = 0;
    for (int i = 0; i < size; i++) {
        size_t off, bytes;
        pd_layout_block(l, i, &off, &bytes);
        if (bytes > 0 && off + bytes > end)
            end = off + bytes;
    }
    return end;
}

bool pd_devcoll_allgatherv(struct ompi_communicator_t *comm, uint32_t tag,
                           const void *sendbuf, void *recvbuf,
                           const struct pd_layout *recv, struct pd_fail *fail,
                           int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    const void *bufs[] = { sendbuf, recvbuf };
    char why[256];
    size_t off, mine;
    pd_layout_block(recv, comm->rank, &off, &mine);
    switch (pd_way(bufs, 2, false, NULL, NULL, why, sizeof(why))) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE:
        pd_stats_way(PD_WAY_DEVICE);
        *rc = pd_coll_allgatherv_via(&pd_device_path, comm, tag, sendbuf,
                                     recvbuf, recv, fail);
        return true;
    case PD_ROUTE_STAGE:
        break;
    }
    struct pd_stage s[] = {
        { sendbuf, NULL, mine, true, false, false },
        { recvbuf, NULL, pd_layout_span(recv, comm->size), sendbuf == NULL,
          true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_allgatherv_via(&pd_host_path, comm, tag, s[0].host,
                                     s[1].host, recv, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

bool pd_devcoll_gatherv(struct ompi_communicator_t *comm, uint32_t tag,
                        const void *sendbuf, size_t send_bytes, void *recvbuf,
                        const struct pd_layout *recv, int root,
                        struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    bool is_root = comm->rank == root;
    const void *bufs[] = { sendbuf, is_root ? recvbuf : NULL };
    char why[256];
    switch (pd_way(bufs, 2, false, NULL, NULL, why, sizeof(why))) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE:
        pd_stats_way(PD_WAY_DEVICE);
        *rc = pd_coll_gatherv_via(&pd_device_path, comm, tag, sendbuf,
                                  send_bytes, recvbuf, recv, root, fail);
        return true;
    case PD_ROUTE_STAGE:
        break;
    }
    size_t span = is_root ? pd_layout_span(recv, comm->size) : 0;
    struct pd_stage s[] = {
        { sendbuf, NULL, send_bytes, true, false, false },
        { bufs[1], NULL, span, false, true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_gatherv_via(&pd_host_path, comm, tag, s[0].host,
                                  send_bytes, is_root ? s[1].host : recvbuf,
                                  recv, root, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

bool pd_devcoll_scatterv(struct ompi_communicator_t *comm, uint32_t tag,
                         const void *sendbuf, const struct pd_layout *send,
                         void *recvbuf, size_t recv_bytes, int root,
                         struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    bool is_root = comm->rank == root;
    const void *bufs[] = { is_root ? sendbuf : NULL, recvbuf };
    char why[256];
    switch (pd_way(bufs, 2, false, NULL, NULL, why, sizeof(why))) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE:
        pd_stats_way(PD_WAY_DEVICE);
        *rc = pd_coll_scatterv_via(&pd_device_path, comm, tag, sendbuf, send,
                                   recvbuf, recv_bytes, root, fail);
        return true;
    case PD_ROUTE_STAGE:
        break;
    }
    size_t span = is_root ? pd_layout_span(send, comm->size) : 0;
    struct pd_stage s[] = {
        { bufs[0], NULL, span, true, false, false },
        { recvbuf, NULL, recv_bytes, false, true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_scatterv_via(&pd_host_path, comm, tag,
                                   is_root ? s[0].host : sendbuf, send,
                                   s[1].host, recv_bytes, root, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

bool pd_devcoll_alltoallv(struct ompi_communicator_t *comm, uint32_t tag,
                          const void *sendbuf, const struct pd_layout *send,
                          void *recvbuf, const struct pd_layout *recv,
                          struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    const void *bufs[] = { sendbuf, recvbuf };
    char why[256];
    enum pd_route_way way = pd_way(bufs, 2, false, NULL, NULL, why,
                                   sizeof(why));
    /* In place needs a scratch copy of recvbuf: staged on the host. */
    if (way == PD_ROUTE_DEVICE && sendbuf == NULL)
        way = PD_ROUTE_STAGE;
    switch (way) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE:
        pd_stats_way(PD_WAY_DEVICE);
        *rc = pd_coll_alltoallv_via(&pd_device_path, comm, tag, sendbuf, send,
                                    recvbuf, recv, fail);
        return true;
    case PD_ROUTE_STAGE:
        break;
    }
    size_t recv_span = pd_layout_span(recv, comm->size);
    struct pd_stage s[] = {
        { sendbuf, NULL, sendbuf ? pd_layout_span(send, comm->size) : 0, true,
          false, false },
        { recvbuf, NULL, recv_span, sendbuf == NULL, true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_alltoallv_via(&pd_host_path, comm, tag, s[0].host, send,
                                    s[1].host, recv, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

/* ----------------------------------------------- reduce_scatter, scan */

static bool pd_equal_counts(const int *counts, int size)
{
    for (int i = 1; i < size; i++)
        if (counts[i] != counts[0])
            return false;
    return true;
}

bool pd_devcoll_reduce_scatter(struct ompi_communicator_t *comm, uint32_t tag,
                               const void *sendbuf, void *recvbuf,
                               const int *counts, MPI_Datatype type,
                               MPI_Op op, struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    size_t extent = pd_type_extent(type), total = 0;
    for (int i = 0; i < comm->size; i++)
        total += (size_t)counts[i];
    const void *bufs[] = { sendbuf, recvbuf };
    char why[256];
    enum pd_route_way way = pd_way(bufs, 2, true, type, op, why, sizeof(why));
    /* The library scatters equal blocks out of a separate input only. */
    if (way == PD_ROUTE_DEVICE &&
        (sendbuf == NULL || !pd_equal_counts(counts, comm->size)))
        way = PD_ROUTE_STAGE;
    switch (way) {
    case PD_ROUTE_HOST:
        return false;
    case PD_ROUTE_REFUSE:
        *rc = pd_refuse(why, fail);
        return true;
    case PD_ROUTE_DEVICE: {
        struct pd_devcall c = { PD_DEV_REDUCE_SCATTER, "reduce_scatter",
                                sendbuf, recvbuf, (size_t)counts[0], type,
                                op, -1 };
        *rc = pd_device_run(comm, &c, fail);
        return true;
    }
    case PD_ROUTE_STAGE:
        break;
    }
    size_t mine = (size_t)counts[comm->rank] * extent;
    struct pd_stage s[] = {
        { sendbuf, NULL, total * extent, true, false, false },
        { recvbuf, NULL, sendbuf ? mine : total * extent, sendbuf == NULL,
          true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_reduce_scatter(comm, tag, s[0].host, s[1].host, counts,
                                     type, op, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}

bool pd_devcoll_scan(struct ompi_communicator_t *comm, uint32_t tag,
                     const void *sendbuf, void *recvbuf, size_t count,
                     MPI_Datatype type, MPI_Op op, bool exclusive,
                     struct pd_fail *fail, int *rc)
{
    if (!pd_route_memory_aware())
        return false;
    const void *bufs[] = { sendbuf, recvbuf };
    char why[256];
    /* No CCL has a scan: device buffers are always staged. */
    enum pd_route_way way = pd_way(bufs, 2, true, type, op, why, sizeof(why));
    if (way == PD_ROUTE_HOST)
        return false;
    if (way == PD_ROUTE_REFUSE) {
        *rc = pd_refuse(why, fail);
        return true;
    }
    size_t bytes = count * pd_type_extent(type);
    struct pd_stage s[] = {
        { sendbuf, NULL, bytes, true, false, false },
        { recvbuf, NULL, bytes, true, true, false },
    };
    *rc = pd_stage_in(s, 2, fail);
    if (*rc == MPI_SUCCESS)
        *rc = pd_coll_scan(comm, tag, s[0].host, s[1].host, count, type, op,
                           exclusive, fail);
    *rc = pd_stage_out(s, 2, *rc, fail);
    return true;
}
