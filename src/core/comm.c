/* Communicator lifecycle and the lazily connected backend context. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "core/attr.h"
#include "core/coll.h"
#include "core/comm.h"
#include "core/group.h"
#include "core/hier.h"
#include "core/log.h"
#include "core/p2p.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "route/route.h"

/* How many MPI_Comm_create_group calls were made with one (tag, group):
 * the group's members alone must agree on the new communicator's id. */
struct pd_create_group_count {
    int tag;
    uint64_t group_hash;
    unsigned count;
    struct pd_create_group_count *next;
};

void pd_fail_set(struct pd_fail *fail, int errclass, const char *fmt, ...)
{
    fail->errclass = errclass;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail->msg, sizeof(fail->msg), fmt, ap);
    va_end(ap);
}

bool pd_comm_is_usable(const struct ompi_communicator_t *comm)
{
    return comm != NULL && comm->magic == PD_MAGIC_COMM &&
           comm->kind != PD_COMM_NULL && comm->state != NULL;
}

bool pd_comm_is_predefined(const struct ompi_communicator_t *comm)
{
    return comm->kind == PD_COMM_WORLD || comm->kind == PD_COMM_SELF ||
           comm->kind == PD_COMM_NULL;
}

int pd_comm_world_rank(const struct ompi_communicator_t *comm, int r)
{
    return comm->state->group->members[r];
}

static struct pd_comm_state *pd_state_new(struct ompi_group_t *group,
                                          const char *id)
{
    struct pd_comm_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NULL;
    pthread_mutex_init(&st->lock, NULL);
    snprintf(st->id, sizeof(st->id), "%s", id);
    st->group = group;
    return st;
}

static void pd_state_free(struct pd_comm_state *st)
{
    while (st->group_counts != NULL) {
        struct pd_create_group_count *next = st->group_counts->next;
        free(st->group_counts);
        st->group_counts = next;
    }
    pd_group_release(st->group);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

/* Data sockets bind where the rendezvous is reached from, unless the user
 * named an interface: on one host that is loopback, across hosts it is
 * the interface that routes to the master -- never loopback by accident. */
static void pd_choose_bind(const char **iface, const char **host,
                           char *hostbuf, size_t hostlen)
{
    *iface = NULL;
    *host = "127.0.0.1";
    if (pd_rt.config.socket_ifname[0] != '\0') {
        *iface = pd_rt.config.socket_ifname;
        return;
    }
    if (pd_rt.store != NULL && pd_store_local_host(pd_rt.store, hostbuf,
                                                   hostlen) == 0)
        *host = hostbuf;
}

int pd_comm_store_client(struct pd_store_client **store, const char *what,
                         struct pd_fail *fail)
{
    char err[512];
    *store = NULL;
    if (pd_rt.store == NULL)
        return MPI_SUCCESS;
    if (pd_store_reconnect(pd_rt.world.store_addr, pd_rt.world.job_key,
                           pd_rt.world.rank, pd_rt.config.timeout_ms, store,
                           err, sizeof(err)) != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER, "cannot reach the rendezvous store "
                    "to connect %s: %s", what, err);
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

int pd_comm_connect_host(const char *label, int rank, int size,
                         const char *prefix,
                         const struct pd_backend_ops **ops,
                         struct pd_backend_comm **bc, struct pd_fail *fail)
{
    char err[512], hostbuf[256];
    *bc = NULL;
    if (pd_route_host_backend(size, ops, err, sizeof(err)) != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER, "%s", err);
        return fail->errclass;
    }
    /* Each connection gets a store client of its own: rendezvous waits
     * hold a client, and communicators connecting at once from several
     * threads must not wait behind each other's waits. */
    struct pd_store_client *store = NULL;
    if (size > 1 && pd_comm_store_client(&store, prefix, fail) != MPI_SUCCESS)
        return fail->errclass;
    struct pd_backend_comm_init init = {
        .rank = rank,
        .size = size,
        .store = store,
        .store_prefix = prefix,
        .timeout_ms = pd_rt.config.timeout_ms,
    };
    pd_choose_bind(&init.bind_iface, &init.bind_host, hostbuf,
                   sizeof(hostbuf));
    struct pd_backend_error berr = { .msg = "" };
    int rc = (*ops)->comm_create(&init, bc, &berr);
    if (store != NULL)
        pd_store_close(store);
    if (rc != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER,
                    "cannot connect %s (rank %d of %d) with %s: %s", label,
                    rank, size, (*ops)->name, berr.msg);
        *bc = NULL;
        return fail->errclass;
    }
    pd_log(PD_LOG_TRACE, "connected %s (%d ranks) via %s", label, size,
           (*ops)->name);
    return MPI_SUCCESS;
}

