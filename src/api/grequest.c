/* Generalized requests: MPI_Grequest_start, MPI_Grequest_complete. A
 * library's own operation behind an MPI_Request: the completion calls
 * wait for MPI_Grequest_complete, then its query callback gives the
 * status and its free callback lets go of it (service/request.c); an
 * MPI_Cancel calls its cancel callback. */
#include "api/api.h"
#include "service/request.h"

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                        MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn,
                        void *extra_state, MPI_Request *request)
{
    static const char call[] = "MPI_Grequest_start";
    PD_CHECK(pd_check_active(call));
    if (query_fn == NULL || free_fn == NULL || cancel_fn == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "the %s callback is NULL",
                        query_fn == NULL ? "query"
                                         : free_fn == NULL ? "free" : "cancel");
    PD_CHECK(pd_check_request_out(NULL, call, request));
    struct ompi_request_t *req =
        pd_request_new((struct ompi_communicator_t *)MPI_COMM_SELF, call);
    if (req == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    req->state->greq_query = query_fn;
    req->state->greq_free = free_fn;
    req->state->greq_cancel = cancel_fn;
    req->state->greq_extra = extra_state;
    *request = req;
    return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request)
{
    static const char call[] = "MPI_Grequest_complete";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_live_request(call, &request));
    struct pd_request_state *st = request->state;
    if (st->greq_query == NULL)
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "the request is %s's, "
                        "not a generalized request", st->call);
    if (pd_request_is_done(request))
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "the generalized "
                        "request is complete already");
    /* Freed by MPI_Request_free before: completing it lets go of it, and
     * of its handle, which lives in it (dropped first). */
    if (__atomic_load_n(&st->user_freed, __ATOMIC_ACQUIRE))
        pd_request_drop_handle(request);
    pd_request_complete(st);
    return MPI_SUCCESS;
}
