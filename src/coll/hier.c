/*
 * The host path by host (see hier.h): set-up of a communicator's hosts,
 * segment and leaders, and the steps the algorithms (hier_reduce.c,
 * hier_move.c) are built from: intra-host over shared memory,
 * inter-host among the hosts' leaders over the host backend.
 *
 * Hosts are numbered by their lowest rank in the communicator, and that
 * rank leads its host; it is local rank 0 of its host's segment.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/shm/pairs.h"
#include "base/log.h"
#include "coll/agree.h"
#include "coll/hier_internal.h"
#include "core/algo.h"
#include "core/runtime.h"
#include "core/stats.h"

void pd_hier_free(struct pd_hier *h)
{
    if (h == NULL)
        return;
    pd_shm_comm_destroy(h->shm);
    if (h->net != NULL) {
        pd_agree_owed_release(&h->net_owed, h->net_ops, h->net, h->host,
                              h->num_hosts);
        h->net_ops->comm_destroy(h->net);
    }
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

size_t pd_hier_step_bytes(const struct pd_hier *h)
{
    return h->shm != NULL ? pd_shm_chunk(h->shm) : 0;
}

bool pd_hier_element_fits(const struct pd_hier *h, size_t elem_size)
{
    return h->shm == NULL || elem_size <= pd_hier_step_bytes(h);
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
            /* The world's segment carries the host's point-to-point
             * queues too (service/p2p.c). */
            .extra = comm == MPI_COMM_WORLD &&
                             pd_rt.config.shm_p2p != PD_SHM_P2P_OFF
                         ? pd_shm_pairs_bytes(h->local_size) : 0,
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

struct pd_hier *pd_hier_if_known(struct ompi_communicator_t *comm)
{
    struct pd_comm_state *st = comm->state;
    return __atomic_load_n(&st->hier_known, __ATOMIC_ACQUIRE) ? st->hier
                                                              : NULL;
}

struct pd_shm_comm *pd_hier_segment(struct pd_hier *h)
{
    return h != NULL ? h->shm : NULL;
}

void pd_hier_note_call(struct pd_hier *h, uint32_t n,
                       const struct pd_call_sig *call)
{
    if (h != NULL && h->shm != NULL)
        pd_shm_note_call(h->shm, n, call);
}

