/*
 * The host path by host (see hier.h): intra-host steps over shared
 * memory, inter-host steps among the hosts' leaders over the host backend.
 *
 * Hosts are numbered by their lowest rank in the communicator, and that
 * rank leads its host; it is local rank 0 of its host's segment.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/shm/shm.h"
#include "core/algo.h"
#include "coll/hier.h"
#include "base/log.h"
#include "core/runtime.h"
#include "core/stats.h"

struct pd_hier {
    int num_hosts;
    int host;                   /* this rank's host */
    int local_rank, local_size;
    int *host_of;               /* comm rank -> host */
    int *local_of;              /* comm rank -> local rank on its host */
    int *leader;                /* host -> comm rank of its leader */
    int *host_size;             /* host -> ranks on it */
    struct pd_shm_comm *shm;    /* NULL when alone on the host */
    const struct pd_backend_ops *net_ops;   /* leaders, several hosts */
    struct pd_backend_comm *net;
};

void pd_hier_free(struct pd_hier *h)
{
    if (h == NULL)
        return;
    pd_shm_comm_destroy(h->shm);
    if (h->net != NULL)
        h->net_ops->comm_destroy(h->net);
    free(h->host_of);
    free(h->local_of);
    free(h->leader);
    free(h->host_size);
    free(h);
}

bool pd_hier_single_host(const struct pd_hier *h)
{
    return h->num_hosts == 1;
}

static const char *pd_label(struct ompi_communicator_t *comm)
{
    return comm->name[0] ? comm->name : comm->state->id;
}

/* Number the hosts of comm's ranks; *out = NULL when no two ranks share
 * one. */
