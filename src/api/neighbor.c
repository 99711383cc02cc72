/*
 * The neighbourhood collectives, blocking and nonblocking: every rank
 * sends a block to each of its destinations and receives one from each
 * of its sources, as its communicator's topology says (api/topo.c,
 * api/graph.c). They are point-to-point messages under tags no program
 * can use (PD_TAG_NEIGHBOR), gathered into one request whose parts they
 * are; blocks of one pair match in the order both ranks list each
 * other, as MPI asks of a graph with repeated edges.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "core/cart.h"
#include "core/graph.h"
#include "service/p2p.h"

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw

/* A rank's neighbours: where it receives from (in) and sends to (out),
 * with each message's tag. */
struct pd_hood {
    int nin, nout;
    int *in, *out;
    int *in_tag, *out_tag;
};

static void pd_hood_free(struct pd_hood *h)
{
    free(h->in);    /* one allocation holds the four arrays */
}

/*
 * A grid's neighbours, in MPI's order: along each dimension the one a
 * step back, then the one a step forward (MPI_PROC_NULL past an edge
 * that does not wrap). Where both are the same rank (a periodic
 * dimension of one or two), the tag says which way a block travelled:
 * what a rank sends backward arrives in its neighbour's forward slot.
 */
static void pd_hood_cart(const struct pd_cart *cart, int rank,
                         struct pd_hood *h)
{
    for (int d = 0; d < cart->ndims; d++) {
        int back, forth;
        pd_cart_shift(cart, rank, d, 1, &back, &forth);
        h->in[2 * d] = h->out[2 * d] = back;
        h->in[2 * d + 1] = h->out[2 * d + 1] = forth;
        /* Travelling forward along d: tag 2d + 1; backward: 2d. */
        h->out_tag[2 * d] = PD_TAG_NEIGHBOR(2 * d);
        h->out_tag[2 * d + 1] = PD_TAG_NEIGHBOR(2 * d + 1);
        h->in_tag[2 * d] = PD_TAG_NEIGHBOR(2 * d + 1);
        h->in_tag[2 * d + 1] = PD_TAG_NEIGHBOR(2 * d);
    }
}

