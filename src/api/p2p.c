/* Point-to-point: Send, Ssend, Recv, their nonblocking forms, Sendrecv, Probe,
 * matched probes (Mprobe, Mrecv), Cancel. */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/handles.h"
#include "service/intercomm.h"
#include "service/p2p.h"

#pragma weak MPI_Send = PMPI_Send
#pragma weak MPI_Recv = PMPI_Recv
#pragma weak MPI_Isend = PMPI_Isend
#pragma weak MPI_Rsend = PMPI_Rsend
#pragma weak MPI_Ssend = PMPI_Ssend
#pragma weak MPI_Issend = PMPI_Issend
#pragma weak MPI_Irsend = PMPI_Irsend
#pragma weak MPI_Irecv = PMPI_Irecv
#pragma weak MPI_Sendrecv = PMPI_Sendrecv
#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
#pragma weak MPI_Probe = PMPI_Probe
#pragma weak MPI_Iprobe = PMPI_Iprobe
#pragma weak MPI_Mprobe = PMPI_Mprobe
#pragma weak MPI_Improbe = PMPI_Improbe
#pragma weak MPI_Mrecv = PMPI_Mrecv
#pragma weak MPI_Imrecv = PMPI_Imrecv
#pragma weak MPI_Cancel = PMPI_Cancel
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled

static void pd_status_proc_null(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
    /* MPI_ERROR stays the caller's (MPI 3.2.5). */
    status->_cancelled = 0;
    status->_ucount = 0;
}

