/*
 * The one way an entry point runs a collective, blocking or not: the call
 * is numbered and cross-checked (PDMPI_CHECK), takes its tags in call
 * order, and is timed (PDMPI_STATS) and run now, or queued on the
 * communicator's progress thread; a failure is raised through the
 * communicator's error handler.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "service/progress.h"

/* Point *array at a copy of its comm->size ints in *next. */
static void pd_keep_array(const int **array, int **next, int size)
{
    if (*array == NULL)
        return;
    memcpy(*next, *array, (size_t)size * sizeof(int));
    *array = *next;
    *next += size;
}

/* A queued v-collective reads its count and displacement arrays when it
 * runs. MPI has the caller keep them until then, but bindings let go of
 * theirs once the call returns (mpi4py does): the request keeps copies of
 * the ones that matter on this rank. */
static int pd_keep_arrays(struct pd_request_state *st)
{
    struct pd_coll *c = &st->coll;
    int size = c->comm->size;
    bool root = c->comm->rank == c->root;
    const int **kept[5];
    int n = 0;
    switch (c->kind) {
    case PD_COLL_GATHERV:
        if (root) {
            kept[n++] = &c->recv.counts;
            kept[n++] = &c->recv.displs;
        }
        break;
    case PD_COLL_SCATTERV:
        if (root) {
            kept[n++] = &c->send.counts;
            kept[n++] = &c->send.displs;
        }
        break;
    case PD_COLL_ALLGATHERV:
        kept[n++] = &c->recv.counts;
        kept[n++] = &c->recv.displs;
        break;
    case PD_COLL_ALLTOALLV:
        kept[n++] = &c->send.counts;
        kept[n++] = &c->send.displs;
        kept[n++] = &c->recv.counts;
        kept[n++] = &c->recv.displs;
        break;
    case PD_COLL_REDUCE_SCATTER:
        kept[n++] = &c->counts;
        break;
    default:
        break;
    }
    if (n == 0)
        return 0;
    st->coll_arrays = malloc((size_t)n * (size_t)size * sizeof(int));
    if (st->coll_arrays == NULL)
        return -1;
    int *next = st->coll_arrays;
    for (int i = 0; i < n; i++)
        pd_keep_array(kept[i], &next, size);
    return 0;
}

int pd_api_coll(const char *call, struct pd_coll *c, const struct pd_agree *a,
                MPI_Request *request)
{
    MPI_Comm comm = c->comm;
    struct pd_fail fail;
    struct pd_type_stage *stage;
    /* The blocking collectives on intercommunicators take their own path
     * before here (api/intercoll.c); the rest are intracomm calls. */
    PD_CHECK(pd_check_intra(comm, call, "comm"));
    PD_CHECK(pd_stage_coll(call, c, a, &stage));
    struct pd_call check = { call, a->type, c->op, c->root, a->bytes };
    if (pd_calls_enter(comm, &check, &fail) != MPI_SUCCESS) {
        pd_stage_free(stage);
        return pd_raise_fail(comm, call, &fail);
    }
    if (request != NULL) {
        struct ompi_request_t *req = pd_request_new(comm, call);
        if (req == NULL) {
            pd_stage_free(stage);
            return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
        }
        req->state->type_stages = stage;
        req->state->coll = *c;
        req->state->collective = true;
        /* The caller may free the type and the op before the call runs
         * (MPI allows it): the request holds them. */
        if (c->type != NULL)
            pd_type_retain(c->type);
        pd_op_retain(c->op);
        req->state->coll_refs = true;
        if (pd_keep_arrays(req->state) != 0) {
            pd_request_complete(req->state);
            pd_request_release(&req);
            return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
        }
        req->state->coll.tag = pd_comm_reserve_tags(comm);
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
    if (rc == MPI_SUCCESS && stage != NULL &&
        pd_stage_unpack(stage, (size_t)-1) != 0) {
        pd_fail_set(&fail, MPI_ERR_OTHER, "the received data did not go "
                    "back to device memory (a device copy failed)");
        rc = fail.errclass;
    }
    pd_stage_free(stage);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : pd_raise_fail(comm, call, &fail);
}
