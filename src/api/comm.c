/* Communicators: queries, error handlers, creation and release. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/mpi1.h"
#include "service/comm_create.h"
#include "service/intercomm.h"
#include "service/progress.h"
#include "service/request.h"
#include "core/attr.h"
#include "core/group.h"

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
#pragma weak MPI_Comm_size = PMPI_Comm_size
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
#pragma weak MPI_Errhandler_get = PMPI_Errhandler_get

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    static const char call[] = "MPI_Comm_rank";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (rank == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "rank is NULL");
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    static const char call[] = "MPI_Comm_size";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (size == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "size is NULL");
    *size = comm->size;
    return MPI_SUCCESS;
}

static bool pd_errhandler_is_usable(MPI_Errhandler handler)
{
    return handler != NULL && handler->magic == PD_MAGIC_ERRH &&
           handler->kind != PD_ERRH_NULL;
}

static int pd_comm_set_errhandler(const char *call, MPI_Comm comm,
                                  MPI_Errhandler errhandler)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (!pd_errhandler_is_usable(errhandler))
        return pd_raise(comm, call, MPI_ERR_ARG,
                        errhandler == MPI_ERRHANDLER_NULL
                            ? "errhandler is MPI_ERRHANDLER_NULL"
                            : "errhandler is not a valid error handler");
    if (errhandler->kind == PD_ERRH_USER && errhandler->comm_fn == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "errhandler was made for "
                        "files (MPI_File_create_errhandler)");
    __atomic_store_n(&comm->errhandler, errhandler, __ATOMIC_RELEASE);
    /* An intercommunicator's calls run on its private communicators,
     * whose errors are the program's errors on it. */
    const struct pd_inter *in = comm->state->inter;
    if (in != NULL) {
        __atomic_store_n(&in->local->errhandler, errhandler, __ATOMIC_RELEASE);
        __atomic_store_n(&in->both->errhandler, errhandler, __ATOMIC_RELEASE);
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return pd_comm_set_errhandler("MPI_Comm_set_errhandler", comm,
                                  errhandler);
}

static int pd_comm_get_errhandler(const char *call, MPI_Comm comm,
                                  MPI_Errhandler *errhandler)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (errhandler == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "errhandler is NULL");
    *errhandler = __atomic_load_n(&comm->errhandler, __ATOMIC_ACQUIRE);
    return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return pd_comm_get_errhandler("MPI_Comm_get_errhandler", comm,
                                  errhandler);
}

/* MPI-1's names (api/mpi1.h). */
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return pd_comm_set_errhandler("MPI_Errhandler_set", comm, errhandler);
}

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return pd_comm_get_errhandler("MPI_Errhandler_get", comm, errhandler);
}

/* --- creating and freeing communicators ----------------------------- */

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
#pragma weak MPI_Comm_idup = PMPI_Comm_idup
#pragma weak MPI_Comm_split = PMPI_Comm_split
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
#pragma weak MPI_Comm_create = PMPI_Comm_create
#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
#pragma weak MPI_Comm_free = PMPI_Comm_free
#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect
#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
#pragma weak MPI_Comm_compare = PMPI_Comm_compare
#pragma weak MPI_Comm_group = PMPI_Comm_group
#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create

static int pd_check_newcomm(MPI_Comm comm, const char *call, MPI_Comm *newcomm)
{
    if (newcomm == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "newcomm is NULL");
    return MPI_SUCCESS;
}

static int pd_created(MPI_Comm comm, const char *call, int rc,
                      const struct pd_fail *fail)
{
    return rc == MPI_SUCCESS ? MPI_SUCCESS : pd_raise_fail(comm, call, fail);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_dup";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    struct pd_fail fail;
    return pd_created(comm, call, pd_comm_dup(comm, newcomm, &fail), &fail);
}

/* An MPI_Comm_idup: the duplicate's id (an intercommunicator's two inner
 * ones) taken in call order, the duplicate made on comm's progress
 * thread, so that the call never waits for the members to form its
 * connections (ranks may start idups of other communicators, in another
 * order, first). */
struct pd_idup {
    struct ompi_communicator_t *comm;
    char id[PD_COMM_ID_LEN];
    char id_both[PD_COMM_ID_LEN];   /* an intercommunicator's */
    MPI_Comm *newcomm;          /* written when the duplicate is made */
};

