/*
 * The one way an entry point runs a collective, blocking or not: the call
 * is numbered and cross-checked (PDMPI_CHECK), takes its tags in call
 * order, and is timed (PDMPI_STATS) and run now, or queued on the
 * communicator's progress thread; a failure is raised through the
 * communicator's error handler.
 */
#include "api/api.h"
#include "service/progress.h"

int pd_api_coll(const char *call, struct pd_coll *c, const struct pd_agree *a,
                MPI_Request *request)
{
    MPI_Comm comm = c->comm;
    struct pd_fail fail;
    struct pd_call check = { call, a->type, c->op, c->root, a->bytes };
    if (pd_calls_enter(comm, &check, &fail) != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    if (request != NULL) {
        struct ompi_request_t *req = pd_request_new(comm, call);
        if (req == NULL)
            return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
        c->tag = pd_comm_reserve_tags(comm);
        req->state->coll = *c;
        req->state->collective = true;
        if (pd_progress_submit(req, &fail) != MPI_SUCCESS) {
            pd_request_release(&req);
            return pd_raise_fail(comm, call, &fail);
        }
        *request = req;
        return MPI_SUCCESS;
    }
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, c->kind, a->stat_bytes);
    c->tag = pd_comm_reserve_tags(comm);
    int rc = pd_progress_run_now(c, &fail);
    pd_stats_end(&stat);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : pd_raise_fail(comm, call, &fail);
}
