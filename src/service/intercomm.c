/*
 * Intercommunicators: creation (the leaders exchange their groups, each
 * leader hands the other group to its own), duplication, merging, and
 * release of the private communicators their calls run on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/attr.h"
#include "core/group.h"
#include "core/runtime.h"
#include "service/comm_create.h"
#include "service/intercomm.h"
#include "service/p2p.h"
#include "service/progress.h"

static const char pd_create_call[] = "MPI_Intercomm_create";

/* What a leader tells the other leader about its group. */
struct pd_group_note {
    int size;
    int leader_world;               /* the leader's world rank */
    char id[PD_COMM_ID_LEN];        /* the id its local_comm gave the call */
};

/* What a leader tells its own group: the other group, or why not. */
struct pd_leader_word {
    int ok;
    struct pd_group_note remote;
    char why[sizeof(((struct pd_fail *)0)->msg)];
};

/* Wait for a message request of the leaders' exchange; 0 or -1 (fail set
 * on the first failure only). */
static int pd_inter_wait(MPI_Request *req, MPI_Status *status,
                         struct pd_fail *fail, bool *failed)
{
    if (*req == NULL)
        return 0;
    struct pd_fail f;
    pd_request_wait_done(*req);
    if (pd_request_finish(req, status, &f) == MPI_SUCCESS)
        return 0;
    if (!*failed)
        *fail = f;
    *failed = true;
    return -1;
}

/* A receive from the remote leader of exactly bytes, else why. */
static int pd_inter_recv_exact(struct ompi_communicator_t *peer, int from,
                               int tag, void *buf, size_t bytes,
                               const char *what, struct pd_fail *fail)
{
    MPI_Request req = NULL;
    MPI_Status status;
    bool failed = false;
    if (pd_p2p_irecv(peer, buf, bytes, NULL, from, tag, &req, pd_create_call,
                     fail) != MPI_SUCCESS ||
        pd_inter_wait(&req, &status, fail, &failed) != 0)
        return -1;
    if ((size_t)status._ucount != bytes) {
        pd_fail_set(fail, MPI_ERR_OTHER, "the remote leader (rank %d of the "
                    "peer communicator) sent %zu bytes under tag %d where "
                    "%s of %zu bytes was due: is it in another call, or is "
                    "the tag in use by other messages?", from,
                    (size_t)status._ucount, tag, what, bytes);
        return -1;
    }
    return 0;
}

/* The leaders' exchange over peer: this group's note and members for the
 * other group's (*members malloc'ed). */
static int pd_leaders_exchange(struct ompi_communicator_t *peer, int other,
                               int tag, const struct pd_group_note *mine,
                               const int *my_members,
                               struct pd_group_note *theirs, int **members,
                               struct pd_fail *fail)
{
    MPI_Request sent[2] = { NULL, NULL };
    bool failed = false;
    *members = NULL;
    if (pd_p2p_send(peer, mine, sizeof(*mine), other, tag, &sent[0],
                    pd_create_call, fail) != MPI_SUCCESS ||
        pd_p2p_send(peer, my_members, (size_t)mine->size * sizeof(int), other,
                    tag, &sent[1], pd_create_call, fail) != MPI_SUCCESS)
        failed = true;
    if (!failed &&
        pd_inter_recv_exact(peer, other, tag, theirs, sizeof(*theirs),
                            "a group's description", fail) != 0)
        failed = true;
    if (!failed && (theirs->size < 1 || theirs->size > pd_rt.world.size)) {
        pd_fail_set(fail, MPI_ERR_OTHER, "the remote leader describes a "
                    "group of %d ranks in a world of %d", theirs->size,
                    pd_rt.world.size);
        failed = true;
    }
    if (!failed &&
        ((*members = pd_coll_alloc((size_t)theirs->size * sizeof(int),
                                    fail)) == NULL ||
         pd_inter_recv_exact(peer, other, tag, *members,
                             (size_t)theirs->size * sizeof(int),
                             "the group's members", fail) != 0))
        failed = true;
    for (int i = 0; i < 2; i++)
        pd_inter_wait(&sent[i], MPI_STATUS_IGNORE, fail, &failed);
    if (failed) {
        free(*members);
        *members = NULL;
        return -1;
    }
    return 0;
}