static int pd_idup_run(void *args, struct pd_fail *fail)
{
    struct pd_idup *a = args;
    MPI_Comm made;
    int rc = pd_comm_is_inter(a->comm)
                 ? pd_intercomm_dup_as(a->comm, a->id, a->id_both, &made,
                                       fail)
                 : pd_comm_dup_as(a->comm, a->id, &made, fail);
    *a->newcomm = rc == MPI_SUCCESS ? made : MPI_COMM_NULL;
    return rc;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    static const char call[] = "MPI_Comm_idup";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    PD_CHECK(pd_check_request_out(comm, call, request));
    struct pd_idup *a = malloc(sizeof(*a));
    struct ompi_request_t *req = a != NULL ? pd_request_new(comm, call)
                                           : NULL;
    if (req == NULL) {
        free(a);
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    }
    a->comm = comm;
    a->newcomm = newcomm;
    if (pd_comm_is_inter(comm))
        pd_intercomm_child_ids(comm, a->id, a->id_both);
    else
        pd_comm_child_id(comm, a->id, "");
    struct pd_fail fail;
    if (pd_progress_defer(req, pd_idup_run, a, free, &fail) != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    *request = req;
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    if (color < 0 && color != MPI_UNDEFINED)
        return pd_raise(comm, call, MPI_ERR_ARG,
                        "color %d is negative and not MPI_UNDEFINED", color);
    struct pd_fail fail;
    if (pd_comm_is_inter(comm)) {
        char detail[32];
        snprintf(detail, sizeof(detail), ":isplit:%d", color);
        return pd_created(comm, call,
                          pd_intercomm_split(comm, color, key, detail,
                                             newcomm, &fail), &fail);
    }
    return pd_created(comm, call,
                      pd_comm_split(comm, color, key, newcomm, &fail), &fail);
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key,
                         MPI_Info info, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split_type";
    (void)info;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_intra(comm, call, "comm"));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    struct pd_fail fail;
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        return pd_raise(comm, call, MPI_ERR_ARG,
                        "split_type %d is not MPI_COMM_TYPE_SHARED or MPI_UNDEFINED",
                        split_type);
    int rc = pd_comm_split_shared(comm, split_type == MPI_COMM_TYPE_SHARED,
                                  key, newcomm, &fail);
    return pd_created(comm, call, rc, &fail);
}

/* group's members must all belong to comm. */
static int pd_check_subgroup(MPI_Comm comm, const char *call, MPI_Group group)
{
    if (!pd_group_is_valid(group))
        return pd_raise(comm, call, MPI_ERR_GROUP, "group is not a valid group");
    for (int i = 0; i < group->size; i++)
        if (pd_group_rank_of(comm->state->group, group->members[i]) == MPI_UNDEFINED)
            return pd_raise(comm, call, MPI_ERR_GROUP,
                            "group member %d is not in the communicator", i);
    return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    PD_CHECK(pd_check_subgroup(comm, call, group));
    struct pd_fail fail;
    if (pd_comm_is_inter(comm)) {
        /* Each side passes a group of its own ranks; their places in it
         * order the new intercommunicator's groups. */
        int place = pd_group_rank_of(group, comm->state->group->members[
                                                comm->rank]);
        return pd_created(comm, call,
                          pd_intercomm_split(comm, place == MPI_UNDEFINED
                                                       ? MPI_UNDEFINED : 0,
                                             place, ":icreate", newcomm,
                                             &fail), &fail);
    }
    return pd_created(comm, call, pd_comm_create(comm, group, newcomm, &fail),
                      &fail);
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                           MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create_group";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_intra(comm, call, "comm"));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    PD_CHECK(pd_check_subgroup(comm, call, group));
    if (tag < 0)
        return pd_raise(comm, call, MPI_ERR_TAG, "tag %d is negative", tag);
    struct pd_fail fail;
    return pd_created(comm, call,
                      pd_comm_create_group(comm, group, tag, newcomm, &fail),
                      &fail);
}

/* MPI_Comm_free's checks, each naming call. */
static int pd_check_freeable(const char *call, MPI_Comm *comm)
{
    if (comm == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "comm is NULL");
    PD_CHECK(pd_check_comm(*comm, call));
    if (pd_comm_is_predefined(*comm))
        return pd_raise(*comm, call, MPI_ERR_COMM,
                        "%s is predefined and cannot be freed or "
                        "disconnected", (*comm)->name);
    return MPI_SUCCESS;
}

/* Let go of *comm: its attributes first, whose delete callbacks see it
 * whole; the communicator itself once its requests are (MPI 6.4.3). */
static int pd_comm_let_go(const char *call, MPI_Comm *comm)
{
    if (pd_attr_delete_all(PD_ATTR_COMM, *comm) != 0)
        return pd_raise(*comm, call, MPI_ERR_OTHER,
                        "an attribute's delete callback failed");
    pd_comm_free_when_idle(*comm);
    *comm = MPI_COMM_NULL;
    pd_comm_release_freed(false);
    return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char call[] = "MPI_Comm_free";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_freeable(call, comm));
    return pd_comm_let_go(call, comm);
}

/*
 * Collective: once every member is here no message on comm is yet to be
 * sent, so what is pending only completes, as after MPI_Comm_free. No
 * process is ever connected to another job (no spawn, no ports), so
 * nothing else is there to disconnect.
 */
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    static const char call[] = "MPI_Comm_disconnect";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_freeable(call, comm));
    PD_CHECK(pd_api_barrier(call, *comm));
    return pd_comm_let_go(call, comm);
}