static int pd_hier_layout(struct ompi_communicator_t *comm,
                          struct pd_hier **out, struct pd_fail *fail)
{
    *out = NULL;
    int n = comm->size;
    struct pd_hier *h = calloc(1, sizeof(*h));
    int *node_host = malloc((size_t)pd_rt.world.num_nodes * sizeof(int));
    if (h == NULL || node_host == NULL ||
        (h->host_of = malloc((size_t)n * sizeof(int))) == NULL ||
        (h->local_of = malloc((size_t)n * sizeof(int))) == NULL ||
        (h->leader = malloc((size_t)n * sizeof(int))) == NULL ||
        (h->host_size = calloc((size_t)n, sizeof(int))) == NULL) {
        free(node_host);
        pd_hier_free(h);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    for (int i = 0; i < pd_rt.world.num_nodes; i++)
        node_host[i] = -1;
    for (int r = 0; r < n; r++) {
        int node = pd_rt.world.node_of[pd_comm_world_rank(comm, r)];
        if (node_host[node] < 0) {
            node_host[node] = h->num_hosts;
            h->leader[h->num_hosts++] = r;
        }
        int host = node_host[node];
        h->host_of[r] = host;
        h->local_of[r] = h->host_size[host]++;
    }
    free(node_host);
    h->host = h->host_of[comm->rank];
    h->local_rank = h->local_of[comm->rank];
    h->local_size = h->host_size[h->host];
    if (h->num_hosts == n)          /* one rank per host: nothing to share */
        pd_hier_free(h);
    else
        *out = h;
    return MPI_SUCCESS;
}

/* Local rank 0 made the segment with a smaller chunk than configured
 * because /dev/shm lacked room: say so once per process, since large
 * messages then take more, smaller steps. */
static void pd_warn_small_chunk(struct ompi_communicator_t *comm,
                                const struct pd_hier *h)
{
    static atomic_bool warned;
    size_t chunk = pd_shm_chunk(h->shm);
    if (chunk >= pd_rt.config.shm_chunk || atomic_exchange(&warned, true))
        return;
    pd_log(PD_LOG_WARN, "%s, host %d: /dev/shm has no room for shared "
           "memory with %zu-byte chunks; using %zu-byte chunks (slower for "
           "large messages; give /dev/shm more room, e.g. a container's "
           "--shm-size; said once)", pd_label(comm), h->host,
           pd_rt.config.shm_chunk, chunk);
}

static int pd_hier_connect(struct ompi_communicator_t *comm,
                           struct pd_hier *h, struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    char prefix[PD_COMM_ID_LEN + 32];
    if (h->local_size > 1) {
        int *ranks = malloc(2 * (size_t)h->local_size * sizeof(int));
        if (ranks == NULL) {
            pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
            return fail->errclass;
        }
        int *pids = ranks + h->local_size;
        for (int r = 0, i = 0; r < comm->size; r++) {
            if (h->host_of[r] == h->host) {
                pids[i] = pd_rt.world.pid_of[pd_comm_world_rank(comm, r)];
                ranks[i++] = r;
            }
        }
        snprintf(prefix, sizeof(prefix), "%s/host%d", st->id, h->host);
        struct pd_store_client *store;
        if (pd_comm_store_client(&store, prefix, fail) != MPI_SUCCESS) {
            free(ranks);
            return fail->errclass;
        }
        struct pd_shm_init init = {
            .rank = h->local_rank, .size = h->local_size,
            .comm_ranks = ranks, .pids = pids, .store = store, .store_prefix = prefix,
            .job_key = pd_rt.world.job_key,
            .timeout_ms = pd_rt.config.timeout_ms,
            .spin = pd_rt.config.shm_spin, .chunk = pd_rt.config.shm_chunk,
            .chunk_fixed = pd_rt.config.shm_chunk_set != 0,
            .stream = pd_rt.config.shm_stream,
        };
        struct pd_backend_error berr;
        berr.msg[0] = '\0';
        int rc = pd_shm_comm_create(&init, &h->shm, &berr);
        pd_store_close(store);
        free(ranks);
        if (rc != PD_BACKEND_OK)
            return pd_coll_backend_failed(rc, comm, "shared memory set-up",
                                          berr.msg, fail);
        if (h->local_rank == 0)
            pd_warn_small_chunk(comm, h);
        if (h->local_rank == 0 && pd_log_enabled(PD_LOG_INFO)) {
            char what[224];
            pd_shm_describe(h->shm, what, sizeof(what));
            pd_log(PD_LOG_INFO, "%s, host %d: shared memory among %s",
                   pd_label(comm), h->host, what);
        }
    }
    if (h->num_hosts > 1 && h->local_rank == 0) {
        char label[PD_COMM_ID_LEN + MPI_MAX_OBJECT_NAME + 32];
        snprintf(prefix, sizeof(prefix), "%s/leaders", st->id);
        snprintf(label, sizeof(label), "the host leaders of %s",
                 pd_label(comm));
        return pd_comm_connect_host(label, h->host, h->num_hosts, prefix,
                                    &h->net_ops, &h->net, fail);
    }
    return MPI_SUCCESS;
}

int pd_hier_get(struct ompi_communicator_t *comm, struct pd_hier **out,
                struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    /* Fast path, every call after the first: decided, nothing queued.
     * (progress is only ever set by the thread that makes the calls.) */
    if (__atomic_load_n(&st->hier_known, __ATOMIC_ACQUIRE) &&
        __atomic_load_n(&st->progress, __ATOMIC_RELAXED) == NULL) {
        *out = st->hier;
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&st->lock);
    if (!st->hier_known) {
        struct pd_hier *h = NULL;
        if (pd_rt.config.shm && comm->size > 1 && pd_rt.world.node_of != NULL)
            rc = pd_hier_layout(comm, &h, fail);
        if (h != NULL && (rc = pd_hier_connect(comm, h, fail)) != MPI_SUCCESS) {
            pd_hier_free(h);
            h = NULL;
        }
        if (rc == MPI_SUCCESS) {
            st->hier = h;
            __atomic_store_n(&st->hier_known, true, __ATOMIC_RELEASE);
            if (h != NULL)
                pd_log(PD_LOG_TRACE, "%s: %d host(s), %d rank(s) on this one "
                       "in shared memory", st->id, h->num_hosts,
                       h->local_size);
        }
    }
    *out = st->hier;
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* ---- steps ---------------------------------------------------------- */

static int pd_shm_failed(int status, struct ompi_communicator_t *comm,
                         const char *what, const struct pd_backend_error *e,
                         struct pd_fail *fail)
{
    return pd_coll_backend_failed(status, comm, what, e->msg, fail);
}

/* Intra-host reduction: local rank `to` keeps all of it at out. */
static int pd_local_reduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                           const void *in, void *out,
                           const struct pd_hier_reduction *red, int to,
                           const char *what, struct pd_fail *fail)
{
    if (h->shm == NULL) {
        if (out != in)
            memcpy(out, in, red->count * red->elem_size);
        return MPI_SUCCESS;
    }
    size_t want = h->local_rank == to ? red->count : 0;
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_reduce(h->shm, in, out, red->count, red->elem_size,
                           red->fn, red->ctx, 0, want, &e);
    return rc == PD_BACKEND_OK ? MPI_SUCCESS
                               : pd_shm_failed(rc, comm, what, &e, fail);
}

static int pd_local_bcast(struct ompi_communicator_t *comm, struct pd_hier *h,
                          void *buf, size_t bytes, int from, bool keep,
                          const char *what, struct pd_fail *fail)
{
    if (h->shm == NULL)
        return MPI_SUCCESS;
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_bcast(h->shm, buf, bytes, from, keep, &e);
    return rc == PD_BACKEND_OK ? MPI_SUCCESS
                               : pd_shm_failed(rc, comm, what, &e, fail);
}

enum pd_net_step { PD_NET_ALLREDUCE, PD_NET_REDUCE, PD_NET_BCAST,
                   PD_NET_ALLGATHER, PD_NET_BARRIER };

/* One step among the leaders (callers check that this rank leads). */
static int pd_net(struct ompi_communicator_t *comm, struct pd_hier *h,
                  enum pd_net_step step, struct pd_coll_args *args,
                  const char *what, struct pd_fail *fail)
{
    struct pd_backend_error e;
    e.msg[0] = '\0';
    const struct pd_backend_ops *ops = h->net_ops;
    int rc = PD_BACKEND_ERR_UNSUPPORTED;
    if (step == PD_NET_ALLREDUCE || step == PD_NET_BCAST ||
        step == PD_NET_ALLGATHER)
        pd_stats_algo(args->algorithm);
    switch (step) {
    case PD_NET_ALLREDUCE:
        if (ops->allreduce) rc = ops->allreduce(h->net, args, &e);
        break;
    case PD_NET_REDUCE:
        if (ops->reduce) rc = ops->reduce(h->net, args, &e);
        break;
    case PD_NET_BCAST:
        if (ops->bcast) rc = ops->bcast(h->net, args, &e);
        break;
    case PD_NET_ALLGATHER:
        if (ops->allgather) rc = ops->allgather(h->net, args, &e);
        break;
    case PD_NET_BARRIER:
        if (ops->barrier) rc = ops->barrier(h->net, args->tag, &e);
        break;
    }
    if (rc == PD_BACKEND_ERR_UNSUPPORTED && e.msg[0] == '\0')
        snprintf(e.msg, sizeof(e.msg), "the %s backend lacks this step",
                 ops->name);
    return rc == PD_BACKEND_OK ? MPI_SUCCESS
                               : pd_shm_failed(rc, comm, what, &e, fail);
}

static bool pd_leads(const struct pd_hier *h)
{
    return h->num_hosts > 1 && h->local_rank == 0;
}

/* ---- collectives ---------------------------------------------------- */

/* Name the call the host's steps serve, for the cross-check in shm. */
static void pd_serve(struct pd_hier *h, enum pd_coll_kind kind,
                     int root, size_t bytes)
{
    if (h->shm != NULL) {
        struct pd_shm_call call = { kind, root, bytes };
        pd_shm_set_call(h->shm, &call);
    }
}

int pd_hier_allreduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                      uint32_t tag, const void *sendbuf, void *recvbuf,
                      const struct pd_hier_reduction *red,
                      struct pd_fail *fail)
{
    const void *in = sendbuf != NULL ? sendbuf : recvbuf;
    size_t bytes = red->count * red->elem_size;
    pd_stats_way(PD_WAY_SHM);
    pd_serve(h, PD_COLL_ALLREDUCE, -1, bytes);
    if (h->num_hosts == 1) {
        struct pd_backend_error e;
        e.msg[0] = '\0';
        int rc = pd_shm_reduce(h->shm, in, recvbuf, red->count,
                               red->elem_size, red->fn, red->ctx, 0,
                               red->count, &e);
        return rc == PD_BACKEND_OK
                   ? MPI_SUCCESS
                   : pd_shm_failed(rc, comm, "allreduce", &e, fail);
    }
    int rc = pd_local_reduce(comm, h, in, recvbuf, red, 0, "allreduce", fail);
    if (rc == MPI_SUCCESS && pd_leads(h)) {
        struct pd_coll_args args = {
            .recvbuf = recvbuf, .count = red->count,
            .elem_size = red->elem_size, .reduce = red->fn,
            .reduce_ctx = red->ctx, .root = -1, .tag = tag,
            .algorithm = pd_algo_allreduce(h->num_hosts, bytes),
        };
        rc = pd_net(comm, h, PD_NET_ALLREDUCE, &args, "allreduce", fail);
    }
    if (rc == MPI_SUCCESS)
        rc = pd_local_bcast(comm, h, recvbuf, bytes, 0, true, "allreduce",
                            fail);
    return rc;
}