/* comm's topology as this rank's neighbourhood. */
static int pd_hood_get(MPI_Comm comm, const char *call, struct pd_hood *h)
{
    const struct pd_cart *cart = comm->state->cart;
    const struct pd_graph *graph = comm->state->graph;
    if (cart == NULL && graph == NULL)
        return pd_raise(comm, call, MPI_ERR_TOPOLOGY, "%s has no topology "
                        "(a neighbourhood collective needs one made by "
                        "MPI_Cart_create, MPI_Graph_create or "
                        "MPI_Dist_graph_create)",
                        pd_comm_label(comm));
    h->nin = cart != NULL ? 2 * cart->ndims : graph->indegree;
    h->nout = cart != NULL ? 2 * cart->ndims : graph->outdegree;
    size_t n = (size_t)h->nin + (size_t)h->nout;
    h->in = malloc((n > 0 ? 2 * n : 1) * sizeof(int));
    if (h->in == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    h->out = h->in + h->nin;
    h->in_tag = h->out + h->nout;
    h->out_tag = h->in_tag + h->nin;
    if (cart != NULL) {
        pd_hood_cart(cart, comm->rank, h);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < h->nin; i++) {
        h->in[i] = graph->sources[i];
        h->in_tag[i] = PD_TAG_NEIGHBOR(0);
    }
    for (int i = 0; i < h->nout; i++) {
        h->out[i] = graph->destinations[i];
        h->out_tag[i] = PD_TAG_NEIGHBOR(0);
    }
    return MPI_SUCCESS;
}

/* How the blocks of one side (send or receive) lie in its buffer. */
enum pd_side_layout {
    PD_SIDE_SAME,       /* each block is buf itself (the allgathers' send) */
    PD_SIDE_PACKED,     /* block i: count items from item i * count */
    PD_SIDE_V,          /* block i: counts[i] items from item displs[i] */
    PD_SIDE_W,          /* block i: counts[i] of types[i] at byte
                           displs_bytes[i] */
};

struct pd_side {
    enum pd_side_layout layout;
    const void *buf;
    int count;
    const int *counts;
    const int *displs;
    const MPI_Aint *displs_bytes;
    MPI_Datatype type;
    const MPI_Datatype *types;
    const char *name;       /* "send" or "recv", for messages */
};

static int pd_side_count(const struct pd_side *s, int i)
{
    return s->layout >= PD_SIDE_V ? s->counts[i] : s->count;
}

static MPI_Datatype pd_side_type(const struct pd_side *s, int i)
{
    return s->layout == PD_SIDE_W ? s->types[i] : s->type;
}

/* Block i's address; integer arithmetic, since buf may be MPI_BOTTOM. */
static void *pd_side_block(const struct pd_side *s, int i)
{
    uintptr_t base = (uintptr_t)s->buf;
    switch (s->layout) {
    case PD_SIDE_SAME:
        return (void *)base;
    case PD_SIDE_PACKED:
        return (void *)(base + (uintptr_t)((intptr_t)i * (intptr_t)s->count *
                                           (intptr_t)pd_type_extent(s->type)));
    case PD_SIDE_V:
        return (void *)(base + (uintptr_t)((intptr_t)s->displs[i] *
                                           (intptr_t)pd_type_extent(s->type)));
    case PD_SIDE_W:
        break;
    }
    return (void *)(base + (uintptr_t)s->displs_bytes[i]);
}

/* n blocks of side s: arrays present, types usable (one for all but
 * alltoallw's), counts not negative, a buffer where there is data. */
static int pd_side_check(MPI_Comm comm, const char *call,
                         const struct pd_side *s, int n)
{
    if (s->buf == MPI_IN_PLACE)
        return pd_raise(comm, call, MPI_ERR_BUFFER, "%sbuf may not be "
                        "MPI_IN_PLACE here", s->name);
    if (n > 0 && s->layout >= PD_SIDE_V) {
        const char *missing =
            s->counts == NULL                                    ? "counts"
            : s->layout == PD_SIDE_V && s->displs == NULL        ? "displs"
            : s->layout == PD_SIDE_W && s->displs_bytes == NULL  ? "displs"
            : s->layout == PD_SIDE_W && s->types == NULL         ? "types"
                                                                 : NULL;
        if (missing != NULL)
            return pd_raise(comm, call, MPI_ERR_ARG, "%s%s is NULL",
                            s->name, missing);
    }
    char what[32];
    snprintf(what, sizeof(what), "%stype", s->name);
    int ntypes = s->layout == PD_SIDE_W ? n : n > 0;
    for (int i = 0; i < ntypes; i++)
        PD_CHECK(pd_check_data_type(comm, call, pd_side_type(s, i), what));
    for (int i = 0; i < n; i++) {
        int count = pd_side_count(s, i);
        if (count < 0)
            return pd_raise(comm, call, MPI_ERR_COUNT, "%scount of neighbour "
                            "%d is negative (%d)", s->name, i, count);
        /* MPI_BOTTOM is a buffer where displacements are addresses. */
        if (count > 0 && s->buf == NULL && s->layout != PD_SIDE_W &&
            s->type->contiguous)
            return pd_raise(comm, call, MPI_ERR_BUFFER, "%sbuf is NULL but "
                            "neighbour %d's count is %d", s->name, i, count);
    }
    return MPI_SUCCESS;
}

/* Finish the started parts of a call that could not start them all. */
static void pd_parts_abandon(struct ompi_request_t **parts, int n)
{
    for (int i = 0; i < n; i++) {
        struct pd_fail fail;
        if (parts[i]->state->receive)
            pd_p2p_cancel_recv(parts[i]);
        pd_request_wait_done(parts[i]);
        pd_request_finish(&parts[i], MPI_STATUS_IGNORE, &fail);
    }
}

/* One call: its checks, then the receives and the sends posted as the
 * parts of one request -- *request's, or waited for here when the call
 * is blocking. */
static int pd_neighbor_run(const char *call, MPI_Comm comm,
                           const struct pd_side *send,
                           const struct pd_side *recv, bool nonblocking,
                           MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (nonblocking)
        PD_CHECK(pd_check_request_out(comm, call, request));
    struct pd_hood h = { 0 };
    PD_CHECK(pd_hood_get(comm, call, &h));
    int rc = pd_side_check(comm, call, send, h.nout);
    if (rc == MPI_SUCCESS)
        rc = pd_side_check(comm, call, recv, h.nin);
    struct ompi_request_t *req = NULL;
    int n = h.nin + h.nout, started = 0;
    struct ompi_request_t **parts = NULL;
    if (rc == MPI_SUCCESS) {
        req = pd_request_new(comm, call);
        parts = malloc((size_t)(n > 0 ? n : 1) * sizeof(*parts));
        if (req == NULL || parts == NULL)
            rc = pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    }
    for (int i = 0; rc == MPI_SUCCESS && i < h.nin; i++, started++)
        rc = pd_api_irecv(call, pd_side_block(recv, i), pd_side_count(recv, i),
                          pd_side_type(recv, i), h.in[i], h.in_tag[i], comm,
                          &parts[started]);
    for (int i = 0; rc == MPI_SUCCESS && i < h.nout; i++, started++)
        rc = pd_api_send(call, pd_side_block(send, i), pd_side_count(send, i),
                         pd_side_type(send, i), h.out[i], h.out_tag[i], comm,
                         &parts[started]);
    pd_hood_free(&h);
    if (rc != MPI_SUCCESS) {
        /* The failed start raised its error; the loop counted it. */
        pd_parts_abandon(parts, started > 0 ? started - 1 : 0);
        free(parts);
        if (req != NULL) {
            pd_request_complete(req->state);    /* no part will */
            pd_request_release(&req);
        }
        return rc;
    }
    req->state->collective = true;
    req->state->parts = parts;
    req->state->nparts = n;
    if (nonblocking) {
        *request = req;
        return MPI_SUCCESS;
    }
    pd_request_wait_done(req);
    struct pd_fail fail;
    if (pd_request_finish(&req, MPI_STATUS_IGNORE, &fail) != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

static int pd_allgather(const char *call, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        const int *recvcounts, const int *displs,
                        MPI_Datatype recvtype, bool vector, MPI_Comm comm,
                        bool nonblocking, MPI_Request *request)
{
    struct pd_side send = { .layout = PD_SIDE_SAME, .buf = sendbuf,
                            .count = sendcount, .type = sendtype,
                            .name = "send" };
    struct pd_side recv = { .layout = vector ? PD_SIDE_V : PD_SIDE_PACKED,
                            .buf = recvbuf, .count = recvcount,
                            .counts = recvcounts, .displs = displs,
                            .type = recvtype, .name = "recv" };
    return pd_neighbor_run(call, comm, &send, &recv, nonblocking, request);
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    return pd_allgather("MPI_Neighbor_allgather", sendbuf, sendcount,
                        sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                        false, comm, false, NULL);
}

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    return pd_allgather("MPI_Ineighbor_allgather", sendbuf, sendcount,
                        sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                        false, comm, true, request);
}

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    return pd_allgather("MPI_Neighbor_allgatherv", sendbuf, sendcount,
                        sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                        true, comm, false, NULL);
}

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
    return pd_allgather("MPI_Ineighbor_allgatherv", sendbuf, sendcount,
                        sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                        true, comm, true, request);
}

