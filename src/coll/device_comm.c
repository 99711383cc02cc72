/* comm's device-CCL context, created by its first device call. */
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "coll/devcoll.h"
#include "coll/hier.h"
#include "core/runtime.h"

/*
 * Two ranks of one host on one device would make the library fail (NCCL:
 * "Duplicate GPU detected") or hang; find it first and name the ranks.
 */
static int pd_check_distinct_devices(struct ompi_communicator_t *comm,
                                     int device, struct pd_fail *fail)
{
    int mine[2] = { pd_rt.world.node_of[pd_rt.world.rank], device };
    int *all = malloc((size_t)comm->size * sizeof(mine));
    if (all == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    struct pd_coll c = { .kind = PD_COLL_ALLGATHER, .comm = comm,
                         .tag = pd_comm_reserve_tags(comm), .sendbuf = mine,
                         .recvbuf = all, .count = sizeof(mine), .root = -1 };
    int rc = pd_coll_run(&c, fail);
    for (int i = 0; rc == MPI_SUCCESS && i < comm->size; i++) {
        for (int j = i + 1; j < comm->size; j++) {
            if (all[2 * i] == all[2 * j] && all[2 * i + 1] == all[2 * j + 1]) {
                struct pd_dccl *d = pd_route_device();
                pd_fail_set(fail, MPI_ERR_OTHER,
                            "ranks %d and %d of %s are on the same host and "
                            "both on %s device %d: %s cannot run two ranks "
                            "on one device (set one device per rank, e.g. "
                            "pdmpirun --devices)",
                            i, j, comm->name[0] ? comm->name : comm->state->id,
                            d->b->memory, all[2 * i + 1], d->b->name);
                rc = fail->errclass;
                break;
            }
        }
    }
    free(all);
    return rc;
}

/* Asked while a device call waits for its stream: a rank of comm on this
 * host whose process has ended will never arrive, nor will one that is in
 * another call, and the device library would wait for either forever.
 * Another call is looked for first: a rank that found the mismatch
 * itself may already have ended, and the mismatch is the cause to name.
 * (Across hosts the library's own connections report a peer that is
 * gone; the failure names the ranks.) */
static int pd_device_watch(void *ctx, char *why, size_t len)
{
    struct ompi_communicator_t *comm = ctx;
    struct pd_comm_state *st = comm->state;
    int status = pd_hier_compare_call(pd_hier_if_known(comm), st->dev_call_n,
                                      &st->dev_call, why, len);
    if (status == PD_BACKEND_OK && pd_runtime_comm_rank_gone(comm) >= 0) {
        /* The caller names every rank of this host that is gone. */
        snprintf(why, len, "a rank it waits for has ended");
        status = PD_BACKEND_ERR_IO;
    }
    return status;
}

int pd_comm_device(struct ompi_communicator_t *comm,
                   struct pd_dccl_comm **out, struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    struct pd_dccl *d = pd_route_device();
    pthread_mutex_lock(&st->lock);
    *out = st->dev_comm;
    pthread_mutex_unlock(&st->lock);
    if (*out != NULL)
        return MPI_SUCCESS;
    int rc = pd_check_distinct_devices(comm, d->device, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    char err[512];
    struct pd_store_client *store = NULL;
    if (comm->size > 1 &&
        pd_store_reconnect(pd_rt.world.store_addr, pd_rt.world.job_key,
                           pd_rt.world.rank, pd_rt.config.timeout_ms, &store,
                           err, sizeof(err)) != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER, "cannot reach the rendezvous store "
                    "to connect %s to %s: %s", st->id, d->b->name, err);
        return fail->errclass;
    }
    struct pd_dccl_comm_init init = {
        .rank = comm->rank,
        .size = comm->size,
        .store = store,
        .store_prefix = st->id,
        .timeout_ms = pd_rt.config.timeout_ms,
        .watch = pd_device_watch,
        .watch_ctx = comm,
    };
    struct pd_dccl_comm *dc = NULL;
    rc = pd_dccl_comm_create(d, &init, &dc, err, sizeof(err));
    if (store != NULL)
        pd_store_close(store);
    if (rc != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER,
                    "cannot connect %s (rank %d of %d) with %s on %s device "
                    "%d: %s", comm->name[0] ? comm->name : st->id, comm->rank,
                    comm->size, d->b->name, d->b->memory, d->device, err);
        return fail->errclass;
    }
    pd_log(PD_LOG_TRACE, "connected communicator %s (%d ranks) via %s",
           st->id, comm->size, d->b->name);
    pthread_mutex_lock(&st->lock);
    st->dev_comm = dc;
    pthread_mutex_unlock(&st->lock);
    *out = dc;
    return MPI_SUCCESS;
}