/* Communication with MPI_PROC_NULL: a request born complete. */
static int pd_proc_null_request(const char *call, MPI_Comm comm,
                                MPI_Request *request)
{
    if ((*request = pd_request_new_done(comm, call)) == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    /* Nobody else holds it yet: its status may follow its completion. */
    pd_status_proc_null(&(*request)->state->status);
    (*request)->state->has_status = true;
    return MPI_SUCCESS;
}

MPI_Comm pd_p2p_on(MPI_Comm comm, int *peer, int *shift)
{
    const struct pd_inter *in = comm->state->inter;
    if (shift != NULL)
        *shift = in != NULL ? in->remote_first : 0;
    if (in == NULL)
        return comm;
    if (*peer >= 0)
        *peer += in->remote_first;
    return in->both;
}

/* A large send of a non-contiguous type, packed as it moves where it can
 * be (to dest on `on`); whether it went so, with *rc its outcome (request
 * NULL: blocking). Else the caller packs it whole. */
static bool pd_send_streamed(const char *call, const void *buf, int count,
                             MPI_Datatype type, int dest, int tag,
                             MPI_Comm comm, MPI_Comm on, bool synchronous,
                             MPI_Request *request, int *rc)
{
    size_t bytes = (size_t)count * pd_type_packed(type);
    if (type->contiguous ||
        !pd_p2p_may_stream(on, dest, buf, bytes))
        return false;
    struct pd_type_stage *stage;
    if ((*rc = pd_stage_p2p_unpacked(call, comm, buf, count, type,
                                     &stage)) != MPI_SUCCESS)
        return true;
    bool streamed;
    struct pd_fail fail;
    *rc = pd_p2p_send_streamed(on, stage, bytes, dest, tag, synchronous,
                               request, call, &streamed, &fail);
    if (!streamed || request == NULL)
        pd_stage_free(stage);   /* else the request's */
    if (streamed && *rc != MPI_SUCCESS)
        *rc = pd_raise_fail(comm, call, &fail);
    return streamed;
}

/* Start a send; request NULL means blocking. */
int pd_api_send(const char *call, const void *buf, int count,
                   MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    struct pd_fail fail;
    if (dest == MPI_PROC_NULL)
        return request == NULL ? MPI_SUCCESS
                               : pd_proc_null_request(call, comm, request);
    MPI_Comm on = pd_p2p_on(comm, &dest, NULL);
    size_t bytes = (size_t)count * pd_type_packed(type);
    int rc;
    if (pd_send_streamed(call, buf, count, type, dest, tag, comm, on, false,
                         request, &rc))
        return rc;
    /* Else a non-contiguous type's data goes packed whole. */
    struct pd_type_stage *stage;
    PD_CHECK(pd_stage_p2p(call, comm, buf, count, type, false, &stage));
    if (pd_p2p_send(on, stage != NULL ? stage->packed : buf, bytes, dest,
                    tag, request, call, &fail) != MPI_SUCCESS) {
        pd_stage_free(stage);
        return pd_raise_fail(comm, call, &fail);
    }
    if (request != NULL)
        (*request)->state->type_stages = stage;  /* until it completes */
    else
        pd_stage_free(stage);
    return MPI_SUCCESS;
}

/* A receive into count items of type at buf: by way of a packed scratch
 * buffer, unpacked when the request finishes, for a non-contiguous type.
 * message: a matched probe's message to receive (NULL: match source and
 * tag). */
static int pd_irecv_into(const char *call, void *buf, int count,
                         MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, struct pd_message *message,
                         MPI_Request *request)
{
    struct pd_fail fail;
    struct pd_type_stage *stage;
    PD_CHECK(pd_stage_p2p(call, comm, buf, count, type, true, &stage));
    void *into = stage != NULL ? stage->packed : buf;
    size_t bytes = (size_t)count * pd_type_packed(type);
    int shift;
    MPI_Comm on = pd_p2p_on(comm, &source, &shift);
    int rc = message != NULL
                 ? pd_p2p_mrecv(on, message, into, bytes, stage, request,
                                call, &fail)
                 : pd_p2p_irecv(on, into, bytes, stage, source, tag, request,
                                call, &fail);
    if (rc != MPI_SUCCESS) {
        pd_stage_free(stage);
        return pd_raise_fail(comm, call, &fail);
    }
    (*request)->state->source_shift = shift;
    return MPI_SUCCESS;
}

static int pd_irecv(const char *call, void *buf, int count, MPI_Datatype type,
                    int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_irecv_into(call, buf, count, type, source, tag, comm, NULL,
                         request);
}

int pd_api_irecv(const char *call, void *buf, int count, MPI_Datatype type,
                 int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    if (source == MPI_PROC_NULL)
        return pd_proc_null_request(call, comm, request);
    PD_CHECK(pd_irecv(call, buf, count, type, source, tag, comm, request));
    pd_p2p_receive_left();
    return MPI_SUCCESS;
}

/* Wait for a receive and raise its failure (truncation, lost peer). */
static int pd_wait_recv(const char *call, MPI_Comm comm, MPI_Request *request,
                        MPI_Status *status)
{
    pd_request_wait_done(*request);
    struct pd_fail fail;
    if (pd_request_finish(request, status, &fail) != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

int pd_api_ssend(const char *call, const void *buf, int count,
                 MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                 MPI_Request *request)
{
    if (dest == MPI_PROC_NULL)
        return request == NULL ? MPI_SUCCESS
                               : pd_proc_null_request(call, comm, request);
    MPI_Comm on = pd_p2p_on(comm, &dest, NULL);
    int rc;
    if (pd_send_streamed(call, buf, count, type, dest, tag, comm, on, true,
                         request, &rc))
        return rc;
    struct pd_type_stage *stage;
    PD_CHECK(pd_stage_p2p(call, comm, buf, count, type, false, &stage));
    MPI_Request own, *req = request != NULL ? request : &own;
    struct pd_fail fail;
    if (pd_p2p_issend(on, stage != NULL ? stage->packed : buf,
                      (size_t)count * pd_type_packed(type), dest, tag, req,
                      call, &fail) != MPI_SUCCESS) {
        pd_stage_free(stage);
        return pd_raise_fail(comm, call, &fail);
    }
    /* The receipt comes once the data has arrived: the packed copy is
     * let go of with the request. */
    (*req)->state->type_stages = stage;
    if (request != NULL)
        return MPI_SUCCESS;
    return pd_wait_recv(call, comm, &own, MPI_STATUS_IGNORE);
}

/* MPI_Send, MPI_Isend and the ready sends, which are standard sends (as
 * MPI allows: a ready send's receive is posted already, or the program
 * is erroneous), and with synchronous the synchronous sends; request
 * NULL: blocking. */
static int pd_send_call(const char *call, const void *buf, int count,
                        MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, bool nonblocking, MPI_Request *request,
                        bool synchronous)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_send(comm, call, buf, count, datatype, dest, tag));
    if (nonblocking && request == NULL)
        return pd_raise(comm, call, MPI_ERR_REQUEST, "request is NULL");
    /* A small blocking send on one host: into the peer's ring at once,
     * past the layers that serve every other case. */
    if (!nonblocking && !synchronous && datatype->contiguous &&
        dest != MPI_PROC_NULL && !pd_comm_is_inter(comm) &&
        pd_p2p_send_now(comm, buf,
                        (size_t)count * pd_type_packed(datatype), dest, tag))
        return MPI_SUCCESS;
    return (synchronous ? pd_api_ssend : pd_api_send)(
        call, buf, count, datatype, dest, tag, comm,
        nonblocking ? request : NULL);
}

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm)
{
    return pd_send_call("MPI_Send", buf, count, datatype, dest, tag, comm,
                        false, NULL, false);
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_send_call("MPI_Isend", buf, count, datatype, dest, tag, comm,
                        true, request, false);
}