/* Connect comm's backend context; called with the state's lock held. */
static int pd_connect(struct ompi_communicator_t *comm, struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    return pd_comm_connect_host(comm->name[0] ? comm->name : st->id,
                                comm->rank, comm->size, st->id, &st->host_ops,
                                &st->host_comm, fail) == MPI_SUCCESS ? 0 : -1;
}

int pd_comm_backend(struct ompi_communicator_t *comm,
                    const struct pd_backend_ops **ops,
                    struct pd_backend_comm **bc, struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    pthread_mutex_lock(&st->lock);
    int rc = st->host_comm != NULL ? 0 : pd_connect(comm, fail);
    *ops = st->host_ops;
    *bc = st->host_comm;
    pthread_mutex_unlock(&st->lock);
    return rc == 0 ? MPI_SUCCESS : fail->errclass;
}

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
    int rc = pd_coll_allgather(comm, pd_comm_reserve_tags(comm), mine, all,
                               sizeof(mine), fail);
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

uint32_t pd_comm_reserve_tags(struct ompi_communicator_t *comm)
{
    /* Atomic, not under the state's lock: this is on every call's path. */
    return __atomic_fetch_add(&comm->state->next_tag, PD_TAGS_PER_CALL,
                              __ATOMIC_RELAXED);
}

int pd_comm_init_predefined(struct ompi_communicator_t *comm,
                            struct ompi_group_t *group, const char *id,
                            bool connect_now, struct pd_fail *fail)
{
    struct pd_comm_state *st = pd_state_new(group, id);
    if (st == NULL) {
        pd_group_release(group);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return -1;
    }
    comm->rank = group->rank;
    comm->size = group->size;
    comm->errhandler = (struct ompi_errhandler_t *)MPI_ERRORS_ARE_FATAL;
    comm->state = st;
    if (connect_now && pd_connect(comm, fail) != 0) {
        comm->state = NULL;
        pd_state_free(st);
        return -1;
    }
    return 0;
}

/* A new communicator object over group (this rank a member). */
static struct ompi_communicator_t *pd_comm_new(struct ompi_communicator_t *parent,
                                               struct ompi_group_t *group,
                                               const char *id)
{
    struct ompi_communicator_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->state = pd_state_new(group, id);
    if (c->state == NULL) {
        free(c);
        return NULL;
    }
    c->magic = PD_MAGIC_COMM;
    c->kind = PD_COMM_USER;
    c->rank = group->rank;
    c->size = group->size;
    /* A new communicator inherits its parent's error handler. */
    c->errhandler = parent->errhandler;
    return c;
}

/* A child's id: a fixed-length hash of how it was made (the parent's id
 * and the creation's details), so ids stay short however deeply
 * communicators are derived from one another. */
static void pd_derive_id(char id[PD_COMM_ID_LEN], const char *how)
{
    snprintf(id, PD_COMM_ID_LEN, "c%016llx",
             (unsigned long long)pd_fnv1a64(how, strlen(how)));
}

/* The id of the next communicator made from parent by a call on all of
 * parent's ranks: every rank counts the same creation calls. */
static void pd_child_id(struct ompi_communicator_t *parent, char *id,
                        const char *detail)
{
    struct pd_comm_state *st = parent->state;
    pthread_mutex_lock(&st->lock);
    unsigned n = st->next_child++;
    pthread_mutex_unlock(&st->lock);
    char how[PD_COMM_ID_LEN + 64];
    snprintf(how, sizeof(how), "%s.%u%s", st->id, n, detail);
    pd_derive_id(id, how);
}

/* Wrap members into a communicator, or MPI_COMM_NULL if this rank is not
 * one of them. Takes ownership of group. */