/* The alltoalls: block i of send to destination i, from source i into
 * block i of recv. */
#define PD_PACKED_SIDE(which)                                              \
    (&(struct pd_side){ .layout = PD_SIDE_PACKED, .buf = which##buf,       \
                        .count = which##count, .type = which##type,        \
                        .name = #which })
#define PD_V_SIDE(which, disp)                                             \
    (&(struct pd_side){ .layout = PD_SIDE_V, .buf = which##buf,            \
                        .counts = which##counts, .displs = disp,           \
                        .type = which##type, .name = #which })
#define PD_W_SIDE(which, disp)                                             \
    (&(struct pd_side){ .layout = PD_SIDE_W, .buf = which##buf,            \
                        .counts = which##counts, .displs_bytes = disp,     \
                        .types = which##types, .name = #which })

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm)
{
    return pd_neighbor_run("MPI_Neighbor_alltoall", comm,
                           PD_PACKED_SIDE(send),
                           PD_PACKED_SIDE(recv), false, NULL);
}

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request)
{
    return pd_neighbor_run("MPI_Ineighbor_alltoall", comm,
                           PD_PACKED_SIDE(send),
                           PD_PACKED_SIDE(recv), true, request);
}

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    return pd_neighbor_run("MPI_Neighbor_alltoallv", comm,
                           PD_V_SIDE(send, sdispls),
                           PD_V_SIDE(recv, rdispls), false, NULL);
}

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                             const int sdispls[], MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    return pd_neighbor_run("MPI_Ineighbor_alltoallv", comm,
                           PD_V_SIDE(send, sdispls),
                           PD_V_SIDE(recv, rdispls), true, request);
}

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return pd_neighbor_run("MPI_Neighbor_alltoallw", comm,
                           PD_W_SIDE(send, sdispls),
                           PD_W_SIDE(recv, rdispls), false, NULL);
}

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                             const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf,
                             const int recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    return pd_neighbor_run("MPI_Ineighbor_alltoallw", comm,
                           PD_W_SIDE(send, sdispls),
                           PD_W_SIDE(recv, rdispls), true, request);
}