/* Synchronous sends: complete once a receive has matched the message. */
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm)
{
    return pd_send_call("MPI_Ssend", buf, count, datatype, dest, tag, comm,
                        false, NULL, true);
}

int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_send_call("MPI_Issend", buf, count, datatype, dest, tag, comm,
                        true, request, true);
}

int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm)
{
    return pd_send_call("MPI_Rsend", buf, count, datatype, dest, tag, comm,
                        false, NULL, false);
}

int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request *request)
{
    return pd_send_call("MPI_Irsend", buf, count, datatype, dest, tag, comm,
                        true, request, false);
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source,
               int tag, MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Irecv";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_recv(comm, call, buf, count, datatype, source, tag));
    if (request == NULL)
        return pd_raise(comm, call, MPI_ERR_REQUEST, "request is NULL");
    return pd_api_irecv(call, buf, count, datatype, source, tag, comm,
                        request);
}

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
              MPI_Comm comm, MPI_Status *status)
{
    static const char call[] = "MPI_Recv";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_recv(comm, call, buf, count, datatype, source, tag));
    if (source == MPI_PROC_NULL) {
        pd_status_proc_null(status);
        return MPI_SUCCESS;
    }
    /* Contiguous, on an intracommunicator: no request handle needed. */
    if (datatype->contiguous && !pd_comm_is_inter(comm)) {
        struct pd_fail fail;
        size_t bytes = (size_t)count * pd_type_packed(datatype);
        int rc = pd_p2p_recv(comm, buf, bytes, source, tag, status, call,
                             &fail);
        if (rc == MPI_SUCCESS)
            return MPI_SUCCESS;
        if (rc != 1)
            return pd_raise_fail(comm, call, &fail);
    }
    MPI_Request request;
    PD_CHECK(pd_irecv(call, buf, count, datatype, source, tag, comm, &request));
    return pd_wait_recv(call, comm, &request, status);
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  int dest, int sendtag, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    static const char call[] = "MPI_Sendrecv";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_send(comm, call, sendbuf, sendcount, sendtype, dest,
                           sendtag));
    PD_CHECK(pd_check_recv(comm, call, recvbuf, recvcount, recvtype, source,
                           recvtag));
    /* Receive first, so an exchange with oneself or a ring cannot wait on
     * itself. */
    MPI_Request request = MPI_REQUEST_NULL;
    if (source != MPI_PROC_NULL)
        PD_CHECK(pd_irecv(call, recvbuf, recvcount, recvtype, source, recvtag,
                          comm, &request));
    PD_CHECK(pd_api_send(call, sendbuf, sendcount, sendtype, dest, sendtag, comm,
                     NULL));
    if (source == MPI_PROC_NULL) {
        pd_status_proc_null(status);
        return MPI_SUCCESS;
    }
    return pd_wait_recv(call, comm, &request, status);
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype,
                          int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status)
{
    static const char call[] = "MPI_Sendrecv_replace";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_send(comm, call, buf, count, datatype, dest, sendtag));
    /* What is sent is a packed copy, so the buffer is free to receive. */
    size_t bytes = (size_t)count * pd_type_packed(datatype);
    if (bytes > INT_MAX)
        return pd_raise(comm, call, MPI_ERR_COUNT, "%d x %s pack to %zu "
                        "bytes, more than an int counts", count,
                        pd_type_name(datatype), bytes);
    void *copy = malloc(bytes ? bytes : 1);
    if (copy == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    pd_type_pack(datatype, buf, 0, bytes, copy);
    int rc = PMPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dest, sendtag, buf,
                           count, datatype, source, recvtag, comm, status);
    free(copy);
    return rc;
}

