/* Completing requests: Wait, Test and their any/all forms. */
#include <sched.h>
#include <time.h>

#include "api/api.h"
#include "base/clock.h"
#include "service/comm_create.h"
#include "service/request.h"

#pragma weak MPI_Wait = PMPI_Wait
#pragma weak MPI_Waitall = PMPI_Waitall
#pragma weak MPI_Waitany = PMPI_Waitany
#pragma weak MPI_Test = PMPI_Test
#pragma weak MPI_Testall = PMPI_Testall
#pragma weak MPI_Testany = PMPI_Testany
#pragma weak MPI_Waitsome = PMPI_Waitsome
#pragma weak MPI_Testsome = PMPI_Testsome
#pragma weak MPI_Request_free = PMPI_Request_free
#pragma weak MPI_Request_get_status = PMPI_Request_get_status

/* Release a done request; raise its failure through its communicator's
 * error handler. */
static int pd_finish(const char *call, MPI_Request *request, MPI_Status *status)
{
    MPI_Comm comm = (*request)->state->comm;
    const char *started_by = (*request)->state->call;
    struct pd_fail fail;
    int rc = pd_request_finish(request, status, &fail);
    if (rc != MPI_SUCCESS)
        rc = pd_raise(comm, call, rc, "%s: %s", started_by, fail.msg);
    pd_comm_release_freed(false);   /* comm, if this was its last */
    return rc;
}

/* pd_finish in a call that completes several requests at once: there,
 * and only there, each status's MPI_ERROR says how its request ended
 * (MPI 3.2.5; single completions leave the field alone). */
static int pd_finish_of_many(const char *call, MPI_Request *request,
                             MPI_Status *status)
{
    int rc = pd_finish(call, request, status);
    if (status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = rc;
    return rc;
}

/* A caller polling with MPI_Test & co. spins; giving up the core lets
 * the progress threads that complete its requests run, which matters
 * whenever there are more threads than cores. */
static void pd_not_done_yet(void)
{
    sched_yield();
}

static int pd_check_request_array(const char *call, int count,
                                  MPI_Request requests[])
{
    if (count < 0)
        return pd_raise(NULL, call, MPI_ERR_COUNT, "count is negative (%d)", count);
    if (count > 0 && requests == NULL)
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "requests is NULL");
    for (int i = 0; i < count; i++)
        PD_CHECK(pd_check_request(NULL, call, requests[i]));
    return MPI_SUCCESS;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    static const char call[] = "MPI_Wait";
    PD_CHECK(pd_check_active(call));
    if (request == NULL)
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "request is NULL");
    PD_CHECK(pd_check_request(NULL, call, *request));
    if (pd_request_is_null(*request)) {
        pd_status_set_empty(status, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    pd_request_wait_done(*request);
    return pd_finish(call, request, status);
}

int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    static const char call[] = "MPI_Waitall";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_request_array(call, count, requests));
    int result = MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        MPI_Status *status = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                             : &statuses[i];
        if (pd_request_is_null(requests[i])) {
            pd_status_set_empty(status, MPI_SUCCESS);
            continue;
        }
        pd_request_wait_done(requests[i]);
        if (pd_finish_of_many(call, &requests[i], status) != MPI_SUCCESS)
            result = MPI_ERR_IN_STATUS;
    }
    return result;
}

int PMPI_Waitany(int count, MPI_Request requests[], int *index,
                 MPI_Status *status)
{
    static const char call[] = "MPI_Waitany";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_request_array(call, count, requests));
    if (index == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "index is NULL");
    int64_t start = pd_clock_ns();
    for (;;) {
        uint32_t bell = pd_request_poll();
        bool any_active = false;
        for (int i = 0; i < count; i++) {
            if (pd_request_is_inactive(requests[i]))
                continue;
            any_active = true;
            if (pd_request_is_done(requests[i])) {
                *index = i;
                return pd_finish(call, &requests[i], status);
            }
        }
        if (!any_active) {
            *index = MPI_UNDEFINED;
            pd_status_set_empty(status, MPI_SUCCESS);
            return MPI_SUCCESS;
        }
        pd_request_pause(bell, pd_clock_ns() - start);
    }
}

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    static const char call[] = "MPI_Test";
    PD_CHECK(pd_check_active(call));
    if (request == NULL || flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        request == NULL ? "request" : "flag");
    PD_CHECK(pd_check_request(NULL, call, *request));
    if (pd_request_is_null(*request)) {
        *flag = 1;
        pd_status_set_empty(status, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    *flag = pd_request_is_done(*request);
    if (!*flag) {
        pd_not_done_yet();
        return MPI_SUCCESS;
    }
    return pd_finish(call, request, status);
}

int PMPI_Testall(int count, MPI_Request requests[], int *flag,
                 MPI_Status statuses[])
{
    static const char call[] = "MPI_Testall";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_request_array(call, count, requests));
    if (flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "flag is NULL");
    /* All or nothing: complete none unless every one is done. */
    for (int i = 0; i < count; i++) {
        if (!pd_request_is_null(requests[i]) && !pd_request_is_done(requests[i])) {
            *flag = 0;
            pd_not_done_yet();
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return PMPI_Waitall(count, requests, statuses);
}

int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                 MPI_Status *status)
{
    static const char call[] = "MPI_Testany";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_request_array(call, count, requests));
    if (index == NULL || flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        index == NULL ? "index" : "flag");
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        if (pd_request_is_inactive(requests[i]))
            continue;
        any_active = true;
        if (pd_request_is_done(requests[i])) {
            *flag = 1;
            *index = i;
            return pd_finish(call, &requests[i], status);
        }
    }
    *flag = !any_active;
    *index = MPI_UNDEFINED;
    if (!any_active)
        pd_status_set_empty(status, MPI_SUCCESS);
    else
        pd_not_done_yet();
    return MPI_SUCCESS;
}