int pd_hier_reduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                   uint32_t tag, const void *sendbuf, void *recvbuf,
                   const struct pd_hier_reduction *red, int root,
                   struct pd_fail *fail)
{
    const void *in = sendbuf != NULL ? sendbuf : recvbuf;
    size_t bytes = red->count * red->elem_size;
    int root_host = h->host_of[root];
    int root_local = h->local_of[root];
    pd_stats_way(PD_WAY_SHM);
    pd_serve(h, PD_COLL_REDUCE, root, bytes);
    if (h->num_hosts == 1)
        return pd_local_reduce(comm, h, in, recvbuf, red, root_local,
                               "reduce", fail);
    /* Every host reduces to its leader; the leaders reduce to the root's
     * host's leader, which hands the result to the root if it is not the
     * root itself. */
    bool leader_is_root = comm->rank == root && h->local_rank == 0;
    void *partial = recvbuf;
    if (h->local_rank == 0 && !leader_is_root &&
        (partial = pd_coll_alloc(bytes, fail)) == NULL)
        return fail->errclass;
    int rc = pd_local_reduce(comm, h, in, partial, red, 0, "reduce", fail);
    if (rc == MPI_SUCCESS && pd_leads(h)) {
        /* The input named even in place: off the root, the host backend
         * reduces into scratch of its own. */
        struct pd_coll_args args = {
            .sendbuf = partial, .recvbuf = partial, .count = red->count,
            .elem_size = red->elem_size, .reduce = red->fn,
            .reduce_ctx = red->ctx, .root = root_host, .tag = tag,
        };
        rc = pd_net(comm, h, PD_NET_REDUCE, &args, "reduce", fail);
    }
    if (rc == MPI_SUCCESS && h->host == root_host && root_local != 0) {
        void *buf = h->local_rank == 0 ? partial : recvbuf;
        rc = pd_local_bcast(comm, h, buf, bytes, 0, comm->rank == root,
                            "reduce", fail);
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
    pd_stats_way(PD_WAY_SHM);
    pd_serve(h, PD_COLL_REDUCE_SCATTER, -1, red->count * red->elem_size);
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_reduce(h->shm, sendbuf != NULL ? sendbuf : recvbuf,
                           recvbuf, red->count, red->elem_size, red->fn,
                           red->ctx, from, to, &e);
    return rc == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_shm_failed(rc, comm, "reduce_scatter", &e, fail);
}

int pd_hier_bcast(struct ompi_communicator_t *comm, struct pd_hier *h,
                  uint32_t tag, void *buffer, size_t bytes, int root,
                  struct pd_fail *fail)
{
    int root_host = h->host_of[root];
    pd_stats_way(PD_WAY_SHM);
    pd_serve(h, PD_COLL_BCAST, root, bytes);
    int rc = MPI_SUCCESS;
    if (h->host == root_host)
        rc = pd_local_bcast(comm, h, buffer, bytes, h->local_of[root], true,
                            "broadcast", fail);
    if (h->num_hosts == 1)
        return rc;
    if (rc == MPI_SUCCESS && pd_leads(h)) {
        struct pd_coll_args args = {
            .recvbuf = buffer, .count = bytes, .elem_size = 1,
            .root = root_host, .tag = tag,
            .algorithm = PD_ALGO_BINOMIAL,
        };
        rc = pd_net(comm, h, PD_NET_BCAST, &args, "broadcast", fail);
    }
    if (rc == MPI_SUCCESS && h->host != root_host)
        rc = pd_local_bcast(comm, h, buffer, bytes, 0, true, "broadcast",
                            fail);
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
                                  void *recvbuf, const size_t *offs,
                                  const size_t *bytes, struct pd_fail *fail)
{
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_allgatherv(h->shm, sendbuf, recvbuf, offs, bytes, &e);
    return rc == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_shm_failed(rc, comm, "allgather", &e, fail);
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
            int s = pd_shm_allgatherv(h->shm, NULL, mine, loffs, lbytes, &e);
            if (s != PD_BACKEND_OK)
                rc = pd_shm_failed(s, comm, "allgather", &e, fail);
        }
    }
    if (rc == MPI_SUCCESS && pd_leads(h) && most > 0) {
        struct pd_coll_args args = {
            .recvbuf = all, .count = most, .elem_size = 1,
            .root = -1, .tag = tag,
            .algorithm = PD_ALGO_RING,
        };
        /* In place: the host backend takes this host's part from its
         * slot of all. */
        rc = pd_net(comm, h, PD_NET_ALLGATHER, &args, "allgather", fail);
    }
    if (rc == MPI_SUCCESS)
        rc = pd_local_bcast(comm, h, all, (size_t)H * most, 0, true,
                            "allgather", fail);
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
                       const struct pd_layout *recv, struct pd_fail *fail)
{
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
    pd_serve(h, PD_COLL_ALLGATHER, -1, total);
    int rc = h->num_hosts == 1
                 ? pd_allgatherv_one_host(comm, h, sendbuf, recvbuf, offs,
                                          bytes, fail)
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
                         enum pd_coll_kind kind, int root, const char *what,
                         const void *in, void *out, size_t *blocks,
                         const size_t *stack, struct pd_fail *fail)
{
    size_t n = (size_t)comm->size;
    /* Each rank knows only its own lengths: the call is checked by kind
     * and root. */
    pd_serve(h, kind, root, 0);
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_alltoallv(h->shm, in, blocks, blocks + n, out,
                              blocks + 2 * n, blocks + 3 * n, &e);
    if (blocks != stack)
        free(blocks);
    if (rc == PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    pd_stats_way(PD_WAY_SHM);
    return rc == PD_BACKEND_OK ? MPI_SUCCESS
                               : pd_shm_failed(rc, comm, what, &e, fail);
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
                      struct pd_fail *fail)
{
    size_t stack[4 * PD_STACK_RANKS], n = (size_t)comm->size;
    size_t *t = pd_block_table(comm, stack, fail);
    if (t == NULL)
        return fail->errclass;
    /* In place: what goes out is laid out as what comes in. */
    pd_blocks(sendbuf != NULL ? send : recv, NULL, comm->size, t, t + n);
    pd_blocks(recv, NULL, comm->size, t + 2 * n, t + 3 * n);
    return pd_shm_blocks(comm, h, PD_COLL_ALLTOALLV, -1, "alltoall",
                         sendbuf != NULL ? sendbuf : recvbuf, recvbuf, t,
                         stack, fail);
}

int pd_hier_gatherv(struct ompi_communicator_t *comm, struct pd_hier *h,
                    const void *sendbuf, size_t send_bytes, void *recvbuf,
                    const struct pd_layout *recv, int root,
                    struct pd_fail *fail)
{
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
    return pd_shm_blocks(comm, h, PD_COLL_GATHERV, root, "gather",
                         sendbuf, recvbuf, t, stack, fail);
}

int pd_hier_scatterv(struct ompi_communicator_t *comm, struct pd_hier *h,
                     const void *sendbuf, const struct pd_layout *send,
                     void *recvbuf, size_t recv_bytes, int root,
                     struct pd_fail *fail)
{
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
    return pd_shm_blocks(comm, h, PD_COLL_SCATTERV, root, "scatter",
                         sendbuf, recvbuf, t, stack, fail);
}

int pd_hier_barrier(struct ompi_communicator_t *comm, struct pd_hier *h,
                    uint32_t tag, struct pd_fail *fail)
{
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc;
    pd_stats_way(PD_WAY_SHM);
    pd_serve(h, PD_COLL_BARRIER, -1, 0);
    if (h->shm != NULL && (rc = pd_shm_barrier(h->shm, &e)) != PD_BACKEND_OK)
        return pd_shm_failed(rc, comm, "barrier", &e, fail);
    if (h->num_hosts == 1)
        return MPI_SUCCESS;
    if (pd_leads(h)) {
        struct pd_coll_args args = { .root = -1, .tag = tag };
        if ((rc = pd_net(comm, h, PD_NET_BARRIER, &args, "barrier", fail)) !=
            MPI_SUCCESS)
            return rc;
    }
    if (h->shm != NULL && (rc = pd_shm_barrier(h->shm, &e)) != PD_BACKEND_OK)
        return pd_shm_failed(rc, comm, "barrier", &e, fail);
    return MPI_SUCCESS;
}
