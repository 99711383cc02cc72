/*
 * Collectives on buffers of non-contiguous datatypes: which bytes of each
 * buffer a call reads and writes, by kind, packed into scratch buffers
 * before it runs and unpacked after (core/type_stage.h). The descriptor
 * already counts in packed bytes (pd_type_packed), so only its buffers
 * change. A contiguous type never comes here.
 */
#include "api/api.h"
#include "route/route.h"

/* Bytes [from, from + bytes) of a buffer of type, as items, into st. */
static int pd_stage_range(struct pd_type_stage *st, const void *buf,
                          MPI_Datatype type, size_t from, size_t bytes,
                          bool in, bool out)
{
    size_t packed = pd_type_packed(type);
    if (bytes == 0 || packed == 0)
        return 0;
    char *user = (char *)buf + (ptrdiff_t)(from / packed) *
                                   (ptrdiff_t)pd_type_extent(type);
    return pd_stage_add(st, user, type, bytes / packed, from, in, out);
}

/* Block i of layout l, or every block (i < 0). */
static int pd_stage_layout(struct pd_type_stage *st, const void *buf,
                           MPI_Datatype type, const struct pd_layout *l,
                           int size, int i, bool in, bool out)
{
    for (int r = i < 0 ? 0 : i; r < (i < 0 ? size : i + 1); r++) {
        size_t off, bytes;
        pd_layout_block(l, r, &off, &bytes);
        if (pd_stage_range(st, buf, type, off, bytes, in, out) != 0)
            return -1;
    }
    return 0;
}

/* The bytes of the send buffer c reads. */
static int pd_stage_send_side(struct pd_type_stage *st, const struct pd_coll *c,
                              MPI_Datatype type)
{
    const void *buf = c->sendbuf;
    int size = c->comm->size, rank = c->comm->rank;
    size_t from, total, off, bytes;
    switch (c->kind) {
    case PD_COLL_ALLREDUCE:
    case PD_COLL_REDUCE:
    case PD_COLL_SCAN:
    case PD_COLL_EXSCAN:
        return pd_stage_range(st, buf, type, 0, c->count * pd_type_packed(type),
                              true, false);
    case PD_COLL_REDUCE_SCATTER:
        pd_coll_block_span(c, size - 1, &from, &total);
        return pd_stage_range(st, buf, type, 0,
                              (from + total) * pd_type_packed(type), true,
                              false);
    case PD_COLL_ALLGATHER:
    case PD_COLL_GATHERV:
        return pd_stage_range(st, buf, type, 0, c->count, true, false);
    case PD_COLL_ALLGATHERV:
        pd_layout_block(&c->recv, rank, &off, &bytes);
        return pd_stage_range(st, buf, type, 0, bytes, true, false);
    case PD_COLL_SCATTERV:
    case PD_COLL_ALLTOALLV:
        return pd_stage_layout(st, buf, type, &c->send, size, -1, true, false);
    default:
        return 0;
    }
}

/* The bytes of the receive buffer c writes, and those it reads there
 * (in place, a broadcast's root). */
static int pd_stage_recv_side(struct pd_type_stage *st, const struct pd_coll *c,
                              MPI_Datatype type)
{
    void *buf = c->recvbuf;
    int size = c->comm->size, rank = c->comm->rank;
    bool in_place = c->sendbuf == NULL;
    size_t packed = pd_type_packed(type), from, total;
    switch (c->kind) {
    case PD_COLL_REDUCE:
        if (rank != c->root)
            return 0;
        /* fall through */
    case PD_COLL_ALLREDUCE:
    case PD_COLL_SCAN:
    case PD_COLL_EXSCAN:
        return pd_stage_range(st, buf, type, 0, c->count * packed, in_place,
                              true);
    case PD_COLL_REDUCE_SCATTER:
        pd_coll_block_span(c, rank, &from, &total);
        if (in_place) {
            size_t last_from, last_total;
            pd_coll_block_span(c, size - 1, &last_from, &last_total);
            if (pd_stage_range(st, buf, type, 0,
                               (last_from + last_total) * packed, true,
                               false) != 0)
                return -1;
        }
        return pd_stage_range(st, buf, type, 0, total * packed, false, true);
    case PD_COLL_BCAST:
        return pd_stage_range(st, buf, type, 0, c->count, rank == c->root,
                              rank != c->root);
    case PD_COLL_ALLGATHER:
        if (in_place &&
            pd_stage_range(st, buf, type, (size_t)rank * c->count, c->count,
                           true, false) != 0)
            return -1;
        return pd_stage_range(st, buf, type, 0, (size_t)size * c->count,
                              false, true);
    case PD_COLL_GATHERV:
        if (rank != c->root)
            return 0;
        /* fall through */
    case PD_COLL_ALLGATHERV:
        if (in_place && pd_stage_layout(st, buf, type, &c->recv, size, rank,
                                        true, false) != 0)
            return -1;
        return pd_stage_layout(st, buf, type, &c->recv, size, -1, false, true);
    case PD_COLL_SCATTERV:
        return pd_stage_range(st, buf, type, 0, c->count, false, true);
    case PD_COLL_ALLTOALLV:
        return pd_stage_layout(st, buf, type, &c->recv, size, -1, in_place,
                               true);
    default:
        return 0;
    }
}

