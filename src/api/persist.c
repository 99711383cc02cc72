/* Persistent point-to-point requests: MPI_Send_init, MPI_Bsend_init,
 * MPI_Ssend_init,
 * MPI_Rsend_init, MPI_Recv_init, MPI_Start, MPI_Startall.
 *
 * A persistent request keeps its call's arguments; MPI_Start makes the
 * operation's own request from them, which the persistent one stands
 * for until a completion call finishes it and leaves the persistent
 * request inactive (service/request.c). MPI_Request_free lets go of it. */
#include <stdlib.h>

#include "api/api.h"
#include "service/request.h"

#pragma weak MPI_Send_init = PMPI_Send_init
#pragma weak MPI_Bsend_init = PMPI_Bsend_init
#pragma weak MPI_Ssend_init = PMPI_Ssend_init
#pragma weak MPI_Rsend_init = PMPI_Rsend_init
#pragma weak MPI_Recv_init = PMPI_Recv_init
#pragma weak MPI_Start = PMPI_Start
#pragma weak MPI_Startall = PMPI_Startall

enum pd_persistent_kind {
    PD_PERSIST_SEND,
    PD_PERSIST_BSEND,
    PD_PERSIST_SSEND,
    PD_PERSIST_RECV,
};

struct pd_persistent {
    enum pd_persistent_kind kind;
    void *buf;
    int count;
    MPI_Datatype type;
    int peer;
    int tag;
    const char *start_call;     /* what the operation's errors name */
};

static int pd_persistent_new(const char *call, enum pd_persistent_kind kind,
                             const void *buf, int count, MPI_Datatype type,
                             int peer, int tag, MPI_Comm comm,
                             MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, call, request));
    struct pd_persistent *args = malloc(sizeof(*args));
    struct ompi_request_t *req = args != NULL ? pd_request_new(comm, call)
                                              : NULL;
    if (req == NULL) {
        free(args);
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    }
    *args = (struct pd_persistent){ kind, (void *)buf, count, type, peer,
                                    tag, call };
    req->state->persistent = true;
    req->state->persistent_args = args;
    *request = req;
    return MPI_SUCCESS;
}

static int pd_send_init(const char *call, enum pd_persistent_kind kind,
                        const void *buf, int count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm,
                        MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_send(comm, call, buf, count, datatype, dest, tag));
    return pd_persistent_new(call, kind, buf, count, datatype, dest, tag,
                             comm, request);
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_send_init("MPI_Send_init", PD_PERSIST_SEND, buf, count,
                        datatype, dest, tag, comm, request);
}

/* A ready send is a standard send (as MPI_Rsend is). */
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_send_init("MPI_Rsend_init", PD_PERSIST_SEND, buf, count,
                        datatype, dest, tag, comm, request);
}

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_send_init("MPI_Ssend_init", PD_PERSIST_SSEND, buf, count,
                        datatype, dest, tag, comm, request);
}

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_send_init("MPI_Bsend_init", PD_PERSIST_BSEND, buf, count,
                        datatype, dest, tag, comm, request);
}

int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Recv_init";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_recv(comm, call, buf, count, datatype, source, tag));
    return pd_persistent_new(call, PD_PERSIST_RECV, buf, count, datatype,
                             source, tag, comm, request);
}

static int pd_start_one(const char *call, MPI_Request *request)
{
    PD_CHECK(pd_check_live_request(call, request));
    struct pd_request_state *st = (*request)->state;
    if (!st->persistent)
        return pd_raise(st->comm, call, MPI_ERR_REQUEST, "the request is "
                        "%s's, not a persistent one (MPI_Send_init, "
                        "MPI_Recv_init & co.)", st->call);
    if (st->active != NULL)
        return pd_raise(st->comm, call, MPI_ERR_REQUEST, "the %s request is "
                        "active already: complete it before starting it "
                        "again", st->call);
    const struct pd_persistent *a = st->persistent_args;
    MPI_Comm comm = st->comm;
    switch (a->kind) {
    case PD_PERSIST_SEND:
        return pd_api_send(a->start_call, a->buf, a->count, a->type, a->peer,
                           a->tag, comm, &st->active);
    case PD_PERSIST_SSEND:
        return pd_api_ssend(a->start_call, a->buf, a->count, a->type,
                            a->peer, a->tag, comm, &st->active);
    case PD_PERSIST_RECV:
        return pd_api_irecv(a->start_call, a->buf, a->count, a->type,
                            a->peer, a->tag, comm, &st->active);
    case PD_PERSIST_BSEND:
        PD_CHECK(pd_api_bsend(a->start_call, a->buf, a->count, a->type,
                              a->peer, a->tag, comm));
        if ((st->active = pd_request_new_done(comm, a->start_call)) == NULL)
            return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
        return MPI_SUCCESS;
    }
    return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
    static const char call[] = "MPI_Start";
    PD_CHECK(pd_check_active(call));
    return pd_start_one(call, request);
}

int PMPI_Startall(int count, MPI_Request requests[])
{
    static const char call[] = "MPI_Startall";
    PD_CHECK(pd_check_active(call));
    if (count < 0)
        return pd_raise(NULL, call, MPI_ERR_COUNT, "count is negative (%d)",
                        count);
    if (count > 0 && requests == NULL)
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "requests is NULL");
    for (int i = 0; i < count; i++)
        PD_CHECK(pd_start_one(call, &requests[i]));
    return MPI_SUCCESS;
}
