/* Reductions by host: reduce inside each host in shared memory, combine
 * the hosts' partial results among the leaders, spread the result. */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "coll/hier_internal.h"
#include "core/algo.h"
#include "core/stats.h"

int pd_hier_allreduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                      uint32_t tag, const void *sendbuf, void *recvbuf,
                      const struct pd_hier_reduction *red,
                      struct pd_fail *fail)
{
    if (pd_hier_refuses_mover(h, red->mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    const void *in = sendbuf != NULL ? sendbuf : recvbuf;
    size_t bytes = red->count * red->elem_size;
    pd_stats_way(PD_WAY_SHM);
    pd_hier_serve(h, PD_COLL_ALLREDUCE, -1, bytes, red, 0);
    if (h->num_hosts == 1) {
        struct pd_backend_error e;
        e.msg[0] = '\0';
        int rc = pd_shm_reduce(h->shm, in, recvbuf, red->mover, red->count,
                               red->elem_size, red->fn, red->ctx, 0,
                               red->count, &e);
        return rc == PD_BACKEND_OK
                   ? MPI_SUCCESS
                   : pd_hier_shm_failed(rc, comm, "allreduce", &e, fail);
    }
    int rc = pd_hier_local_reduce(comm, h, in, recvbuf, red, 0, "allreduce", fail);
    if (rc == MPI_SUCCESS && pd_hier_leads(h)) {
        struct pd_coll_args args = {
            .recvbuf = recvbuf, .count = red->count,
            .elem_size = red->elem_size, .reduce = red->fn,
            .reduce_ctx = red->ctx, .root = -1, .tag = tag,
            .algorithm = pd_algo_allreduce(h->num_hosts, bytes),
        };
        rc = pd_hier_net(comm, h, PD_COLL_ALLREDUCE, &args, "allreduce", fail);
    }
    if (rc == MPI_SUCCESS)
        rc = pd_hier_local_bcast(comm, h, recvbuf, NULL, bytes, 0, true,
                                 "allreduce", fail);
    return rc;
}

int pd_hier_reduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                   uint32_t tag, const void *sendbuf, void *recvbuf,
                   const struct pd_hier_reduction *red, int root,
                   struct pd_fail *fail)
{
    if (pd_hier_refuses_mover(h, red->mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    const void *in = sendbuf != NULL ? sendbuf : recvbuf;
    size_t bytes = red->count * red->elem_size;
    int root_host = h->host_of[root];
    int root_local = h->local_of[root];
    pd_stats_way(PD_WAY_SHM);
    pd_hier_serve(h, PD_COLL_REDUCE, root, bytes, red, 0);
    if (h->num_hosts == 1)
        return pd_hier_local_reduce(comm, h, in, recvbuf, red, root_local,
                               "reduce", fail);
    /* Every host reduces to its leader; the leaders reduce to the root's
     * host's leader, which hands the result to the root if it is not the
     * root itself. */
    bool leader_is_root = comm->rank == root && h->local_rank == 0;
    void *partial = recvbuf;
    if (h->local_rank == 0 && !leader_is_root &&
        (partial = pd_coll_alloc(bytes, fail)) == NULL)
        return fail->errclass;
    int rc = pd_hier_local_reduce(comm, h, in, partial, red, 0, "reduce", fail);
    if (rc == MPI_SUCCESS && pd_hier_leads(h)) {
        /* The input named even in place: off the root, the host backend
         * reduces into scratch of its own. */
        struct pd_coll_args args = {
            .sendbuf = partial, .recvbuf = partial, .count = red->count,
            .elem_size = red->elem_size, .reduce = red->fn,
            .reduce_ctx = red->ctx, .root = root_host, .tag = tag,
        };
        rc = pd_hier_net(comm, h, PD_COLL_REDUCE, &args, "reduce", fail);
    }
    if (rc == MPI_SUCCESS && h->host == root_host && root_local != 0) {
        void *buf = h->local_rank == 0 ? partial : recvbuf;
        rc = pd_hier_local_bcast(comm, h, buf, NULL, bytes, 0,
                                 comm->rank == root, "reduce", fail);
    }
    if (partial != recvbuf)
        free(partial);
    return rc;
}

int pd_hier_reduce_scatter(struct ompi_communicator_t *comm,
                           struct pd_hier *h, const void *sendbuf,
                           void *recvbuf, size_t from, size_t to,
                           const struct pd_hier_reduction *red,
                           struct pd_fail *fail)
{
    if (pd_hier_refuses_mover(h, red->mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    pd_stats_way(PD_WAY_SHM);
    pd_hier_serve(h, PD_COLL_REDUCE_SCATTER, -1,
                  red->count * red->elem_size, red, 0);
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_reduce(h->shm, sendbuf != NULL ? sendbuf : recvbuf,
                           recvbuf, red->mover, red->count, red->elem_size, red->fn,
                           red->ctx, from, to, &e);
    return rc == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_hier_shm_failed(rc, comm, "reduce_scatter", &e, fail);
}