/* The two groups must be disjoint sets of ranks of this world. */
static int pd_check_remote_members(const struct ompi_group_t *local,
                                   const int *members, int n,
                                   struct pd_fail *fail)
{
    for (int i = 0; i < n; i++) {
        if (members[i] < 0 || members[i] >= pd_rt.world.size) {
            pd_fail_set(fail, MPI_ERR_OTHER, "the remote leader names world "
                        "rank %d in a world of %d", members[i],
                        pd_rt.world.size);
            return -1;
        }
        if (pd_group_rank_of(local, members[i]) != MPI_UNDEFINED) {
            pd_fail_set(fail, MPI_ERR_COMM, "world rank %d is in both "
                        "groups (the groups of an intercommunicator must "
                        "not overlap)", members[i]);
            return -1;
        }
    }
    return 0;
}

/* Broadcast bytes at buf from root over comm (a creation's step). */
static int pd_inter_bcast(struct ompi_communicator_t *comm, void *buf,
                          size_t bytes, int root, struct pd_fail *fail)
{
    struct pd_coll c = { .kind = PD_COLL_BCAST, .comm = comm,
                         .tag = pd_comm_reserve_tags(comm), .recvbuf = buf,
                         .count = bytes, .root = root };
    return pd_progress_run_now(&c, fail);
}

/* The intercommunicator over local and both (taken: released with it,
 * or here when this fails); errors go to parent's handler. */
