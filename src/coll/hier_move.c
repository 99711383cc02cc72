/* Data movement by host: broadcast, allgather(v), the block exchanges
 * (one host: alltoallv, gatherv, scatterv) and the barrier. */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "coll/hier_internal.h"
#include "core/algo.h"
#include "core/stats.h"

int pd_hier_bcast(struct ompi_communicator_t *comm, struct pd_hier *h,
                  uint32_t tag, void *buffer, const struct pd_shm_mover *mover,
                  size_t bytes, int root, unsigned char signature,
                  struct pd_fail *fail)
{
    /* Leaders move whole buffers between hosts. */
    if (pd_hier_refuses_mover(h, mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    int root_host = h->host_of[root];
    pd_stats_way(PD_WAY_SHM);
    pd_hier_serve(h, PD_COLL_BCAST, root, bytes, NULL, signature);
    int rc = MPI_SUCCESS;
    /* A root that leads its host sends to the other hosts first and
     * spreads the data on its own host while they spread theirs: one
     * local broadcast on the way instead of two (2 hosts of one core
     * each, 2 ranks on each, 1-16 MiB: 1.19-1.31x Open MPI's time when
     * the root's host spread it first, 0.72-0.92x sending first). */
    bool root_leads = h->local_of[root] == 0;
    if (h->host == root_host && (!root_leads || h->num_hosts == 1))
        rc = pd_hier_local_bcast(comm, h, buffer, mover, bytes,
                                 h->local_of[root], true, "broadcast", fail);
    if (h->num_hosts == 1)
        return rc;
    if (rc == MPI_SUCCESS && pd_hier_leads(h)) {
        struct pd_coll_args args = {
            .recvbuf = buffer, .count = bytes, .elem_size = 1,
            .root = root_host, .tag = tag,
            .algorithm = PD_ALGO_PIPELINED,
        };
        rc = pd_hier_net(comm, h, PD_COLL_BCAST, &args, "broadcast", fail);
    }
    if (rc == MPI_SUCCESS && (h->host != root_host || root_leads))
        rc = pd_hier_local_bcast(comm, h, buffer, NULL, bytes, 0, true,
                                 "broadcast", fail);
    return rc;
}

/* Offsets and sizes in bytes of the blocks of layout, for ranks
 * [first, first + n) of list (NULL: every rank in order). */
static void pd_blocks(const struct pd_layout *l, const int *list, int n,
                      size_t *offs, size_t *bytes)
{
    for (int i = 0; i < n; i++)
        pd_layout_block(l, list != NULL ? list[i] : i, &offs[i], &bytes[i]);
}

/* Blocks of up to this many ranks are laid out on the stack. */
#define PD_STACK_RANKS 64

static int pd_allgatherv_one_host(struct ompi_communicator_t *comm,
                                  struct pd_hier *h, const void *sendbuf,
                                  void *recvbuf,
                                  const struct pd_shm_mover *mover,
                                  const size_t *offs, const size_t *bytes,
                                  struct pd_fail *fail)
{
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_allgatherv(h->shm, sendbuf, recvbuf, mover, offs, bytes,
                               &e);
    return rc == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_hier_shm_failed(rc, comm, "allgather", &e, fail);
}

/*
 * Across hosts: each host packs its ranks' blocks (local-rank order) in
 * shared memory, the leaders allgather the packs (padded to the largest,
 * as the host backend's allgather moves equal sizes), the leaders spread
 * all packs on their hosts, and every rank unpacks into its layout.
 */
static int pd_allgatherv_hosts(struct ompi_communicator_t *comm,
                               struct pd_hier *h, uint32_t tag,
                               const void *sendbuf, void *recvbuf,
                               const struct pd_layout *recv,
                               struct pd_fail *fail)
{
    int n = comm->size, H = h->num_hosts;
    size_t *offs = pd_coll_alloc((3 * (size_t)n + (size_t)H) * sizeof(size_t),
                              fail);
    if (offs == NULL)
        return fail->errclass;
    size_t *bytes = offs + n, *pack_at = bytes + n, *host_bytes = pack_at + n;
    pd_blocks(recv, NULL, n, offs, bytes);
    memset(host_bytes, 0, (size_t)H * sizeof(size_t));
    for (int r = 0; r < n; r++) {       /* local-rank order = rank order */
        pack_at[r] = host_bytes[h->host_of[r]];
        host_bytes[h->host_of[r]] += bytes[r];
    }
    size_t most = 0;
    for (int i = 0; i < H; i++)
        most = host_bytes[i] > most ? host_bytes[i] : most;
    unsigned char *all = pd_coll_alloc((size_t)H * most, fail);
    int rc = all == NULL ? fail->errclass : MPI_SUCCESS;
    /* This host's pack, in place in its slot of all. */
    unsigned char *mine = all != NULL ? all + (size_t)h->host * most : NULL;
    if (rc == MPI_SUCCESS) {
        const unsigned char *own =
            sendbuf != NULL ? sendbuf : (unsigned char *)recvbuf + offs[comm->rank];
        memcpy(mine + pack_at[comm->rank], own, bytes[comm->rank]);
        if (h->shm != NULL) {
            size_t loffs[h->local_size], lbytes[h->local_size];
            for (int r = 0; r < n; r++) {
                if (h->host_of[r] == h->host) {
                    loffs[h->local_of[r]] = pack_at[r];
                    lbytes[h->local_of[r]] = bytes[r];
                }
            }
            struct pd_backend_error e;
            e.msg[0] = '\0';
            int s = pd_shm_allgatherv(h->shm, NULL, mine, NULL, loffs,
                                      lbytes, &e);
            if (s != PD_BACKEND_OK)
                rc = pd_hier_shm_failed(s, comm, "allgather", &e, fail);
        }
    }
    if (rc == MPI_SUCCESS && pd_hier_leads(h) && most > 0) {
        struct pd_coll_args args = {
            .recvbuf = all, .count = most, .elem_size = 1,
            .root = -1, .tag = tag,
            .algorithm = PD_ALGO_PIPELINED,
        };
        /* In place: the host backend takes this host's part from its
         * slot of all. */
        rc = pd_hier_net(comm, h, PD_COLL_ALLGATHER, &args, "allgather", fail);
    }
    if (rc == MPI_SUCCESS)
        rc = pd_hier_local_bcast(comm, h, all, NULL, (size_t)H * most, 0,
                                 true, "allgather", fail);
    if (rc == MPI_SUCCESS) {
        for (int r = 0; r < n; r++)
            memcpy((unsigned char *)recvbuf + offs[r],
                   all + (size_t)h->host_of[r] * most + pack_at[r], bytes[r]);
    }
    free(all);
    free(offs);
    return rc;
}

int pd_hier_allgatherv(struct ompi_communicator_t *comm, struct pd_hier *h,
                       uint32_t tag, const void *sendbuf, void *recvbuf,
                       const struct pd_shm_mover *mover,
                       const struct pd_layout *recv, unsigned char signature,
                       struct pd_fail *fail)
{
    if (pd_hier_refuses_mover(h, mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    pd_stats_way(PD_WAY_SHM);
    size_t stack[2 * PD_STACK_RANKS];
    size_t *offs = comm->size <= PD_STACK_RANKS
                       ? stack
                       : pd_coll_alloc(2 * (size_t)comm->size * sizeof(size_t),
                                    fail);
    if (offs == NULL)
        return fail->errclass;
    size_t *bytes = offs + comm->size, total = 0;
    pd_blocks(recv, NULL, comm->size, offs, bytes);
    for (int r = 0; r < comm->size; r++)
        total += bytes[r];
    pd_hier_serve(h, PD_COLL_ALLGATHER, -1, total, NULL, signature);
    int rc = h->num_hosts == 1
                 ? pd_allgatherv_one_host(comm, h, sendbuf, recvbuf, mover,
                                          offs, bytes, fail)
                 : pd_allgatherv_hosts(comm, h, tag, sendbuf, recvbuf, recv,
                                       fail);
    if (offs != stack)
        free(offs);
    return rc;
}

/* Blocks between the ranks of one host: rank r's block for rank d is
 * sbytes[d] bytes at in + soffs[d], its block from rank s goes to out +
 * roffs[s]. Offsets and lengths: 4 x comm->size entries at blocks, which
 * is freed here unless it is stack (pd_block_table). */
static int pd_shm_blocks(struct ompi_communicator_t *comm, struct pd_hier *h,
                         enum pd_coll_kind kind, int root,
                         unsigned char signature, const char *what,
                         const void *in, void *out,
                         const struct pd_shm_mover *mover, size_t *blocks,
                         const size_t *stack, struct pd_fail *fail)
{
    size_t n = (size_t)comm->size;
    /* Each rank knows only its own lengths: the call is checked by kind,
     * root and type signature. */
    pd_hier_serve(h, kind, root, 0, NULL, signature);
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_alltoallv(h->shm, in, blocks, blocks + n, out,
                              blocks + 2 * n, blocks + 3 * n, mover, &e);
    if (blocks != stack)
        free(blocks);
    if (rc == PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    pd_stats_way(PD_WAY_SHM);
    return rc == PD_BACKEND_OK ? MPI_SUCCESS
                               : pd_hier_shm_failed(rc, comm, what, &e, fail);
}

/* 4 x comm->size zeroed entries, on the stack when few. */
static size_t *pd_block_table(struct ompi_communicator_t *comm, size_t *stack,
                              struct pd_fail *fail)
{
    size_t n = 4 * (size_t)comm->size;
    size_t *t = comm->size <= PD_STACK_RANKS
                    ? stack : pd_coll_alloc(n * sizeof(size_t), fail);
    if (t != NULL)
        memset(t, 0, n * sizeof(size_t));
    return t;
}

int pd_hier_alltoallv(struct ompi_communicator_t *comm, struct pd_hier *h,
                      const void *sendbuf, const struct pd_layout *send,
                      void *recvbuf, const struct pd_layout *recv,
                      const struct pd_shm_mover *mover,
                      unsigned char signature, struct pd_fail *fail)
{
    if (pd_hier_refuses_mover(h, mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    size_t stack[4 * PD_STACK_RANKS], n = (size_t)comm->size;
    size_t *t = pd_block_table(comm, stack, fail);
    if (t == NULL)
        return fail->errclass;
    /* In place: what goes out is laid out as what comes in. */
    pd_blocks(sendbuf != NULL ? send : recv, NULL, comm->size, t, t + n);
    pd_blocks(recv, NULL, comm->size, t + 2 * n, t + 3 * n);
    return pd_shm_blocks(comm, h, PD_COLL_ALLTOALLV, -1, signature, "alltoall",
                         sendbuf != NULL ? sendbuf : recvbuf, recvbuf, mover,
                         t, stack, fail);
}

int pd_hier_gatherv(struct ompi_communicator_t *comm, struct pd_hier *h,
                    const void *sendbuf, size_t send_bytes, void *recvbuf,
                    const struct pd_layout *recv, int root,
                    const struct pd_shm_mover *mover,
                    unsigned char signature, struct pd_fail *fail)
{
    if (pd_hier_refuses_mover(h, mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    size_t stack[4 * PD_STACK_RANKS], n = (size_t)comm->size;
    size_t *t = pd_block_table(comm, stack, fail);
    if (t == NULL)
        return fail->errclass;
    /* At the root, no sendbuf means its block is in place already. */
    t[n + (size_t)root] = sendbuf != NULL ? send_bytes : 0;
    if (comm->rank == root) {
        pd_blocks(recv, NULL, comm->size, t + 2 * n, t + 3 * n);
        if (sendbuf == NULL)
            t[3 * n + (size_t)root] = 0;
    }
    return pd_shm_blocks(comm, h, PD_COLL_GATHERV, root, signature, "gather",
                         sendbuf, recvbuf, mover, t, stack, fail);
}

int pd_hier_scatterv(struct ompi_communicator_t *comm, struct pd_hier *h,
                     const void *sendbuf, const struct pd_layout *send,
                     void *recvbuf, size_t recv_bytes, int root,
                     const struct pd_shm_mover *mover,
                     unsigned char signature, struct pd_fail *fail)
{
    if (pd_hier_refuses_mover(h, mover))
        return PD_BACKEND_ERR_UNSUPPORTED;
    size_t stack[4 * PD_STACK_RANKS], n = (size_t)comm->size;
    size_t *t = pd_block_table(comm, stack, fail);
    if (t == NULL)
        return fail->errclass;
    if (comm->rank == root) {
        pd_blocks(send, NULL, comm->size, t, t + n);
        /* At the root, no recvbuf means its block stays where it is. */
        if (recvbuf == NULL)
            t[n + (size_t)root] = 0;
    }
    t[3 * n + (size_t)root] = recvbuf != NULL ? recv_bytes : 0;
    return pd_shm_blocks(comm, h, PD_COLL_SCATTERV, root, signature, "scatter",
                         sendbuf, recvbuf, mover, t, stack, fail);
}

int pd_hier_barrier(struct ompi_communicator_t *comm, struct pd_hier *h,
                    uint32_t tag, struct pd_fail *fail)
{
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc;
    pd_stats_way(PD_WAY_SHM);
    pd_hier_serve(h, PD_COLL_BARRIER, -1, 0, NULL, 0);
    if (h->shm != NULL && (rc = pd_shm_barrier(h->shm, &e)) != PD_BACKEND_OK)
        return pd_hier_shm_failed(rc, comm, "barrier", &e, fail);
    if (h->num_hosts == 1)
        return MPI_SUCCESS;
    if (pd_hier_leads(h)) {
        struct pd_coll_args args = { .root = -1, .tag = tag };
        if ((rc = pd_hier_net(comm, h, PD_COLL_BARRIER, &args, "barrier", fail)) !=
            MPI_SUCCESS)
            return rc;
    }
    if (h->shm != NULL && (rc = pd_shm_barrier(h->shm, &e)) != PD_BACKEND_OK)
        return pd_hier_shm_failed(rc, comm, "barrier", &e, fail);
    return MPI_SUCCESS;
}
