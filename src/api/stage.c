/*
 * Collectives on buffers of non-contiguous datatypes: which bytes of each
 * buffer a call reads and writes, by kind, packed into scratch buffers
 * before it runs and unpacked after (core/type_stage.h). The descriptor
 * already counts in packed bytes (pd_type_packed), so only its buffers
 * change. A contiguous type never comes here. Device memory, which the
 * host cannot read, is copied to a host mirror of the bytes the blocks
 * span and packed from there; received data goes back the same way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "core/objects.h"
#include "route/route.h"

static int pd_mirror_copy(void *dst, const void *src, size_t bytes)
{
    char err[256];
    return pd_dccl_copy(pd_route_runtime(), dst, src, bytes, err,
                        sizeof(err)) == 0 ? 0 : -1;
}

/* Blocks of st that point into device memory point into a host copy of
 * the span they cover instead. -1 with why set. */
static int pd_stage_mirror(struct pd_type_stage *st, char *why, size_t len)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < st->n; i++) {
        const struct pd_stage_block *b = &st->blocks[i];
        if (b->count == 0)
            continue;
        /* Items running downward (a negative extent) start below the
         * first. */
        intptr_t down = b->type->extent < 0
                            ? (intptr_t)(b->count - 1) * b->type->extent : 0;
        uintptr_t first = (uintptr_t)b->user + (uintptr_t)b->type->true_lb +
                          (uintptr_t)down;
        uintptr_t end = first + pd_type_span(b->type, b->count);
        lo = first < lo ? first : lo;
        hi = end > hi ? end : hi;
    }
    if (hi <= lo)
        return 0;
    st->mirror_bytes = hi - lo;
    st->mirror = malloc(st->mirror_bytes);
    if (st->mirror == NULL) {
        snprintf(why, len, "out of memory (a host copy of %zu bytes of "
                 "device memory)", st->mirror_bytes);
        return -1;
    }
    /* The whole span comes over, gaps too, so that what goes back
     * leaves the gaps as they were. */
    char err[160];
    if (pd_dccl_copy(pd_route_runtime(), st->mirror, (void *)lo,
                     st->mirror_bytes, err, sizeof(err)) != 0) {
        snprintf(why, len, "copying %zu bytes of device memory to the host "
                 "failed: %s", st->mirror_bytes, err);
        return -1;
    }
    st->mirror_of = (void *)lo;
    st->copy_back = pd_mirror_copy;
    for (size_t i = 0; i < st->n; i++)
        st->blocks[i].user = st->mirror + ((uintptr_t)st->blocks[i].user - lo);
    return 0;
}