static int pd_comm_finish(struct ompi_communicator_t *parent,
                          struct ompi_group_t *group, const char *id,
                          struct ompi_communicator_t **out,
                          struct pd_fail *fail)
{
    if (group->rank == MPI_UNDEFINED) {
        pd_group_release(group);
        *out = (struct ompi_communicator_t *)MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    *out = pd_comm_new(parent, group, id);
    if (*out == NULL) {
        pd_group_release(group);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory creating a communicator");
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

int pd_comm_dup(struct ompi_communicator_t *comm,
                struct ompi_communicator_t **out, struct pd_fail *fail)
{
    char id[PD_COMM_ID_LEN];
    pd_child_id(comm, id, "");
    struct ompi_group_t *group = comm->state->group;
    pd_group_retain(group);
    int rc = pd_comm_finish(comm, group, id, out, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    if (pd_attr_copy_all(comm, *out, fail) != 0) {
        pd_comm_free(*out);
        *out = (struct ompi_communicator_t *)MPI_COMM_NULL;
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

struct pd_split_entry {
    int color;
    int key;
    int rank;           /* in the parent */
};

static int pd_split_order(const void *a, const void *b)
{
    const struct pd_split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int pd_comm_split(struct ompi_communicator_t *comm, int color, int key,
                  struct ompi_communicator_t **out, struct pd_fail *fail)
{
    char id[PD_COMM_ID_LEN], detail[32];
    snprintf(detail, sizeof(detail), ":%d", color);
    pd_child_id(comm, id, detail);
    int n = comm->size;
    struct pd_split_entry mine = { color, key, comm->rank };
    struct pd_split_entry *all = malloc((size_t)n * sizeof(*all));
    if (all == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    int rc = pd_coll_allgather(comm, pd_comm_reserve_tags(comm), &mine, all,
                               sizeof(mine), fail);
    if (rc != MPI_SUCCESS || color == MPI_UNDEFINED) {
        free(all);
        if (rc == MPI_SUCCESS)
            *out = (struct ompi_communicator_t *)MPI_COMM_NULL;
        return rc;
    }
    /* Members of my color, ordered by key, ties by parent rank. */
    int members = 0;
    for (int i = 0; i < n; i++)
        if (all[i].color == color)
            all[members++] = all[i];
    qsort(all, (size_t)members, sizeof(*all), pd_split_order);
    int *world = malloc((size_t)members * sizeof(int));
    if (world == NULL) {
        free(all);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    for (int i = 0; i < members; i++)
        world[i] = pd_comm_world_rank(comm, all[i].rank);
    free(all);
    struct ompi_group_t *group = pd_group_new(members, world);
    free(world);
    if (group == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    return pd_comm_finish(comm, group, id, out, fail);
}

int pd_comm_split_shared(struct ompi_communicator_t *comm, bool member,
                         int key, struct ompi_communicator_t **out,
                         struct pd_fail *fail)
{
    /* Ranks on one host share a color: the lowest parent rank there.
     * World formation numbered the hosts, so no exchange is needed. */
    int my_node = pd_rt.world.node_of[comm->state->group->members[comm->rank]];
    int color = comm->rank;
    for (int i = 0; i < comm->size; i++) {
        if (pd_rt.world.node_of[comm->state->group->members[i]] == my_node) {
            color = i;
            break;
        }
    }
    return pd_comm_split(comm, member ? color : MPI_UNDEFINED, key, out, fail);
}

int pd_comm_create(struct ompi_communicator_t *comm,
                   struct ompi_group_t *group,
                   struct ompi_communicator_t **out, struct pd_fail *fail)
{
    char id[PD_COMM_ID_LEN];
    pd_child_id(comm, id, "");
    struct ompi_group_t *copy = pd_group_new(group->size, group->members);
    if (copy == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    return pd_comm_finish(comm, copy, id, out, fail);
}

int pd_comm_create_group(struct ompi_communicator_t *comm,
                         struct ompi_group_t *group, int tag,
                         struct ompi_communicator_t **out,
                         struct pd_fail *fail)
{
    uint64_t hash =
        pd_fnv1a64(group->members, (size_t)group->size * sizeof(int));
    struct pd_comm_state *st = comm->state;
    pthread_mutex_lock(&st->lock);
    struct pd_create_group_count *c = st->group_counts;
    while (c != NULL && (c->tag != tag || c->group_hash != hash))
        c = c->next;
    if (c == NULL && (c = calloc(1, sizeof(*c))) != NULL) {
        c->tag = tag;
        c->group_hash = hash;
        c->next = st->group_counts;
        st->group_counts = c;
    }
    unsigned n = c != NULL ? c->count++ : 0;
    pthread_mutex_unlock(&st->lock);
    if (c == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    char how[PD_COMM_ID_LEN + 64], id[PD_COMM_ID_LEN];
    snprintf(how, sizeof(how), "%s.g%d.%016llx.%u", st->id, tag,
             (unsigned long long)hash, n);
    pd_derive_id(id, how);
    struct ompi_group_t *copy = pd_group_new(group->size, group->members);
    if (copy == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    return pd_comm_finish(comm, copy, id, out, fail);
}

static void pd_comm_release_state(struct ompi_communicator_t *comm)
{
    struct pd_comm_state *st = comm->state;
    if (st == NULL)
        return;
    pd_progress_stop(comm);
    pd_p2p_release(comm);
    pd_hier_free(st->hier);
    if (st->host_comm != NULL)
        st->host_ops->comm_destroy(st->host_comm);
    pd_dccl_comm_destroy(st->dev_comm, false);
    comm->state = NULL;
    pd_state_free(st);
}

void pd_comm_free(struct ompi_communicator_t *comm)
{
    pd_comm_release_state(comm);
    comm->magic = PD_MAGIC_FREED;
    free(comm);
}

void pd_comm_finalize_predefined(struct ompi_communicator_t *comm)
{
    pd_attr_delete_all(comm);
    pd_comm_release_state(comm);
}