/* Every process here was started by a launcher, none spawned. */
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    static const char call[] = "MPI_Comm_get_parent";
    PD_CHECK(pd_check_active(call));
    if (parent == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "parent is NULL");
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static bool pd_same_members(MPI_Group a, MPI_Group b, bool ordered)
{
    if (a->size != b->size)
        return false;
    for (int i = 0; i < a->size; i++) {
        if (ordered ? a->members[i] != b->members[i]
                    : pd_group_rank_of(b, a->members[i]) == MPI_UNDEFINED)
            return false;
    }
    return true;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char call[] = "MPI_Comm_compare";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm1, call));
    PD_CHECK(pd_check_comm(comm2, call));
    if (result == NULL)
        return pd_raise(comm1, call, MPI_ERR_ARG, "result is NULL");
    MPI_Group g1 = comm1->state->group, g2 = comm2->state->group;
    /* Intercommunicators compare their remote groups too; an intra- and
     * an intercommunicator are unequal. */
    const struct pd_inter *i1 = comm1->state->inter, *i2 = comm2->state->inter;
    bool same_kind = (i1 == NULL) == (i2 == NULL);
    if (comm1 == comm2)
        *result = MPI_IDENT;
    else if (same_kind && pd_same_members(g1, g2, true) &&
             (i1 == NULL || pd_same_members(i1->remote, i2->remote, true)))
        *result = MPI_CONGRUENT;
    else if (same_kind && pd_same_members(g1, g2, false) &&
             (i1 == NULL || pd_same_members(i1->remote, i2->remote, false)))
        *result = MPI_SIMILAR;
    else
        *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    static const char call[] = "MPI_Comm_group";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (group == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "group is NULL");
    pd_group_retain(comm->state->group);
    *group = comm->state->group;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    static const char call[] = "MPI_Comm_set_name";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (comm_name == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "comm_name is NULL");
    snprintf(comm->name, sizeof(comm->name), "%s", comm_name);
    return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    static const char call[] = "MPI_Comm_get_name";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (comm_name == NULL || resultlen == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        comm_name == NULL ? "comm_name" : "resultlen");
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    static const char call[] = "MPI_Comm_test_inter";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (flag == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "flag is NULL");
    *flag = pd_comm_is_inter(comm);
    return MPI_SUCCESS;
}

/* The calls that take an intercommunicator alone. */
static int pd_check_inter(MPI_Comm comm, const char *call, const void *out)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (out == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "the output argument is NULL");
    if (!pd_comm_is_inter(comm))
        return pd_raise(comm, call, MPI_ERR_COMM, "%s is an "
                        "intracommunicator (%s takes an intercommunicator)",
                        pd_comm_label(comm), call);
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    PD_CHECK(pd_check_inter(comm, "MPI_Comm_remote_size", size));
    *size = comm->state->inter->remote->size;
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    PD_CHECK(pd_check_inter(comm, "MPI_Comm_remote_group", group));
    pd_group_retain(comm->state->inter->remote);
    *group = comm->state->inter->remote;
    return MPI_SUCCESS;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char call[] = "MPI_Intercomm_merge";
    PD_CHECK(pd_check_inter(intercomm, call, newintracomm));
    struct pd_fail fail;
    return pd_created(intercomm, call,
                      pd_intercomm_merge(intercomm, high != 0, newintracomm,
                                         &fail), &fail);
}

/* local_comm's ranks each pass local_leader alike; the leader alone
 * names peer_comm, the remote leader in it and the tag its messages to
 * that leader go under. */
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                          MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
    static const char call[] = "MPI_Intercomm_create";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(local_comm, call));
    PD_CHECK(pd_check_intra(local_comm, call, "local_comm"));
    PD_CHECK(pd_check_newcomm(local_comm, call, newintercomm));
    if (local_leader < 0 || local_leader >= local_comm->size)
        return pd_raise(local_comm, call, MPI_ERR_RANK, "local_leader %d is "
                        "not a rank of local_comm (size %d)", local_leader,
                        local_comm->size);
    if (local_comm->rank == local_leader) {
        PD_CHECK(pd_check_comm(peer_comm, call));
        PD_CHECK(pd_check_intra(peer_comm, call, "peer_comm"));
        if (remote_leader < 0 || remote_leader >= peer_comm->size)
            return pd_raise(local_comm, call, MPI_ERR_RANK, "remote_leader "
                            "%d is not a rank of peer_comm (size %d)",
                            remote_leader, peer_comm->size);
        if (remote_leader == peer_comm->rank)
            return pd_raise(local_comm, call, MPI_ERR_RANK, "remote_leader "
                            "%d is this rank, the local leader: the remote "
                            "group's leader must be another", remote_leader);
        PD_CHECK(pd_check_tag(local_comm, call, tag, false));
    }
    struct pd_fail fail;
    return pd_created(local_comm, call,
                      pd_intercomm_create(local_comm, local_leader, peer_comm,
                                          remote_leader, tag, newintercomm,
                                          &fail), &fail);
}
