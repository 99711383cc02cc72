/*
 * The collectives on intercommunicators. Data crosses between
 * the groups as messages on the private union of both (under a tag no
 * program can match); steps inside one group (a reduction to its rank 0,
 * the broadcast of what that rank received) are the intracommunicator
 * collectives on the private local communicator. Rooted calls follow
 * MPI: the root passes MPI_ROOT, the rest of its group MPI_PROC_NULL,
 * and the other group the root's rank in it. A nonblocking call runs
 * the same steps on the intercommunicator's progress thread.
 */
#include <stdlib.h>

#include "api/coll_args.h"
#include "api/intercoll.h"
#include "service/intercomm.h"
#include "service/p2p.h"
#include "service/progress.h"
#include "service/request.h"

static const struct pd_inter *pd_inter_of(MPI_Comm comm)
{
    return comm->state->inter;
}

static int pd_check_inter_root(MPI_Comm comm, const char *call, int root)
{
    int remote = pd_inter_of(comm)->remote->size;
    if (root == MPI_ROOT || root == MPI_PROC_NULL ||
        (root >= 0 && root < remote))
        return MPI_SUCCESS;
    return pd_raise(comm, call, MPI_ERR_ROOT, "root %d is not MPI_ROOT, "
                    "MPI_PROC_NULL or a rank of the remote group of %s "
                    "(size %d)", root, pd_comm_label(comm), remote);
}

/* Post a message of count items of type at buf to (send) or from remote
 * rank r. */
static int pd_ic_post(const char *call, const struct pd_inter *in, bool send,
                      const void *buf, int count, MPI_Datatype type, int r,
                      MPI_Request *req)
{
    int peer = in->remote_first + r;
    if (send)
        return pd_api_send(call, buf, count, type, peer, PD_TAG_INTER,
                           in->both, req);
    return pd_api_irecv(call, (void *)buf, count, type, peer, PD_TAG_INTER,
                        in->both, req);
}

/* Wait for the n requests posted (NULL: none); rc is the posting's
 * result: when it failed (and raised), receives still waiting are taken
 * back rather than waited for. The first failure is raised on comm. */
static int pd_ic_wait(const char *call, MPI_Comm comm, MPI_Request *reqs,
                      int n, int rc)
{
    struct pd_fail first = { MPI_SUCCESS, "" };
    for (int i = 0; i < n; i++) {
        if (reqs[i] == NULL)
            continue;
        if (rc != MPI_SUCCESS && reqs[i]->state->receive)
            pd_p2p_cancel_recv(reqs[i]);
        pd_request_wait_done(reqs[i]);
        struct pd_fail f;
        if (pd_request_finish(&reqs[i], MPI_STATUS_IGNORE, &f) !=
                MPI_SUCCESS && first.errclass == MPI_SUCCESS)
            first = f;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    return first.errclass == MPI_SUCCESS ? MPI_SUCCESS
                                         : pd_raise_fail(comm, call, &first);
}

/* One message, to (send) or from remote rank r, waited for. */
static int pd_ic_one(const char *call, MPI_Comm comm, bool send,
                     const void *buf, int count, MPI_Datatype type, int r)
{
    MPI_Request req = NULL;
    int rc = pd_ic_post(call, pd_inter_of(comm), send, buf, count, type, r,
                        &req);
    return pd_ic_wait(call, comm, &req, 1, rc);
}

/* A scratch buffer for count items of type in its own layout; *base
 * is the address to pass as the buffer; free the return. */
static void *pd_ic_scratch(MPI_Comm comm, const char *call, int count,
                           MPI_Datatype type, void **base)
{
    char *items;
    void *mem = pd_type_alloc_items(type, (size_t)count, &items);
    if (mem == NULL) {
        pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory for a scratch "
                 "buffer of %d x %s", count, pd_type_name(type));
        return NULL;
    }
    *base = items;
    return mem;
}

/* The messages of every remote rank r (block r of a layout): counts NULL
 * means count each; displs NULL means r * count items apart; types NULL
 * means type each, else displs are in bytes (alltoallw); same: every
 * block is the whole buffer (what allgather sends to each rank). */
struct pd_ic_blocks {
    const void *buf;
    int count;
    const int *counts;
    const int *displs;
    MPI_Datatype type;
    const MPI_Datatype *types;
    bool same;
};