/* Pack st, by way of a host mirror where user is device memory. */
static int pd_stage_finish(const char *call, MPI_Comm comm,
                           struct pd_type_stage *st, const void *user)
{
    char why[320];
    if (pd_route_is_device(user) && pd_stage_mirror(st, why, sizeof(why)))
        return pd_raise(comm, call, MPI_ERR_OTHER, "a non-contiguous "
                        "datatype in device memory: %s", why);
    if (pd_stage_pack(st) != 0)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

/* Bytes [from, from + bytes) of a buffer of type, as items, into st. */
static int pd_stage_range(struct pd_type_stage *st, const void *buf,
                          MPI_Datatype type, size_t from, size_t bytes,
                          bool in, bool out)
{
    size_t packed = pd_type_packed(type);
    if (bytes == 0 || packed == 0)
        return 0;
    /* In integers: buf may be MPI_BOTTOM (NULL). */
    char *user = (char *)((uintptr_t)buf +
                          (uintptr_t)((ptrdiff_t)(from / packed) *
                                      pd_type_extent(type)));
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

/* Where a descriptor's buffer's data lies: MPI_BOTTOM's at absolute
 * addresses. */
static void *pd_stage_base(const void *buf)
{
    return buf == PD_BOTTOM ? NULL : (void *)buf;
}

/* The bytes of the send buffer c reads. */
static int pd_stage_send_side(struct pd_type_stage *st, const struct pd_coll *c,
                              MPI_Datatype type)
{
    const void *buf = pd_stage_base(c->sendbuf);
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
        /* The whole vector: every rank's block. */
        pd_coll_block_span(c, rank, &from, &total);
        return pd_stage_range(st, buf, type, 0, total * pd_type_packed(type),
                              true, false);
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
    void *buf = pd_stage_base(c->recvbuf);
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
        /* In place the whole vector goes in; only this rank's block, at
         * the start of the buffer, comes back. */
        pd_coll_block_span(c, rank, &from, &total);
        if (in_place &&
            pd_stage_range(st, buf, type, 0, total * packed, true, false) != 0)
            return -1;
        return pd_stage_range(st, buf, type, 0,
                              pd_coll_block_count(c, rank) * packed, false,
                              true);
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

/* A move (broadcast, allgather(v), gather(v), scatter(v), alltoall(v)),
 * or an allreduce, reduce or reduce-scatter, with buffers of host memory
 * and no stage made before:
 * its buffers are described, not packed, for the call to move a piece at
 * a time (c->stage, c->send_stage). */
static bool pd_stage_later(const struct pd_coll *c, const struct pd_agree *a)
{
    bool reduction = c->kind == PD_COLL_ALLREDUCE ||
                     c->kind == PD_COLL_REDUCE ||
                     c->kind == PD_COLL_REDUCE_SCATTER;
    const void *bufs[2] = { c->sendbuf, c->recvbuf };
    for (int i = 0; i < 2; i++)
        if (bufs[i] == PD_BOTTOM ||
            (bufs[i] != NULL && pd_route_is_device(bufs[i])))
            return false;
    bool move = c->kind == PD_COLL_BCAST || c->kind == PD_COLL_ALLGATHER ||
                c->kind == PD_COLL_ALLGATHERV || c->kind == PD_COLL_GATHERV ||
                c->kind == PD_COLL_SCATTERV || c->kind == PD_COLL_ALLTOALLV;
    return a->stage == NULL && (move || reduction);
}

/* One side's stage into *list: packed into its scratch buffer, which
 * becomes c's buffer; or, later, only described (c->stage,
 * c->send_stage). */
static int pd_stage_side(const char *call, struct pd_coll *c,
                         MPI_Datatype type, bool send, bool later,
                         struct pd_type_stage **list)
{
    const void *user = pd_stage_base(send ? c->sendbuf : c->recvbuf);
    struct pd_type_stage *st = pd_stage_new();
    if (st == NULL)
        return pd_raise(c->comm, call, MPI_ERR_NO_MEM, "out of memory");
    st->next = *list;
    *list = st;
    if ((send ? pd_stage_send_side(st, c, type)
              : pd_stage_recv_side(st, c, type)) != 0)
        return pd_raise(c->comm, call, MPI_ERR_NO_MEM, "out of memory");
    if (later) {
        *(send ? &c->send_stage : &c->stage) = st;
        return MPI_SUCCESS;
    }
    PD_CHECK(pd_stage_finish(call, c->comm, st, user));
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
    bool later = pd_stage_later(c, a);
    int rc = MPI_SUCCESS;
    if (pd_needs_stage(send, c->sendbuf))
        rc = pd_stage_side(call, c, send, true, later, stage);
    if (rc == MPI_SUCCESS && pd_needs_stage(recv, c->recvbuf))
        rc = pd_stage_side(call, c, recv, false, later, stage);
    if (rc != MPI_SUCCESS) {
        c->stage = c->send_stage = NULL;
        pd_stage_free(*stage);
        *stage = NULL;
    }
    return rc;
}

/* count items of type at buf as the one block of a new stage, nothing
 * packed yet. */
static int pd_stage_p2p_block(const char *call, MPI_Comm comm,
                              const void *buf, int count, MPI_Datatype type,
                              bool receive, struct pd_type_stage **stage)
{
    struct pd_type_stage *st = pd_stage_new();
    if (st == NULL ||
        pd_stage_add(st, (void *)buf, type, (size_t)count, 0, !receive,
                     receive) != 0) {
        pd_stage_free(st);
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    }
    *stage = st;
    return MPI_SUCCESS;
}

int pd_stage_p2p(const char *call, MPI_Comm comm, const void *buf, int count,
                 MPI_Datatype type, bool receive, struct pd_type_stage **stage)
{
    *stage = NULL;
    if (type->contiguous || count == 0)
        return MPI_SUCCESS;
    struct pd_type_stage *st = NULL;
    PD_CHECK(pd_stage_p2p_block(call, comm, buf, count, type, receive, &st));
    int rc = pd_stage_finish(call, comm, st, buf);
    if (rc != MPI_SUCCESS) {
        pd_stage_free(st);
        return rc;
    }
    *stage = st;
    return MPI_SUCCESS;
}

int pd_stage_p2p_unpacked(const char *call, MPI_Comm comm, const void *buf,
                          int count, MPI_Datatype type,
                          struct pd_type_stage **stage)
{
    return pd_stage_p2p_block(call, comm, buf, count, type, false, stage);
}