static int pd_inter_wrap(struct ompi_communicator_t *parent,
                         struct ompi_communicator_t *local,
                         struct ompi_communicator_t *both,
                         struct ompi_group_t *remote, int local_first,
                         int remote_first, struct ompi_communicator_t **out,
                         struct pd_fail *fail)
{
    struct pd_inter *in = calloc(1, sizeof(*in));
    char how[PD_COMM_ID_LEN + 8], id[PD_COMM_ID_LEN];
    snprintf(how, sizeof(how), "%s.i", both->state->id);
    pd_comm_derive_id(id, how);
    struct ompi_group_t *group = local->state->group;
    pd_group_retain(group);
    *out = in != NULL ? pd_comm_new(parent, group, id) : NULL;
    if (*out == NULL) {
        pd_group_release(group);
        free(in);
        pd_comm_free(local);
        pd_comm_free(both);
        pd_group_release(remote);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    *in = (struct pd_inter){ remote, local, both, local_first, remote_first };
    (*out)->state->inter = in;
    snprintf(local->name, sizeof(local->name),
             "the local group of an intercommunicator");
    snprintf(both->name, sizeof(both->name),
             "the union of an intercommunicator's groups");
    return MPI_SUCCESS;
}

/* Make the private communicators and the intercommunicator, once every
 * rank knows the remote group (members, n) and both groups' ids. */
static int pd_inter_build(struct ompi_communicator_t *local_comm,
                          const struct pd_group_note *mine,
                          const struct pd_group_note *theirs,
                          const int *members, struct ompi_communicator_t **out,
                          struct pd_fail *fail)
{
    const struct ompi_group_t *lg = local_comm->state->group;
    bool low = mine->leader_world < theirs->leader_world;
    int n = lg->size + theirs->size;
    int *all = pd_coll_alloc((size_t)n * sizeof(int), fail);
    if (all == NULL)
        return fail->errclass;
    int local_first = low ? 0 : theirs->size;
    int remote_first = low ? lg->size : 0;
    memcpy(all + local_first, lg->members, (size_t)lg->size * sizeof(int));
    memcpy(all + remote_first, members, (size_t)theirs->size * sizeof(int));
    struct ompi_group_t *union_group = pd_group_new(n, all);
    struct ompi_group_t *local_group = pd_group_new(lg->size, lg->members);
    struct ompi_group_t *remote = pd_group_new(theirs->size, members);
    free(all);
    if (union_group == NULL || local_group == NULL || remote == NULL) {
        pd_group_release(union_group);
        pd_group_release(local_group);
        pd_group_release(remote);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    char how[3 * PD_COMM_ID_LEN], union_id[PD_COMM_ID_LEN],
        local_id[PD_COMM_ID_LEN];
    snprintf(how, sizeof(how), "%s|%s", low ? mine->id : theirs->id,
             low ? theirs->id : mine->id);
    pd_comm_derive_id(union_id, how);
    snprintf(how, sizeof(how), "%s|%s", union_id, mine->id);
    pd_comm_derive_id(local_id, how);
    struct ompi_communicator_t *local = NULL, *both = NULL;
    if (pd_comm_finish(local_comm, local_group, local_id, &local, fail) !=
        MPI_SUCCESS) {
        pd_group_release(union_group);
        pd_group_release(remote);
        return fail->errclass;
    }
    if (pd_comm_finish(local_comm, union_group, union_id, &both, fail) !=
        MPI_SUCCESS) {
        pd_comm_free(local);
        pd_group_release(remote);
        return fail->errclass;
    }
    return pd_inter_wrap(local_comm, local, both, remote, local_first,
                         remote_first, out, fail);
}

int pd_intercomm_create(struct ompi_communicator_t *local_comm,
                        int local_leader,
                        struct ompi_communicator_t *peer_comm,
                        int remote_leader, int tag,
                        struct ompi_communicator_t **out,
                        struct pd_fail *fail)
{
    const struct ompi_group_t *lg = local_comm->state->group;
    struct pd_group_note mine = { .size = lg->size,
                                  .leader_world = lg->members[local_leader] };
    pd_comm_child_id(local_comm, mine.id, ":inter");
    struct pd_leader_word word = { .ok = 1 };
    int *members = NULL;
    if (local_comm->rank == local_leader) {
        struct pd_fail why;
        if (pd_leaders_exchange(peer_comm, remote_leader, tag, &mine,
                                lg->members, &word.remote, &members,
                                &why) != 0 ||
            pd_check_remote_members(lg, members, word.remote.size,
                                    &why) != 0) {
            word.ok = 0;
            snprintf(word.why, sizeof(word.why), "%s", why.msg);
        }
    }
    /* The leader's word reaches its group even when it failed, so no
     * rank waits for members that will never come. */
    if (pd_inter_bcast(local_comm, &word, sizeof(word), local_leader,
                       fail) != MPI_SUCCESS) {
        free(members);
        return fail->errclass;
    }
    if (!word.ok) {
        free(members);
        pd_fail_set(fail, MPI_ERR_OTHER, "%s%s",
                    local_comm->rank == local_leader
                        ? ""
                        : "the local leader's exchange with the remote "
                          "leader failed: ",
                    word.why);
        return fail->errclass;
    }
    if (members == NULL &&
        (members = pd_coll_alloc((size_t)word.remote.size * sizeof(int),
                                  fail)) == NULL) {
        /* The others go on into the broadcast: this rank cannot follow. */
        return fail->errclass;
    }
    if (pd_inter_bcast(local_comm, members,
                       (size_t)word.remote.size * sizeof(int), local_leader,
                       fail) != MPI_SUCCESS) {
        free(members);
        return fail->errclass;
    }
    int rc = pd_inter_build(local_comm, &mine, &word.remote, members, out,
                            fail);
    free(members);
    return rc;
}

void pd_intercomm_child_ids(struct ompi_communicator_t *comm,
                            char id_local[PD_COMM_ID_LEN],
                            char id_both[PD_COMM_ID_LEN])
{
    const struct pd_inter *in = comm->state->inter;
    pd_comm_child_id(in->local, id_local, "");
    pd_comm_child_id(in->both, id_both, "");
}

int pd_intercomm_dup(struct ompi_communicator_t *comm,
                     struct ompi_communicator_t **out, struct pd_fail *fail)
{
    char id_local[PD_COMM_ID_LEN], id_both[PD_COMM_ID_LEN];
    pd_intercomm_child_ids(comm, id_local, id_both);
    return pd_intercomm_dup_as(comm, id_local, id_both, out, fail);
}

int pd_intercomm_dup_as(struct ompi_communicator_t *comm,
                        const char *id_local, const char *id_both,
                        struct ompi_communicator_t **out,
                        struct pd_fail *fail)
{
    const struct pd_inter *in = comm->state->inter;
    struct ompi_communicator_t *local = NULL, *both = NULL;
    if (pd_comm_dup_as(in->local, id_local, &local, fail) != MPI_SUCCESS)
        return fail->errclass;
    if (pd_comm_dup_as(in->both, id_both, &both, fail) != MPI_SUCCESS) {
        pd_comm_free(local);
        return fail->errclass;
    }
    struct ompi_group_t *remote =
        pd_group_new(in->remote->size, in->remote->members);
    if (remote == NULL) {
        pd_comm_free(local);
        pd_comm_free(both);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    if (pd_inter_wrap(comm, local, both, remote, in->local_first,
                      in->remote_first, out, fail) != MPI_SUCCESS)
        return fail->errclass;
    if (pd_attr_copy_all(PD_ATTR_COMM, comm, *out, fail) != 0) {
        pd_comm_free(*out);
        *out = (struct ompi_communicator_t *)MPI_COMM_NULL;
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

int pd_intercomm_merge(struct ompi_communicator_t *comm, bool high,
                       struct ompi_communicator_t **out,
                       struct pd_fail *fail)
{
    const struct pd_inter *in = comm->state->inter;
    const struct ompi_group_t *all = in->both->state->group;
    int n = all->size, mine = high;
    int *highs = pd_coll_alloc((size_t)n * sizeof(int), fail);
    int *members = pd_coll_alloc((size_t)n * sizeof(int), fail);
    if (highs == NULL || members == NULL ||
        pd_progress_allgather(in->both, &mine, highs, sizeof(int), fail) !=
            MPI_SUCCESS) {
        free(highs);
        free(members);
        return fail->errclass;
    }
    /* Every rank sees every flag: all fail alike on a mixed group. */
    int lower_size = in->local_first == 0 ? comm->size : in->remote->size;
    for (int r = 1; r < n; r++) {
        bool same_group = (r < lower_size) == (r - 1 < lower_size);
        if (same_group && (highs[r] != 0) != (highs[r - 1] != 0)) {
            pd_fail_set(fail, MPI_ERR_ARG, "the ranks of one group pass "
                        "different values of high (%d and %d)",
                        highs[r - 1], highs[r]);
            free(highs);
            free(members);
            return fail->errclass;
        }
    }
    /* The group that passed high = false first; alike: the lower one. */
    bool lower_first = (highs[0] != 0) == (highs[n - 1] != 0) || !highs[0];
    int first = lower_first ? 0 : lower_size;
    for (int i = 0; i < n; i++)
        members[i] = all->members[(first + i) % n];
    free(highs);
    struct ompi_group_t *group = pd_group_new(n, members);
    free(members);
    if (group == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    char id[PD_COMM_ID_LEN];
    pd_comm_child_id(in->both, id, ":merge");
    return pd_comm_finish(comm, group, id, out, fail);
}

/* A rank's choice in MPI_Comm_split or MPI_Comm_create on an
 * intercommunicator: its color (MPI_UNDEFINED: none) and its key. */
struct pd_inter_pick {
    int color;
    int key;
    int rank;                       /* in both */
};

static int pd_pick_order(const void *a, const void *b)
{
    const struct pd_inter_pick *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The ranks of picks[first, first + n) with color, in key order, as
 * world ranks in *members; their count. */
static int pd_pick_members(const struct ompi_group_t *all,
                           struct pd_inter_pick *picks, int first, int n,
                           int color, int *members)
{
    int k = 0;
    struct pd_inter_pick *chosen = picks + first;
    for (int i = 0; i < n; i++)
        if (color != MPI_UNDEFINED && picks[first + i].color == color)
            chosen[k++] = picks[first + i];
    qsort(chosen, (size_t)k, sizeof(*chosen), pd_pick_order);
    for (int i = 0; i < k; i++)
        members[i] = all->members[chosen[i].rank];
    return k;
}

/* A private communicator over members (n of them), named by parent's
 * next child and detail; *out NULL where this rank makes none. */
static int pd_pick_comm(struct ompi_communicator_t *errh,
                        struct ompi_communicator_t *parent, const int *members,
                        int n, bool member, const char *detail,
                        struct ompi_communicator_t **out, struct pd_fail *fail)
{
    char id[PD_COMM_ID_LEN];
    pd_comm_child_id(parent, id, detail);
    *out = NULL;
    if (!member)
        return MPI_SUCCESS;
    struct ompi_group_t *group = pd_group_new(n, members);
    if (group == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    return pd_comm_finish(errh, group, id, out, fail);
}

int pd_intercomm_split(struct ompi_communicator_t *comm, int color, int key,
                       const char *detail, struct ompi_communicator_t **out,
                       struct pd_fail *fail)
{
    const struct pd_inter *in = comm->state->inter;
    const struct ompi_group_t *all = in->both->state->group;
    int n = all->size;
    *out = (struct ompi_communicator_t *)MPI_COMM_NULL;
    struct pd_inter_pick mine = { color, key, all->rank };
    struct pd_inter_pick *picks = pd_coll_alloc((size_t)n * sizeof(*picks),
                                                 fail);
    int *members = pd_coll_alloc((size_t)n * sizeof(int), fail);
    if (picks == NULL || members == NULL ||
        pd_progress_allgather(in->both, &mine, picks, sizeof(mine), fail) !=
            MPI_SUCCESS) {
        free(picks);
        free(members);
        return fail->errclass;
    }
    int lsize = comm->size, rsize = in->remote->size;
    int *local = members + in->local_first;
    int *remote = members + in->remote_first;
    int nl = pd_pick_members(all, picks, in->local_first, lsize, color, local);
    int nr = pd_pick_members(all, picks, in->remote_first, rsize, color,
                             remote);
    free(picks);
    /* Both sides must have the color; the union lists the lower group
     * first, as every intercommunicator's does. */
    bool member = nl > 0 && nr > 0;
    int lower = in->local_first == 0 ? nl : nr;
    int upper = in->local_first == 0 ? nr : nl;
    memmove(members + lower, members + (in->local_first == 0 ? lsize : rsize),
            (size_t)upper * sizeof(int));
    struct ompi_communicator_t *lc = NULL, *bc = NULL;
    struct ompi_group_t *rg = NULL;
    int local_first = in->local_first == 0 ? 0 : lower;
    int remote_first = in->local_first == 0 ? lower : 0;
    int rc = pd_pick_comm(comm, in->local, members + local_first, nl, member,
                          detail, &lc, fail);
    if (rc == MPI_SUCCESS)
        rc = pd_pick_comm(comm, in->both, members, lower + upper, member,
                          detail, &bc, fail);
    if (rc == MPI_SUCCESS && member &&
        (rg = pd_group_new(nr, members + remote_first)) == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        rc = fail->errclass;
    }
    free(members);
    if (rc != MPI_SUCCESS || !member) {
        if (lc != NULL)
            pd_comm_free(lc);
        if (bc != NULL)
            pd_comm_free(bc);
        return rc;
    }
    return pd_inter_wrap(comm, lc, bc, rg, local_first, remote_first, out,
                         fail);
}

void pd_intercomm_release(struct pd_inter *inter)
{
    if (inter == NULL)
        return;
    pd_comm_free(inter->local);
    pd_comm_free(inter->both);
    pd_group_release(inter->remote);
    free(inter);
}