/* Complete every request that is done now; *outcount = MPI_UNDEFINED if
 * none is active. */
static int pd_complete_done(const char *call, int incount,
                            MPI_Request requests[], int *outcount,
                            int indices[], MPI_Status statuses[],
                            bool *any_active)
{
    int result = MPI_SUCCESS;
    *outcount = 0;
    *any_active = false;
    for (int i = 0; i < incount; i++) {
        if (pd_request_is_inactive(requests[i]))
            continue;
        *any_active = true;
        if (!pd_request_is_done(requests[i]))
            continue;
        MPI_Status *status = statuses == MPI_STATUSES_IGNORE
                                 ? MPI_STATUS_IGNORE
                                 : &statuses[*outcount];
        indices[*outcount] = i;
        (*outcount)++;
        if (pd_finish_of_many(call, &requests[i], status) != MPI_SUCCESS)
            result = MPI_ERR_IN_STATUS;
    }
    if (!*any_active)
        *outcount = MPI_UNDEFINED;
    return result;
}

static int pd_check_some(const char *call, int incount, MPI_Request requests[],
                         int *outcount, int indices[])
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_request_array(call, incount, requests));
    if (outcount == NULL || (incount > 0 && indices == NULL))
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        outcount == NULL ? "outcount" : "array_of_indices");
    return MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount,
                  int indices[], MPI_Status statuses[])
{
    static const char call[] = "MPI_Waitsome";
    PD_CHECK(pd_check_some(call, incount, requests, outcount, indices));
    int64_t start = pd_clock_ns();
    for (;;) {
        uint32_t bell = pd_request_poll();
        bool any_active;
        int rc = pd_complete_done(call, incount, requests, outcount, indices,
                                  statuses, &any_active);
        if (*outcount != 0)
            return rc;
        pd_request_pause(bell, pd_clock_ns() - start);
    }
}

int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount,
                  int indices[], MPI_Status statuses[])
{
    static const char call[] = "MPI_Testsome";
    PD_CHECK(pd_check_some(call, incount, requests, outcount, indices));
    bool any_active;
    int rc = pd_complete_done(call, incount, requests, outcount, indices,
                              statuses, &any_active);
    if (*outcount == 0)
        pd_not_done_yet();
    return rc;
}

int PMPI_Request_free(MPI_Request *request)
{
    static const char call[] = "MPI_Request_free";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_live_request(call, request));
    pd_request_release(request);
    pd_comm_release_freed(false);
    return MPI_SUCCESS;
}

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    static const char call[] = "MPI_Request_get_status";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_request(NULL, call, request));
    if (flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "flag is NULL");
    if (pd_request_is_null(request)) {
        *flag = 1;
        pd_status_set_empty(status, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    *flag = pd_request_is_done(request);
    struct pd_request_state *st = request->state;
    if (*flag && st->greq_query != NULL && status != MPI_STATUS_IGNORE) {
        /* A generalized request's status is its query callback's. */
        pd_status_set_empty(status, MPI_SUCCESS);
        int rc = st->greq_query(st->greq_extra, status);
        if (rc != MPI_SUCCESS)
            return pd_raise(NULL, call, rc, "the query callback of the "
                            "generalized request returned %d", rc);
    } else if (*flag) {
        pd_request_status(request, status);
    } else {
        pd_not_done_yet();
    }
    return MPI_SUCCESS;
}