int pd_hier_compare_call(struct pd_hier *h, uint32_t n,
                         const struct pd_call_sig *call, char *why,
                         size_t len)
{
    if (h == NULL || h->shm == NULL)
        return PD_BACKEND_OK;
    struct pd_backend_error err;
    int status = pd_shm_compare_call(h->shm, n, call, &err);
    if (status != PD_BACKEND_OK)
        snprintf(why, len, "%s", err.msg);
    return status;
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

int pd_hier_shm_failed(int status, struct ompi_communicator_t *comm,
                         const char *what, const struct pd_backend_error *e,
                         struct pd_fail *fail)
{
    return pd_coll_backend_failed(status, comm, what, e->msg, fail);
}

/* Intra-host reduction: local rank `to` keeps all of it at out. */
int pd_hier_local_reduce(struct ompi_communicator_t *comm, struct pd_hier *h,
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
    int rc = pd_shm_reduce(h->shm, in, out, red->mover, red->count,
                           red->elem_size,
                           red->fn, red->ctx, 0, want, &e);
    return rc == PD_BACKEND_OK ? MPI_SUCCESS
                               : pd_hier_shm_failed(rc, comm, what, &e, fail);
}

int pd_hier_local_bcast(struct ompi_communicator_t *comm, struct pd_hier *h,
                          void *buf, const struct pd_shm_mover *mover,
                          size_t bytes, int from, bool keep,
                          const char *what, struct pd_fail *fail)
{
    if (h->shm == NULL)
        return MPI_SUCCESS;
    struct pd_backend_error e;
    e.msg[0] = '\0';
    int rc = pd_shm_bcast(h->shm, buf, mover, bytes, from, keep, &e);
    return rc == PD_BACKEND_OK ? MPI_SUCCESS
                               : pd_hier_shm_failed(rc, comm, what, &e, fail);
}

/* A small leaders' step whose data rides in the agreement (as the flat
 * path's small calls do, coll/coll_host.c): one round trip between the
 * hosts instead of two. Every leader folds an allreduce's host sums in
 * host order, so all get the same bits.
 * PD_BACKEND_ERR_UNSUPPORTED where the step is too large or of another
 * kind. */
static int pd_hier_net_carried(const struct pd_agree_ctx *x,
                               const struct pd_agree_rec *rec,
                               struct pd_coll_args *args, const char *what,
                               struct pd_fail *fail)
{
    enum pd_coll_kind step = (enum pd_coll_kind)rec->step;
    size_t bytes = args->count * args->elem_size;
    if (x->ops->agree == NULL || !pd_agree_can_carry(x->size, bytes) ||
        (step != PD_COLL_ALLREDUCE && step != PD_COLL_BCAST &&
         step != PD_COLL_ALLGATHER))
        return PD_BACKEND_ERR_UNSUPPORTED;
    unsigned char *buf = args->recvbuf;
    int me = x->rank;
    pd_stats_algo(PD_ALGO_CARRIED);
    if (step == PD_COLL_BCAST)      /* one-way: see coll/agree.h */
        return pd_coll_agree_rooted(x, args->tag, rec, buf, bytes, what,
                                    fail);
    const void *mine = step == PD_COLL_ALLGATHER ? buf + (size_t)me * bytes
                                                 : buf;
    unsigned char *all;
    size_t stride;
    int rc = pd_coll_agree_carrying(x, args->tag, rec, mine, bytes, &all,
                                    &stride, what, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    const unsigned char *data = all + sizeof(*rec);
    if (step == PD_COLL_ALLREDUCE) {
        memcpy(buf, data, bytes);
        for (int r = 1; r < x->size; r++)
            args->reduce(buf, buf, data + (size_t)r * stride, args->count,
                         args->reduce_ctx);
    } else {
        for (int r = 0; r < x->size; r++)
            if (r != me)
                memcpy(buf + (size_t)r * bytes, data + (size_t)r * stride,
                       bytes);
    }
    free(all);
    return MPI_SUCCESS;
}

/* One step among the leaders (callers check that this rank leads); the
 * leaders agree on the call first where the host backend needs it. */
int pd_hier_net(struct ompi_communicator_t *comm, struct pd_hier *h,
                enum pd_coll_kind step, struct pd_coll_args *args,
                const char *what, struct pd_fail *fail)
{
    struct pd_agree_ctx x = {
        .comm = comm, .ops = h->net_ops, .bc = h->net, .size = h->num_hosts,
        .comm_rank_of = h->leader, .rank = h->host, .owed = &h->net_owed,
    };
    struct pd_agree_rec rec = {
        .call = h->call, .step = (uint8_t)step, .root = args->root,
        .bytes = args->count * args->elem_size,
    };
    int rc = pd_hier_net_carried(&x, &rec, args, what, fail);
    if (rc != PD_BACKEND_ERR_UNSUPPORTED)
        return rc;
    rc = pd_coll_agree(&x, args->tag, &rec, what, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    if (step == PD_COLL_BARRIER && h->net_ops->agree != NULL)
        return MPI_SUCCESS;         /* agreement is itself a barrier */
    struct pd_backend_error e;
    e.msg[0] = '\0';
    e.peer = -1;
    if (step != PD_COLL_REDUCE && step != PD_COLL_BARRIER)
        pd_stats_algo(args->algorithm);
    rc = pd_backend_step(h->net_ops, h->net, step, args, &e);
    if (rc == PD_BACKEND_ERR_UNSUPPORTED && e.msg[0] == '\0')
        snprintf(e.msg, sizeof(e.msg), "the %s backend lacks this step",
                 h->net_ops->name);
    return rc == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_coll_step_failed(&x, args->tag, rc, what, &e, fail);
}

bool pd_hier_leads(const struct pd_hier *h)
{
    return h->num_hosts > 1 && h->local_rank == 0;
}

/* Name the call the host's steps serve, for the cross-check in shm. */
void pd_hier_serve(struct pd_hier *h, enum pd_coll_kind kind, int root,
                   size_t bytes, const struct pd_hier_reduction *red,
                   unsigned char signature)
{
    h->call = (struct pd_call_sig){
        .kind = (uint8_t)kind, .op = red ? red->op : 0,
        .elem = red ? red->elem : signature, .root = root, .bytes = bytes,
    };
    if (h->shm != NULL)
        pd_shm_set_call(h->shm, &h->call);
}

