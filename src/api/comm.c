/* Communicators: queries, error handlers, creation and release. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "service/comm_create.h"
#include "service/request.h"
#include "core/attr.h"
#include "core/group.h"

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
#pragma weak MPI_Comm_size = PMPI_Comm_size
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler

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

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    static const char call[] = "MPI_Comm_set_errhandler";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (!pd_errhandler_is_usable(errhandler))
        return pd_raise(comm, call, MPI_ERR_ARG,
                        errhandler == MPI_ERRHANDLER_NULL
                            ? "errhandler is MPI_ERRHANDLER_NULL"
                            : "errhandler is not a valid error handler");
    __atomic_store_n(&comm->errhandler, errhandler, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    static const char call[] = "MPI_Comm_get_errhandler";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (errhandler == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "errhandler is NULL");
    *errhandler = __atomic_load_n(&comm->errhandler, __ATOMIC_ACQUIRE);
    return MPI_SUCCESS;
}

/* --- creating and freeing communicators ----------------------------- */

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
#pragma weak MPI_Comm_idup = PMPI_Comm_idup
#pragma weak MPI_Comm_split = PMPI_Comm_split
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
#pragma weak MPI_Comm_create = PMPI_Comm_create
#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
#pragma weak MPI_Comm_free = PMPI_Comm_free
#pragma weak MPI_Comm_compare = PMPI_Comm_compare
#pragma weak MPI_Comm_group = PMPI_Comm_group
#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge

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

/* The duplicate is made before this returns: on one host that needs no
 * other rank; where the communicator's messages cross hosts it waits for
 * the members to form its connections, as MPI_Comm_dup does. The request
 * is born complete. */
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    static const char call[] = "MPI_Comm_idup";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    PD_CHECK(pd_check_request_out(comm, call, request));
    struct pd_fail fail;
    PD_CHECK(pd_created(comm, call, pd_comm_dup(comm, newcomm, &fail),
                        &fail));
    if ((*request = pd_request_new_done(comm, call)) == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
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
    return pd_created(comm, call, pd_comm_create(comm, group, newcomm, &fail),
                      &fail);
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                           MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create_group";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_newcomm(comm, call, newcomm));
    PD_CHECK(pd_check_subgroup(comm, call, group));
    if (tag < 0)
        return pd_raise(comm, call, MPI_ERR_TAG, "tag %d is negative", tag);
    struct pd_fail fail;
    return pd_created(comm, call,
                      pd_comm_create_group(comm, group, tag, newcomm, &fail),
                      &fail);
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char call[] = "MPI_Comm_free";
    PD_CHECK(pd_check_active(call));
    if (comm == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "comm is NULL");
    PD_CHECK(pd_check_comm(*comm, call));
    if (pd_comm_is_predefined(*comm))
        return pd_raise(*comm, call, MPI_ERR_COMM,
                        "%s is predefined and cannot be freed", (*comm)->name);
    /* Attributes go first: their delete callbacks see a live comm. */
    if (pd_attr_delete_all(PD_ATTR_COMM, *comm) != 0)
        return pd_raise(*comm, call, MPI_ERR_OTHER,
                        "an attribute's delete callback failed");
    pd_comm_free(*comm);
    *comm = MPI_COMM_NULL;
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
    if (comm1 == comm2)
        *result = MPI_IDENT;
    else if (pd_same_members(g1, g2, true))
        *result = MPI_CONGRUENT;
    else if (pd_same_members(g1, g2, false))
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

/* pdmpi has no intercommunicators. */
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    static const char call[] = "MPI_Comm_test_inter";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (flag == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "flag is NULL");
    *flag = 0;
    return MPI_SUCCESS;
}

/* Calls on intercommunicators. pdmpi makes none (MPI_Intercomm_create
 * is not provided), so every communicator these are given is an
 * intracommunicator or none at all: MPI_ERR_COMM either way. */
static int pd_not_inter(MPI_Comm comm, const char *call, const void *out)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (out == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "the output argument is NULL");
    return pd_raise(comm, call, MPI_ERR_COMM, "%s is an intracommunicator "
                    "(pdmpi makes no intercommunicators)",
                    pd_comm_label(comm));
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    return pd_not_inter(comm, "MPI_Comm_remote_size", size);
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    return pd_not_inter(comm, "MPI_Comm_remote_group", group);
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    (void)high;
    return pd_not_inter(intercomm, "MPI_Intercomm_merge", newintracomm);
}