/* buf first: a side the call does not use may come with a type that is
 * no handle at all (MPI ignores it). */
static bool pd_needs_stage(MPI_Datatype type, const void *buf)
{
    return buf != NULL && type != NULL && !type->contiguous;
}

/* One side's stage into *list; its scratch buffer in *buf. */
static int pd_stage_side(const char *call, struct pd_coll *c,
                         MPI_Datatype type, bool send,
                         struct pd_type_stage **list)
{
    const void *user = send ? c->sendbuf : c->recvbuf;
    if (pd_route_is_device(user))
        return pd_raise(c->comm, call, MPI_ERR_TYPE, "%s has a non-contiguous "
                        "datatype (%s) in device memory; pdmpi packs "
                        "non-contiguous data in host memory only",
                        send ? "sendbuf" : "recvbuf",
                        type->name[0] ? type->name : "a derived type");
    struct pd_type_stage *st = pd_stage_new();
    if (st == NULL)
        return pd_raise(c->comm, call, MPI_ERR_NO_MEM, "out of memory");
    st->next = *list;
    *list = st;
    if ((send ? pd_stage_send_side(st, c, type)
              : pd_stage_recv_side(st, c, type)) != 0 ||
        pd_stage_pack(st) != 0)
        return pd_raise(c->comm, call, MPI_ERR_NO_MEM, "out of memory");
    if (send)
        c->sendbuf = st->packed;
    else
        c->recvbuf = st->packed;
    return MPI_SUCCESS;
}

int pd_stage_coll(const char *call, struct pd_coll *c,
                  const struct pd_agree *a, struct pd_type_stage **stage)
{
    MPI_Datatype send = c->type != NULL ? c->type : a->send_type;
    MPI_Datatype recv = c->type != NULL ? c->type : a->recv_type;
    *stage = a->stage;
    int rc = MPI_SUCCESS;
    if (pd_needs_stage(send, c->sendbuf))
        rc = pd_stage_side(call, c, send, true, stage);
    if (rc == MPI_SUCCESS && pd_needs_stage(recv, c->recvbuf))
        rc = pd_stage_side(call, c, recv, false, stage);
    if (rc != MPI_SUCCESS) {
        pd_stage_free(*stage);
        *stage = NULL;
    }
    return rc;
}

int pd_stage_p2p(const char *call, MPI_Comm comm, const void *buf, int count,
                 MPI_Datatype type, bool receive, struct pd_type_stage **stage)
{
    *stage = NULL;
    if (type->contiguous || count == 0)
        return MPI_SUCCESS;
    if (pd_route_is_device(buf))
        return pd_raise(comm, call, MPI_ERR_TYPE, "the buffer has a "
                        "non-contiguous datatype (%s) in device memory; pdmpi "
                        "packs non-contiguous data in host memory only",
                        type->name[0] ? type->name : "a derived type");
    struct pd_type_stage *st = pd_stage_new();
    if (st == NULL ||
        pd_stage_add(st, (void *)buf, type, (size_t)count, 0, !receive,
                     receive) != 0 ||
        pd_stage_pack(st) != 0) {
        pd_stage_free(st);
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    }
    *stage = st;
    return MPI_SUCCESS;
}