static const void *pd_ic_block(const struct pd_ic_blocks *b, int r,
                               int *count, MPI_Datatype *type)
{
    *count = b->counts != NULL ? b->counts[r] : b->count;
    *type = b->types != NULL ? b->types[r] : b->type;
    if (b->same)
        return b->buf;
    if (b->types != NULL)
        return (const char *)b->buf + b->displs[r];
    ptrdiff_t at = b->displs != NULL ? (ptrdiff_t)b->displs[r]
                                     : (ptrdiff_t)r * (ptrdiff_t)b->count;
    return (const char *)b->buf + at * pd_type_extent(b->type);
}

/* Post one receive per remote rank (from, may be NULL) and one send per
 * remote rank (to, may be NULL), then wait for all. */
static int pd_ic_exchange(const char *call, MPI_Comm comm,
                          const struct pd_ic_blocks *from,
                          const struct pd_ic_blocks *to)
{
    const struct pd_inter *in = pd_inter_of(comm);
    int n = in->remote->size;
    MPI_Request *reqs = calloc(2 * (size_t)n, sizeof(*reqs));
    if (reqs == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    int rc = MPI_SUCCESS, k = 0;
    for (int r = 0; r < n && from != NULL && rc == MPI_SUCCESS; r++) {
        int count;
        MPI_Datatype type;
        const void *at = pd_ic_block(from, r, &count, &type);
        rc = pd_ic_post(call, in, false, at, count, type, r, &reqs[k++]);
    }
    for (int r = 0; r < n && to != NULL && rc == MPI_SUCCESS; r++) {
        int count;
        MPI_Datatype type;
        const void *at = pd_ic_block(to, r, &count, &type);
        rc = pd_ic_post(call, in, true, at, count, type, r, &reqs[k++]);
    }
    rc = pd_ic_wait(call, comm, reqs, k, rc);
    free(reqs);
    return rc;
}

/* A side's arguments, counts and displacements per remote rank. */
static int pd_ic_check_side(MPI_Comm comm, const char *call, const void *buf,
                            int count, const int *counts, const int *displs,
                            MPI_Datatype type, enum pd_side side)
{
    static const char *const what[] = {
        [PD_SIDE_SEND] = "sendcounts", [PD_SIDE_RECV] = "recvcounts",
        [PD_SIDE_ONE] = "counts" };
    int n = pd_inter_of(comm)->remote->size;
    if (counts == NULL)
        return pd_check_side(comm, call, buf, count, type, side);
    PD_CHECK(pd_check_counts(comm, call, counts, n, what[side]));
    PD_CHECK(pd_check_displs(comm, call, displs, "displs"));
    PD_CHECK(pd_check_data_type(comm, call, type,
                                side == PD_SIDE_SEND ? "sendtype"
                                                     : "recvtype"));
    for (int r = 0; r < n; r++)
        PD_CHECK(pd_check_buffer(comm, call, buf, counts[r], type,
                                 side == PD_SIDE_SEND ? "sendbuf"
                                                      : "recvbuf"));
    return MPI_SUCCESS;
}

/* ---- nonblocking: the same call, run by the progress thread ------------ */

/* A call's arguments, kept for its turn on the progress thread (count
 * and type arrays are the program's: MPI keeps them unchanged until the
 * call completes). */
struct pd_ic_call {
    int (*run)(const struct pd_ic_call *a);
    const char *call;
    MPI_Comm comm;
    const void *sendbuf;
    void *recvbuf;
    int sendcount, recvcount;
    const int *sendcounts, *sdispls, *recvcounts, *rdispls;
    const MPI_Datatype *sendtypes, *recvtypes;
    MPI_Datatype sendtype, recvtype;
    MPI_Op op;
    int root;
};

static void pd_ic_type_hold(MPI_Datatype type, bool hold)
{
    if (type == NULL || type == MPI_DATATYPE_NULL || !pd_type_is_valid(type))
        return;
    if (hold)
        pd_type_retain(type);
    else
        pd_type_release(type);
}

static void pd_ic_call_free(void *args)
{
    struct pd_ic_call *a = args;
    pd_ic_type_hold(a->sendtype, false);
    pd_ic_type_hold(a->recvtype, false);
    free(a);
}

static int pd_ic_call_run(void *args, struct pd_fail *fail)
{
    const struct pd_ic_call *a = args;
    *fail = (struct pd_fail){ MPI_SUCCESS, "" };
    pd_raise_capture(fail);
    int rc = a->run(a);
    pd_raise_capture(NULL);
    if (rc != MPI_SUCCESS && fail->errclass == MPI_SUCCESS)
        pd_fail_set(fail, rc, "%s failed", a->call);
    return rc;
}

/* Queue a on its intercommunicator's progress thread, after the calls
 * started before it; *request completes when it has run. */
static int pd_ic_defer(const struct pd_ic_call *a, MPI_Request *request)
{
    struct pd_ic_call *copy = malloc(sizeof(*copy));
    struct ompi_request_t *req = copy != NULL ? pd_request_new(a->comm,
                                                               a->call)
                                              : NULL;
    if (req == NULL) {
        free(copy);
        return pd_raise(a->comm, a->call, MPI_ERR_NO_MEM, "out of memory");
    }
    *copy = *a;
    pd_ic_type_hold(copy->sendtype, true);
    pd_ic_type_hold(copy->recvtype, true);
    struct pd_fail fail;
    if (pd_progress_defer(req, pd_ic_call_run, copy, pd_ic_call_free,
                          &fail) != MPI_SUCCESS)
        return pd_raise_fail(a->comm, a->call, &fail);
    *request = req;
    return MPI_SUCCESS;
}

/* Checked, a call runs now (request NULL: after the nonblocking ones
 * started before it, whose messages share its tag) or in its turn. */
static int pd_ic_go(const struct pd_ic_call *a, MPI_Request *request)
{
    if (request != NULL)
        return pd_ic_defer(a, request);
    pd_progress_drain(a->comm);
    return a->run(a);
}

/* ---- the calls ---------------------------------------------------------- */

static int pd_ic_barrier(const struct pd_ic_call *a)
{
    return PMPI_Barrier(pd_inter_of(a->comm)->both);
}

int pd_inter_barrier(const char *call, MPI_Comm comm, MPI_Request *request)
{
    return pd_ic_go(&(struct pd_ic_call){ .run = pd_ic_barrier, .call = call,
                                          .comm = comm }, request);
}

static int pd_ic_bcast(const struct pd_ic_call *a)
{
    MPI_Comm comm = a->comm;
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT)
        return pd_ic_one(a->call, comm, true, a->recvbuf, a->recvcount,
                         a->recvtype, 0);
    /* The remote root's data comes to rank 0, which hands it on. */
    if (comm->rank == 0)
        PD_CHECK(pd_ic_one(a->call, comm, false, a->recvbuf, a->recvcount,
                           a->recvtype, a->root));
    return PMPI_Bcast(a->recvbuf, a->recvcount, a->recvtype, 0,
                      pd_inter_of(comm)->local);
}