/* Probe; with message (a matched probe), the message found is taken for
 * the one MPI_Mrecv its *message names. */
static int pd_probe(const char *call, int source, int tag, MPI_Comm comm,
                    bool block, int *flag, MPI_Status *status,
                    MPI_Message *message)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_peer(comm, call, source, true, "source"));
    PD_CHECK(pd_check_tag(comm, call, tag, true));
    if (message != NULL)
        *message = MPI_MESSAGE_NULL;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        pd_status_proc_null(status);
        if (message != NULL)
            *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    struct ompi_message_t *handle = NULL;
    if (message != NULL &&
        (handle = calloc(1, sizeof(*handle))) == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    struct pd_fail fail;
    struct pd_message *taken = NULL;
    int shift;
    MPI_Comm on = pd_p2p_on(comm, &source, &shift);
    if (pd_p2p_probe(on, source, tag, block, flag, status,
                     message != NULL ? &taken : NULL, &fail) != MPI_SUCCESS) {
        free(handle);
        return pd_raise_fail(comm, call, &fail);
    }
    if (*flag && status != MPI_STATUS_IGNORE)
        status->MPI_SOURCE -= shift;
    if (taken != NULL) {
        *handle = (struct ompi_message_t){ .magic = PD_MAGIC_MESSAGE,
                                           .comm = comm, .msg = taken };
        *message = handle;
    } else {
        free(handle);
    }
    if (!*flag)
        sched_yield(); /* a polling caller lets the receiving thread run */
    return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag;
    return pd_probe("MPI_Probe", source, tag, comm, true, &flag, status,
                    NULL);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
                MPI_Status *status)
{
    if (flag == NULL)
        return pd_raise(comm, "MPI_Iprobe", MPI_ERR_ARG, "flag is NULL");
    return pd_probe("MPI_Iprobe", source, tag, comm, false, flag, status,
                    NULL);
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                MPI_Status *status)
{
    int flag;
    if (message == NULL)
        return pd_raise(comm, "MPI_Mprobe", MPI_ERR_ARG, "message is NULL");
    return pd_probe("MPI_Mprobe", source, tag, comm, true, &flag, status,
                    message);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
                 MPI_Message *message, MPI_Status *status)
{
    if (flag == NULL)
        return pd_raise(comm, "MPI_Improbe", MPI_ERR_ARG, "flag is NULL");
    if (message == NULL)
        return pd_raise(comm, "MPI_Improbe", MPI_ERR_ARG, "message is NULL");
    return pd_probe("MPI_Improbe", source, tag, comm, false, flag, status,
                    message);
}

