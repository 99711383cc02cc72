/*
 * The block-moving collectives as point-to-point messages: every rank
 * posts what it sends and receives, then waits for all of them. One
 * composition serves host memory (pd_host_path) and device memory
 * (devcoll.c's path over the device CCL's send/receive).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

void pd_layout_block(const struct pd_layout *l, int i, size_t *offset,
                     size_t *bytes)
{
    size_t count = l->counts != NULL ? (size_t)l->counts[i] : 1;
    size_t displ = l->displs != NULL ? (size_t)l->displs[i]
                                     : (size_t)i * count;
    *offset = displ * l->extent;
    *bytes = count * l->extent;
}

size_t pd_layout_span(const struct pd_layout *l, int size)
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

/* A message list: at most two per peer. */
struct pd_msgs {
    struct pd_p2p_op *op;
    size_t n;
};

/* bytes at offset off of buf (no pointer is formed for an empty one:
 * buf may be NULL where a rank has nothing to move). */
static void pd_add_msg(struct pd_msgs *m, int peer, int is_send,
                       const void *buf, size_t off, size_t bytes)
{
    if (bytes > 0)
        m->op[m->n++] = (struct pd_p2p_op){ peer, is_send,
                                            (char *)buf + off, bytes };
}

/* What this rank sends to and receives from peer in c: offsets into the
 * send source and recvbuf, and lengths (0: no message). */
struct pd_blocks {
    size_t soff, sbytes, roff, rbytes;
};

static struct pd_blocks pd_blocks_of(const struct pd_coll *c, int peer)
{
    struct pd_blocks b = { 0, 0, 0, 0 };
    bool is_root = c->comm->rank == c->root;
    switch (c->kind) {
    case PD_COLL_ALLGATHERV:        /* the source is this rank's block */
        pd_layout_block(&c->recv, c->comm->rank, &b.soff, &b.sbytes);
        b.soff = 0;
        pd_layout_block(&c->recv, peer, &b.roff, &b.rbytes);
        break;
    case PD_COLL_GATHERV:
        if (is_root)
            pd_layout_block(&c->recv, peer, &b.roff, &b.rbytes);
        else if (peer == c->root)
            b.sbytes = c->count;
        break;
    case PD_COLL_SCATTERV:
        if (is_root)
            pd_layout_block(&c->send, peer, &b.soff, &b.sbytes);
        else if (peer == c->root)
            b.rbytes = c->count;
        break;
    default:                        /* alltoallv */
        pd_layout_block(&c->send, peer, &b.soff, &b.sbytes);
        pd_layout_block(&c->recv, peer, &b.roff, &b.rbytes);
        break;
    }
    return b;
}

/* This rank's own block -- the message it would send itself -- as a
 * local copy, unless the call is in place (the block is where it goes;
 * an in-place alltoallv has been given a copy of its input). */
static int pd_copy_own(const struct pd_path *path, const struct pd_coll *c,
                       const char *in, struct pd_fail *fail)
{
    bool in_place = c->kind == PD_COLL_SCATTERV ? c->recvbuf == NULL
                    : c->kind == PD_COLL_ALLTOALLV ? false
                                                   : c->sendbuf == NULL;
    struct pd_blocks b = pd_blocks_of(c, c->comm->rank);
    size_t bytes = b.rbytes > 0 ? b.rbytes : b.sbytes; /* root: one side */
    if (in_place || bytes == 0)
        return MPI_SUCCESS;
    return path->copy((char *)c->recvbuf + b.roff, in + b.soff, bytes, fail);
}

int pd_coll_compose(const struct pd_path *path, const struct pd_coll *c,
                    struct pd_fail *fail)
{
    struct ompi_communicator_t *comm = c->comm;
    const char *in = c->sendbuf;
    char *copy = NULL;
    struct pd_coll inplace;
    if (c->kind == PD_COLL_ALLGATHERV && in == NULL) {
        size_t off, bytes;      /* this rank's block is already in place */
        pd_layout_block(&c->recv, comm->rank, &off, &bytes);
        in = bytes > 0 ? (const char *)c->recvbuf + off : NULL;
    } else if (c->kind == PD_COLL_ALLTOALLV && in == NULL) {
        /* In place: what goes out is recvbuf as it was on entry (host
         * memory: the device path stages in-place calls). */
        size_t end = pd_layout_span(&c->recv, comm->size);
        if ((copy = pd_coll_alloc(end, fail)) == NULL)
            return fail->errclass;
        if (end > 0)            /* recvbuf may be NULL when nothing moves */
            memcpy(copy, c->recvbuf, end);
        in = copy;
        inplace = *c;
        inplace.send = c->recv;
        c = &inplace;
    }
    struct pd_msgs m = { pd_coll_alloc(2 * (size_t)comm->size *
                                       sizeof(struct pd_p2p_op), fail), 0 };
    int rc = m.op != NULL ? pd_copy_own(path, c, in, fail) : fail->errclass;
    for (int peer = 0; rc == MPI_SUCCESS && peer < comm->size; peer++) {
        if (peer == comm->rank)
            continue;
        struct pd_blocks b = pd_blocks_of(c, peer);
        pd_add_msg(&m, peer, 0, c->recvbuf, b.roff, b.rbytes);
        pd_add_msg(&m, peer, 1, in, b.soff, b.sbytes);
    }
    if (rc == MPI_SUCCESS)
        rc = path->exchange(c, m.op, m.n, fail);
    free(m.op);
    free(copy);
    return rc;
}