int pd_inter_bcast(const char *call, void *buffer, int count,
                   MPI_Datatype type, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    PD_CHECK(pd_check_inter_root(comm, call, root));
    if (root != MPI_PROC_NULL)
        PD_CHECK(pd_check_side(comm, call, buffer, count, type, PD_SIDE_ONE));
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_bcast, .call = call, .comm = comm, .recvbuf = buffer,
        .recvcount = count, .recvtype = type, .root = root }, request);
}

static int pd_ic_gather(const struct pd_ic_call *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT)
        return pd_ic_one(a->call, a->comm, true, a->sendbuf, a->sendcount,
                         a->sendtype, a->root);
    struct pd_ic_blocks from = { a->recvbuf, a->recvcount, a->recvcounts,
                                 a->rdispls, a->recvtype, NULL, false };
    return pd_ic_exchange(a->call, a->comm, &from, NULL);
}

int pd_inter_gather(const char *call, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    const int *recvcounts, const int *displs,
                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    PD_CHECK(pd_check_inter_root(comm, call, root));
    if (root == MPI_ROOT)
        PD_CHECK(pd_ic_check_side(comm, call, recvbuf, recvcount, recvcounts,
                                  displs, recvtype, PD_SIDE_RECV));
    else if (root != MPI_PROC_NULL)
        PD_CHECK(pd_check_side(comm, call, sendbuf, sendcount, sendtype,
                               PD_SIDE_SEND));
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_gather, .call = call, .comm = comm, .sendbuf = sendbuf,
        .sendcount = sendcount, .sendtype = sendtype, .recvbuf = recvbuf,
        .recvcount = recvcount, .recvcounts = recvcounts, .rdispls = displs,
        .recvtype = recvtype, .root = root }, request);
}