/* Receive the message of a matched probe: *message becomes
 * MPI_MESSAGE_NULL; with request NULL, wait for it. */
static int pd_mrecv(const char *call, void *buf, int count,
                    MPI_Datatype type, MPI_Message *message,
                    MPI_Status *status, MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    if (message == NULL || *message == NULL ||
        (*message)->magic != PD_MAGIC_MESSAGE)
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "message is not a "
                        "message handle");
    if (*message == MPI_MESSAGE_NULL)
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "message is "
                        "MPI_MESSAGE_NULL (no matched probe found a message "
                        "for it, or it was received already)");
    MPI_Comm comm = (*message)->comm;
    if (*message == MPI_MESSAGE_NO_PROC)
        comm = MPI_COMM_SELF;
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, type, "datatype"));
    PD_CHECK(pd_check_buffer(comm, call, buf, count, type, "buf"));
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        if (request != NULL)
            return pd_proc_null_request(call, comm, request);
        pd_status_proc_null(status);
        return MPI_SUCCESS;
    }
    struct ompi_message_t *handle = *message;
    *message = MPI_MESSAGE_NULL;
    pd_handle_forget(PD_HANDLE_MESSAGE, handle);
    handle->magic = PD_MAGIC_FREED;
    struct pd_message *m = handle->msg;
    free(handle);
    MPI_Request own;
    PD_CHECK(pd_irecv_into(call, buf, count, type, MPI_ANY_SOURCE,
                           MPI_ANY_TAG, comm, m,
                           request != NULL ? request : &own));
    if (request != NULL)
        return MPI_SUCCESS;
    return pd_wait_recv(call, comm, &own, status);
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Status *status)
{
    return pd_mrecv("MPI_Mrecv", buf, count, type, message, status, NULL);
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype type,
                MPI_Message *message, MPI_Request *request)
{
    if (request == NULL)
        return pd_raise(NULL, "MPI_Imrecv", MPI_ERR_REQUEST,
                        "request is NULL");
    return pd_mrecv("MPI_Imrecv", buf, count, type, message,
                    MPI_STATUS_IGNORE, request);
}

/* A receive that no message has matched is taken back; one that has, and
 * every send, complete as usual (MPI lets a cancel fail; the request's
 * status says which happened). MPI forbids cancelling a collective. */
int PMPI_Cancel(MPI_Request *request)
{
    static const char call[] = "MPI_Cancel";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_live_request(call, request));
    struct pd_request_state *st = (*request)->state;
    /* A persistent request: its started operation's. */
    if (st->persistent) {
        if (st->active == NULL)
            return pd_raise(st->comm, call, MPI_ERR_REQUEST, "the %s "
                            "request is not started", st->call);
        request = &st->active;
        st = st->active->state;
    }
    if (st->collective)
        return pd_raise(st->comm, call, MPI_ERR_REQUEST,
                        "the request is %s's, and a collective cannot be "
                        "cancelled", st->call);
    /* A synchronous send's request is the receive of its receipt; the
     * message itself is on its way and cannot be taken back, so the
     * cancel fails and the send completes when it is received. */
    if (st->receive && !st->sync_send)
        pd_p2p_cancel_recv(*request);
    if (st->greq_cancel != NULL) {
        int rc = st->greq_cancel(st->greq_extra, pd_request_is_done(*request));
        if (rc != MPI_SUCCESS)
            return pd_raise(st->comm, call, rc, "the cancel callback of the "
                            "generalized request returned %d", rc);
    }
    return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    static const char call[] = "MPI_Test_cancelled";
    if (status == MPI_STATUS_IGNORE)
        return pd_raise(NULL, call, MPI_ERR_ARG,
                        "status is NULL (MPI_STATUS_IGNORE)");
    if (flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "flag is NULL");
    *flag = status->_cancelled != 0;
    return MPI_SUCCESS;
}
