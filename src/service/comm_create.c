/*
 * Communicator creation (dup, split, create) and release: the members
 * agree on the new communicator through a collective on the parent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/log.h"
#include "coll/agree.h"
#include "coll/hier.h"
#include "core/attr.h"
#include "core/cart.h"
#include "core/graph.h"
#include "core/group.h"
#include "core/handles.h"
#include "core/runtime.h"
#include "route/route.h"
#include "service/comm_create.h"
#include "service/intercomm.h"
#include "service/p2p.h"
#include "service/progress.h"

/* A new communicator object over group (this rank a member). */
struct ompi_communicator_t *pd_comm_new(struct ompi_communicator_t *parent,
                                        struct ompi_group_t *group,
                                        const char *id)
{
    struct ompi_communicator_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->state = pd_comm_state_new(group, id);
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
void pd_comm_derive_id(char id[PD_COMM_ID_LEN], const char *how)
{
    snprintf(id, PD_COMM_ID_LEN, "c%016llx",
             (unsigned long long)pd_fnv1a64(how, strlen(how)));
}

/* The id of the next communicator made from parent by a call on all of
 * parent's ranks: every rank counts the same creation calls. */
void pd_comm_child_id(struct ompi_communicator_t *parent, char *id,
                      const char *detail)
{
    struct pd_comm_state *st = parent->state;
    pthread_mutex_lock(&st->lock);
    unsigned n = st->next_child++;
    pthread_mutex_unlock(&st->lock);
    char how[PD_COMM_ID_LEN + 64];
    snprintf(how, sizeof(how), "%s.%u%s", st->id, n, detail);
    pd_comm_derive_id(id, how);
}

/* Wrap members into a communicator, or MPI_COMM_NULL if this rank is not
 * one of them. Takes ownership of group. */
int pd_comm_finish(struct ompi_communicator_t *parent,
                   struct ompi_group_t *group, const char *id,
                   struct ompi_communicator_t **out, struct pd_fail *fail)
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
    /* Forming the connections needs every member. Point-to-point over
     * them would otherwise form them on its first call, where a rank's
     * MPI_Irecv would wait for a peer that has moved on to another
     * communicator's call: form them now, while every member is here.
     * A rank's connecting ends before its peers' do; a barrier keeps it
     * from closing them (MPI_Comm_free) while a peer still connects. */
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    if (pd_p2p_needs_network(*out) &&
        (pd_comm_backend(*out, &ops, &bc, fail) != MPI_SUCCESS ||
         pd_progress_run_now(&(struct pd_coll){
             .kind = PD_COLL_BARRIER, .comm = *out,
             .tag = pd_comm_reserve_tags(*out), .root = -1 }, fail) !=
             MPI_SUCCESS ||
         pd_p2p_listen(*out, fail) != MPI_SUCCESS)) {
        pd_comm_free(*out);
        *out = (struct ompi_communicator_t *)MPI_COMM_NULL;
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

int pd_comm_dup(struct ompi_communicator_t *comm,
                struct ompi_communicator_t **out, struct pd_fail *fail)
{
    if (pd_comm_is_inter(comm))
        return pd_intercomm_dup(comm, out, fail);
    char id[PD_COMM_ID_LEN];
    pd_comm_child_id(comm, id, "");
    return pd_comm_dup_as(comm, id, out, fail);
}

int pd_comm_dup_as(struct ompi_communicator_t *comm, const char *id,
                   struct ompi_communicator_t **out, struct pd_fail *fail)
{
    struct ompi_group_t *group = comm->state->group;
    pd_group_retain(group);
    int rc = pd_comm_finish(comm, group, id, out, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A duplicate keeps the topology (a grid or a graph). */
    const struct pd_comm_state *from = comm->state;
    struct pd_comm_state *to = (*out)->state;
    if (from->cart != NULL)
        to->cart = pd_cart_copy(from->cart);
    if (from->graph != NULL)
        to->graph = pd_graph_copy(from->graph);
    bool copied = (from->cart == NULL || to->cart != NULL) &&
                  (from->graph == NULL || to->graph != NULL);
    if (!copied)
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
    if (!copied || pd_attr_copy_all(PD_ATTR_COMM, comm, *out, fail) != 0) {
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
    pd_comm_child_id(comm, id, detail);
    int n = comm->size;
    struct pd_split_entry mine = { color, key, comm->rank };
    struct pd_split_entry *all = malloc((size_t)n * sizeof(*all));
    if (all == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    int rc = pd_progress_allgather(comm, &mine, all, sizeof(mine), fail);
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
    /* Ranks may pass different, disjoint groups (MPI-2.2): each group's
     * members, and no others, must share the new communicator's id. */
    char id[PD_COMM_ID_LEN], detail[32];
    snprintf(detail, sizeof(detail), ":%016llx",
             (unsigned long long)pd_fnv1a64(group->members,
                                            (size_t)group->size *
                                                sizeof(int)));
    pd_comm_child_id(comm, id, detail);
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
    uint64_t hash = pd_fnv1a64(group->members, (size_t)group->size * sizeof(int));
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
    pd_comm_derive_id(id, how);
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
    if (st->host_comm != NULL) {
        pd_agree_owed_release(&st->host_owed, st->host_ops, st->host_comm,
                              comm->rank, comm->size);
        st->host_ops->comm_destroy(st->host_comm);
    }
    pd_dccl_comm_destroy(st->dev_comm, false);
    pd_intercomm_release(st->inter);
    comm->state = NULL;
    pd_comm_state_free(st);
}

void pd_comm_free(struct ompi_communicator_t *comm)
{
    pd_comm_release_state(comm);
    pd_handle_forget(PD_HANDLE_COMM, comm);
    comm->magic = PD_MAGIC_FREED;
    free(comm);
}

static struct {
    pthread_mutex_t lock;
    struct ompi_communicator_t *list;   /* linked by state->next_freed */
    int count;                          /* atomic: a look without the lock */
} pd_freed = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Requests outstanding on comm, and on an intercommunicator's private
 * communicators, where its messages and collectives run. */
static int pd_comm_outstanding(const struct ompi_communicator_t *comm)
{
    const struct pd_comm_state *st = comm->state;
    int n = __atomic_load_n(&st->requests, __ATOMIC_ACQUIRE);
    if (st->inter != NULL)
        n += __atomic_load_n(&st->inter->local->state->requests,
                             __ATOMIC_ACQUIRE) +
             __atomic_load_n(&st->inter->both->state->requests,
                             __ATOMIC_ACQUIRE);
    return n;
}

void pd_comm_free_when_idle(struct ompi_communicator_t *comm)
{
    struct pd_comm_state *st = comm->state;
    pthread_mutex_lock(&pd_freed.lock);
    st->freed = true;   /* before the count: a request let go of after
                           this look finds it on the list */
    if (pd_comm_outstanding(comm) == 0) {
        pthread_mutex_unlock(&pd_freed.lock);
        pd_comm_free(comm);
        return;
    }
    st->next_freed = pd_freed.list;
    pd_freed.list = comm;
    __atomic_add_fetch(&pd_freed.count, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pd_freed.lock);
    pd_log(PD_LOG_TRACE, "MPI_Comm_free: communicator %s released once its "
           "%d outstanding requests are", st->id, pd_comm_outstanding(comm));
}

void pd_comm_release_freed(bool all)
{
    if (__atomic_load_n(&pd_freed.count, __ATOMIC_ACQUIRE) == 0)
        return;
    /* Taken off the list under the lock, released after: a release
     * completes requests, whose callers may look here again. */
    struct ompi_communicator_t *idle = NULL;
    pthread_mutex_lock(&pd_freed.lock);
    for (struct ompi_communicator_t **at = &pd_freed.list; *at != NULL;) {
        struct ompi_communicator_t *c = *at;
        if (all || pd_comm_outstanding(c) == 0) {
            *at = c->state->next_freed;
            c->state->next_freed = idle;
            idle = c;
            __atomic_sub_fetch(&pd_freed.count, 1, __ATOMIC_RELEASE);
        } else {
            at = &c->state->next_freed;
        }
    }
    pthread_mutex_unlock(&pd_freed.lock);
    while (idle != NULL) {
        struct ompi_communicator_t *next = idle->state->next_freed;
        pd_comm_free(idle);
        idle = next;
    }
}

void pd_comm_finalize_predefined(struct ompi_communicator_t *comm)
{
    pd_attr_delete_all(PD_ATTR_COMM, comm);
    pd_comm_release_state(comm);
}