static int pd_ic_scatter(const struct pd_ic_call *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT)
        return pd_ic_one(a->call, a->comm, false, a->recvbuf, a->recvcount,
                         a->recvtype, a->root);
    struct pd_ic_blocks to = { a->sendbuf, a->sendcount, a->sendcounts,
                               a->sdispls, a->sendtype, NULL, false };
    return pd_ic_exchange(a->call, a->comm, NULL, &to);
}

int pd_inter_scatter(const char *call, const void *sendbuf, int sendcount,
                     const int *sendcounts, const int *displs,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    PD_CHECK(pd_check_inter_root(comm, call, root));
    if (root == MPI_ROOT)
        PD_CHECK(pd_ic_check_side(comm, call, sendbuf, sendcount, sendcounts,
                                  displs, sendtype, PD_SIDE_SEND));
    else if (root != MPI_PROC_NULL)
        PD_CHECK(pd_check_side(comm, call, recvbuf, recvcount, recvtype,
                               PD_SIDE_RECV));
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_scatter, .call = call, .comm = comm, .sendbuf = sendbuf,
        .sendcount = sendcount, .sendcounts = sendcounts, .sdispls = displs,
        .sendtype = sendtype, .recvbuf = recvbuf, .recvcount = recvcount,
        .recvtype = recvtype, .root = root }, request);
}

static int pd_ic_allgather(const struct pd_ic_call *a)
{
    /* Every rank's block goes to every rank of the other group. */
    struct pd_ic_blocks from = { a->recvbuf, a->recvcount, a->recvcounts,
                                 a->rdispls, a->recvtype, NULL, false };
    struct pd_ic_blocks same = { a->sendbuf, a->sendcount, NULL, NULL,
                                 a->sendtype, NULL, true };
    return pd_ic_exchange(a->call, a->comm, &from, &same);
}

int pd_inter_allgather(const char *call, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       const int *recvcounts, const int *displs,
                       MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    PD_CHECK(pd_check_side(comm, call, sendbuf, sendcount, sendtype,
                           PD_SIDE_SEND));
    PD_CHECK(pd_ic_check_side(comm, call, recvbuf, recvcount, recvcounts,
                              displs, recvtype, PD_SIDE_RECV));
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_allgather, .call = call, .comm = comm,
        .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
        .recvbuf = recvbuf, .recvcount = recvcount, .recvcounts = recvcounts,
        .rdispls = displs, .recvtype = recvtype }, request);
}

static int pd_ic_alltoall(const struct pd_ic_call *a)
{
    struct pd_ic_blocks from = { a->recvbuf, a->recvcount, a->recvcounts,
                                 a->rdispls, a->recvtype, a->recvtypes,
                                 false };
    struct pd_ic_blocks to = { a->sendbuf, a->sendcount, a->sendcounts,
                               a->sdispls, a->sendtype, a->sendtypes,
                               false };
    return pd_ic_exchange(a->call, a->comm, &from, &to);
}

int pd_inter_alltoall(const char *call, const void *sendbuf, int sendcount,
                      const int *sendcounts, const int *sdispls,
                      const MPI_Datatype *sendtypes, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, const int *recvcounts,
                      const int *rdispls, const MPI_Datatype *recvtypes,
                      MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    int n = pd_inter_of(comm)->remote->size;
    if (sendtypes != NULL) {
        /* Alltoallw: a type per block, displacements in bytes. */
        PD_CHECK(pd_check_counts(comm, call, sendcounts, n, "sendcounts"));
        PD_CHECK(pd_check_counts(comm, call, recvcounts, n, "recvcounts"));
        PD_CHECK(pd_check_displs(comm, call, sdispls, "sdispls"));
        PD_CHECK(pd_check_displs(comm, call, rdispls, "rdispls"));
        if (recvtypes == NULL)
            return pd_raise(comm, call, MPI_ERR_ARG, "recvtypes is NULL");
        for (int r = 0; r < n; r++) {
            PD_CHECK(pd_check_data_type(comm, call, sendtypes[r],
                                        "sendtypes[r]"));
            PD_CHECK(pd_check_data_type(comm, call, recvtypes[r],
                                        "recvtypes[r]"));
            PD_CHECK(pd_check_buffer(comm, call, sendbuf, sendcounts[r],
                                     sendtypes[r], "sendbuf"));
            PD_CHECK(pd_check_buffer(comm, call, recvbuf, recvcounts[r],
                                     recvtypes[r], "recvbuf"));
        }
    } else {
        PD_CHECK(pd_ic_check_side(comm, call, sendbuf, sendcount, sendcounts,
                                  sdispls, sendtype, PD_SIDE_SEND));
        PD_CHECK(pd_ic_check_side(comm, call, recvbuf, recvcount, recvcounts,
                                  rdispls, recvtype, PD_SIDE_RECV));
    }
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_alltoall, .call = call, .comm = comm,
        .sendbuf = sendbuf, .sendcount = sendcount, .sendcounts = sendcounts,
        .sdispls = sdispls, .sendtypes = sendtypes, .sendtype = sendtype,
        .recvbuf = recvbuf, .recvcount = recvcount, .recvcounts = recvcounts,
        .rdispls = rdispls, .recvtypes = recvtypes, .recvtype = recvtype },
        request);
}

static int pd_ic_check_reduction(MPI_Comm comm, const char *call,
                                 const void *sendbuf, int count,
                                 MPI_Datatype type, MPI_Op op)
{
    PD_CHECK(pd_check_side(comm, call, sendbuf, count, type, PD_SIDE_SEND));
    return pd_check_op(comm, call, type, op);
}

/* This group's reduction of sendbuf at its rank 0, in a scratch buffer
 * (*base; the return is what to free, NULL elsewhere and on failure:
 * *rc says which). */
static void *pd_ic_reduce_here(const char *call, MPI_Comm comm,
                               const void *sendbuf, int count,
                               MPI_Datatype type, MPI_Op op, void **base,
                               int *rc)
{
    void *scratch = NULL;
    *base = NULL;
    *rc = MPI_SUCCESS;
    if (comm->rank == 0 &&
        (scratch = pd_ic_scratch(comm, call, count, type, base)) == NULL) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    *rc = PMPI_Reduce(sendbuf, *base, count, type, op, 0,
                      pd_inter_of(comm)->local);
    if (*rc != MPI_SUCCESS) {
        free(scratch);
        return NULL;
    }
    return scratch;
}

static int pd_ic_reduce(const struct pd_ic_call *a)
{
    MPI_Comm comm = a->comm;
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT)
        return pd_ic_one(a->call, comm, false, a->recvbuf, a->recvcount,
                         a->recvtype, 0);
    void *base;
    int rc;
    void *scratch = pd_ic_reduce_here(a->call, comm, a->sendbuf,
                                      a->recvcount, a->recvtype, a->op,
                                      &base, &rc);
    if (rc != MPI_SUCCESS || comm->rank != 0)
        return rc;
    rc = pd_ic_one(a->call, comm, true, base, a->recvcount, a->recvtype,
                   a->root);
    free(scratch);
    return rc;
}

int pd_inter_reduce(const char *call, const void *sendbuf, void *recvbuf,
                    int count, MPI_Datatype type, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Request *request)
{
    PD_CHECK(pd_check_inter_root(comm, call, root));
    if (root == MPI_ROOT) {
        PD_CHECK(pd_check_side(comm, call, recvbuf, count, type,
                               PD_SIDE_RECV));
        PD_CHECK(pd_check_op(comm, call, type, op));
    } else if (root != MPI_PROC_NULL) {
        PD_CHECK(pd_ic_check_reduction(comm, call, sendbuf, count, type, op));
    }
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_reduce, .call = call, .comm = comm, .sendbuf = sendbuf,
        .recvbuf = recvbuf, .recvcount = count, .recvtype = type, .op = op,
        .root = root }, request);
}

/* Rank 0 of each group sends its group's reduction (count items at
 * mine) to the other's and receives theirs at into. */
static int pd_ic_swap(const char *call, MPI_Comm comm, const void *mine,
                      void *into, int count, MPI_Datatype type)
{
    const struct pd_inter *in = pd_inter_of(comm);
    MPI_Request reqs[2] = { NULL, NULL };
    int rc = pd_ic_post(call, in, false, into, count, type, 0, &reqs[0]);
    if (rc == MPI_SUCCESS)
        rc = pd_ic_post(call, in, true, mine, count, type, 0, &reqs[1]);
    return pd_ic_wait(call, comm, reqs, 2, rc);
}

static int pd_ic_allreduce(const struct pd_ic_call *a)
{
    MPI_Comm comm = a->comm;
    void *base;
    int rc;
    void *scratch = pd_ic_reduce_here(a->call, comm, a->sendbuf,
                                      a->recvcount, a->recvtype, a->op,
                                      &base, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm->rank == 0) {
        rc = pd_ic_swap(a->call, comm, base, a->recvbuf, a->recvcount,
                        a->recvtype);
        free(scratch);
        PD_CHECK(rc);
    }
    return PMPI_Bcast(a->recvbuf, a->recvcount, a->recvtype, 0,
                      pd_inter_of(comm)->local);
}

int pd_inter_allreduce(const char *call, const void *sendbuf, void *recvbuf,
                       int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                       MPI_Request *request)
{
    PD_CHECK(pd_ic_check_reduction(comm, call, sendbuf, count, type, op));
    PD_CHECK(pd_check_side(comm, call, recvbuf, count, type, PD_SIDE_RECV));
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_allreduce, .call = call, .comm = comm,
        .sendbuf = sendbuf, .recvbuf = recvbuf, .recvcount = count,
        .recvtype = type, .op = op }, request);
}

/* The whole vector's length: sendcount. */
static int pd_ic_reduce_scatter(const struct pd_ic_call *a)
{
    /* Each group reduces the whole vector (the same length in both), and
     * the other group's result is scattered here. */
    MPI_Comm comm = a->comm;
    int n = comm->size, total = a->sendcount;
    int mine = a->recvcounts != NULL ? a->recvcounts[comm->rank]
                                     : a->recvcount;
    void *base, *theirs_base = NULL, *theirs = NULL;
    int rc;
    void *scratch = pd_ic_reduce_here(a->call, comm, a->sendbuf, total,
                                      a->recvtype, a->op, &base, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm->rank == 0) {
        theirs = pd_ic_scratch(comm, a->call, total, a->recvtype,
                               &theirs_base);
        rc = theirs == NULL ? MPI_ERR_NO_MEM
                            : pd_ic_swap(a->call, comm, base, theirs_base,
                                         total, a->recvtype);
        free(scratch);
        if (rc != MPI_SUCCESS) {
            free(theirs);
            return rc;
        }
    }
    MPI_Comm local = pd_inter_of(comm)->local;
    if (a->recvcounts == NULL) {
        rc = PMPI_Scatter(theirs_base, mine, a->recvtype, a->recvbuf, mine,
                          a->recvtype, 0, local);
    } else {
        int *displs = malloc((size_t)n * sizeof(int));
        if (displs == NULL) {
            free(theirs);
            return pd_raise(comm, a->call, MPI_ERR_NO_MEM, "out of memory");
        }
        for (int r = 0, at = 0; r < n; at += a->recvcounts[r++])
            displs[r] = at;
        rc = PMPI_Scatterv(theirs_base, a->recvcounts, displs, a->recvtype,
                           a->recvbuf, mine, a->recvtype, 0, local);
        free(displs);
    }
    free(theirs);
    return rc;
}

int pd_inter_reduce_scatter(const char *call, const void *sendbuf,
                            void *recvbuf, int recvcount,
                            const int *recvcounts, MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    int n = comm->size;
    long total = 0;
    if (recvcounts != NULL) {
        PD_CHECK(pd_check_counts(comm, call, recvcounts, n, "recvcounts"));
        for (int r = 0; r < n; r++)
            total += recvcounts[r];
    } else {
        PD_CHECK(pd_check_count(comm, call, recvcount, "recvcount"));
        total = (long)recvcount * n;
    }
    if (total > 0x7fffffffL)
        return pd_raise(comm, call, MPI_ERR_COUNT, "the vector of %ld items "
                        "is longer than an int counts", total);
    int mine = recvcounts != NULL ? recvcounts[comm->rank] : recvcount;
    PD_CHECK(pd_ic_check_reduction(comm, call, sendbuf, (int)total, type,
                                   op));
    PD_CHECK(pd_check_side(comm, call, recvbuf, mine, type, PD_SIDE_RECV));
    return pd_ic_go(&(struct pd_ic_call){
        .run = pd_ic_reduce_scatter, .call = call, .comm = comm,
        .sendbuf = sendbuf, .sendcount = (int)total, .recvbuf = recvbuf,
        .recvcount = recvcount, .recvcounts = recvcounts, .recvtype = type,
        .op = op }, request);
}
