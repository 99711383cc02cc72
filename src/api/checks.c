/* The argument checks of api.h. */
#include <stdint.h>

#include "api/api.h"
#include "service/intercomm.h"
#include "service/request.h"

const char pd_bottom;

int pd_check_active(const char *call)
{
    if (pd_runtime_state() != PD_RT_ACTIVE)
        return pd_raise_inactive(call);
    return MPI_SUCCESS;
}

int pd_check_comm(MPI_Comm comm, const char *call)
{
    if (comm == MPI_COMM_NULL)
        return pd_raise(comm, call, MPI_ERR_COMM,
                        "the communicator is MPI_COMM_NULL");
    if (!pd_comm_is_usable(comm))
        return pd_raise(comm, call, MPI_ERR_COMM,
                        "%p is not a valid communicator handle", (void *)comm);
    return MPI_SUCCESS;
}

int pd_check_count(MPI_Comm comm, const char *call, int count,
                   const char *what)
{
    if (count < 0)
        return pd_raise(comm, call, MPI_ERR_COUNT, "%s is negative (%d)",
                        what, count);
    return MPI_SUCCESS;
}

int pd_check_type(MPI_Comm comm, const char *call, MPI_Datatype type,
                  const char *what)
{
    if (type == MPI_DATATYPE_NULL)
        return pd_raise(comm, call, MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL",
                        what);
    if (!pd_type_is_valid(type))
        return pd_raise(comm, call, MPI_ERR_TYPE,
                        "%s (%p) is not a valid datatype handle", what,
                        (void *)type);
    return MPI_SUCCESS;
}

int pd_check_buffer(MPI_Comm comm, const char *call, const void *buf,
                    int count, MPI_Datatype type, const char *what)
{
    if (buf == MPI_IN_PLACE)
        return pd_raise(comm, call, MPI_ERR_BUFFER,
                        "%s may not be MPI_IN_PLACE here", what);
    /* MPI_BOTTOM is NULL too: it may come only with a type whose
     * displacements are addresses, which a contiguous one never is. */
    if (buf == NULL && count > 0 && type->contiguous && type->size > 0)
        return pd_raise(comm, call, MPI_ERR_BUFFER,
                        "%s is NULL but count is %d (MPI_BOTTOM, which is "
                        "NULL, takes only a datatype of absolute addresses, "
                        "and %s is not one)", what, count, pd_type_name(type));
    ptrdiff_t bytes;
    if (count > 0 && __builtin_mul_overflow((ptrdiff_t)count,
                                            pd_type_extent(type), &bytes))
        return pd_raise(comm, call, MPI_ERR_COUNT,
                        "%s: %d items of %s (%td bytes each) exceed the "
                        "address space", what, count, pd_type_name(type),
                        pd_type_extent(type));
    return MPI_SUCCESS;
}

int pd_check_root(MPI_Comm comm, const char *call, int root)
{
    if (root < 0 || root >= comm->size)
        return pd_raise(comm, call, MPI_ERR_ROOT,
                        "root %d is not a rank of %s (size %d)", root,
                        comm->name, comm->size);
    return MPI_SUCCESS;
}

int pd_check_op(MPI_Comm comm, const char *call, MPI_Datatype type, MPI_Op op)
{
    if (op == MPI_OP_NULL)
        return pd_raise(comm, call, MPI_ERR_OP, "op is MPI_OP_NULL");
    if (!pd_op_is_valid(op))
        return pd_raise(comm, call, MPI_ERR_OP,
                        "%p is not a valid op handle", (void *)op);
    struct pd_reduction red;
    if (!pd_op_reduction(op, type, &red))
        return pd_raise(comm, call, MPI_ERR_OP,
                        "%s is not defined on datatype %s", pd_op_name(op),
                        pd_type_name(type));
    return MPI_SUCCESS;
}

int pd_check_data_type(MPI_Comm comm, const char *call, MPI_Datatype type,
                       const char *what)
{
    PD_CHECK(pd_check_type(comm, call, type, what));
    if (!type->committed)
        return pd_raise(comm, call, MPI_ERR_TYPE,
                        "%s (%s) is not committed (call MPI_Type_commit)",
                        what, type->name[0] ? type->name : "a derived type");
    return MPI_SUCCESS;
}

int pd_check_counts(MPI_Comm comm, const char *call, const int *counts,
                    int n, const char *what)
{
    if (counts == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return pd_raise(comm, call, MPI_ERR_COUNT,
                            "%s[%d] is negative (%d)", what, i, counts[i]);
    return MPI_SUCCESS;
}

int pd_check_displs(MPI_Comm comm, const char *call, const int *displs,
                    const char *what)
{
    if (displs == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL", what);
    return MPI_SUCCESS;
}

bool pd_info_is_valid(MPI_Info info)
{
    return info != NULL && info->magic == PD_MAGIC_INFO;
}

int pd_check_request(MPI_Comm comm, const char *call, MPI_Request req)
{
    if (!pd_request_is_valid(req))
        return pd_raise(comm, call, MPI_ERR_REQUEST,
                        "%p is not a valid request handle", (void *)req);
    return MPI_SUCCESS;
}

int pd_check_live_request(const char *call, const MPI_Request *request)
{
    if (request == NULL)
        return pd_raise(NULL, call, MPI_ERR_REQUEST, "request is NULL");
    PD_CHECK(pd_check_request(NULL, call, *request));
    if (pd_request_is_null(*request))
        return pd_raise(NULL, call, MPI_ERR_REQUEST,
                        "request is MPI_REQUEST_NULL");
    return MPI_SUCCESS;
}

int pd_raise_fail(MPI_Comm comm, const char *call, const struct pd_fail *fail)
{
    return pd_raise(comm, call, fail->errclass, "%s", fail->msg);
}

const char *pd_comm_label(MPI_Comm comm)
{
    return comm->name[0] ? comm->name : "the communicator";
}

int pd_check_intra(MPI_Comm comm, const char *call, const char *what)
{
    if (pd_comm_is_inter(comm))
        return pd_raise(comm, call, MPI_ERR_COMM, "%s (%s) is an "
                        "intercommunicator, and pdmpi's %s takes an "
                        "intracommunicator", what, pd_comm_label(comm), call);
    return MPI_SUCCESS;
}

int pd_check_peer(MPI_Comm comm, const char *call, int rank, bool any_ok,
                  const char *what)
{
    if (rank == MPI_PROC_NULL || (any_ok && rank == MPI_ANY_SOURCE))
        return MPI_SUCCESS;
    /* On an intercommunicator, peers are ranks of the remote group. */
    const struct pd_inter *in = comm->state->inter;
    int size = in != NULL ? in->remote->size : comm->size;
    if (rank < 0 || rank >= size)
        return pd_raise(comm, call, MPI_ERR_RANK,
                        "%s %d is not a rank of %s%s (size %d)", what, rank,
                        in != NULL ? "the remote group of " : "",
                        pd_comm_label(comm), size);
    return MPI_SUCCESS;
}

int pd_check_tag(MPI_Comm comm, const char *call, int tag, bool any_ok)
{
    if (any_ok && tag == MPI_ANY_TAG)
        return MPI_SUCCESS;
    if (tag < 0)
        return pd_raise(comm, call, MPI_ERR_TAG,
                        "tag %d is negative%s", tag,
                        any_ok ? " and not MPI_ANY_TAG" : "");
    if (tag > PD_TAG_UB)
        return pd_raise(comm, call, MPI_ERR_TAG, "tag %d is larger than "
                        "MPI_TAG_UB (%d)", tag, PD_TAG_UB);
    return MPI_SUCCESS;
}

/* Every argument of a send or receive fine, in one look: the common
 * case skips the checks one by one, which name what is wrong. A derived
 * type takes the long way (its extent may overflow). */
static bool pd_p2p_args_fine(MPI_Comm comm, const void *buf, int count,
                             MPI_Datatype type, int peer, int tag,
                             bool any_ok)
{
    if (!pd_comm_is_usable(comm) || comm->state->inter != NULL || count < 0 ||
        !pd_type_is_valid(type) || !pd_type_is_predefined(type) ||
        buf == MPI_IN_PLACE || (buf == NULL && count > 0))
        return false;
    bool peer_fine = (peer >= 0 && peer < comm->size) ||
                     peer == MPI_PROC_NULL ||
                     (any_ok && peer == MPI_ANY_SOURCE);
    bool tag_fine = (tag >= 0 && tag <= PD_TAG_UB) ||
                    (any_ok && tag == MPI_ANY_TAG);
    return peer_fine && tag_fine;
}

int pd_check_send(MPI_Comm comm, const char *call, const void *buf, int count,
                  MPI_Datatype type, int dest, int tag)
{
    if (pd_p2p_args_fine(comm, buf, count, type, dest, tag, false))
        return MPI_SUCCESS;
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, type, "datatype"));
    PD_CHECK(pd_check_buffer(comm, call, buf, count, type, "buf"));
    PD_CHECK(pd_check_peer(comm, call, dest, false, "dest"));
    return pd_check_tag(comm, call, tag, false);
}

int pd_check_request_out(MPI_Comm comm, const char *call,
                         MPI_Request *request)
{
    if (request == NULL)
        return pd_raise(comm, call, MPI_ERR_REQUEST, "request is NULL");
    return MPI_SUCCESS;
}

int pd_check_recv(MPI_Comm comm, const char *call, void *buf, int count,
                  MPI_Datatype type, int source, int tag)
{
    if (pd_p2p_args_fine(comm, buf, count, type, source, tag, true))
        return MPI_SUCCESS;
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, type, "datatype"));
    PD_CHECK(pd_check_buffer(comm, call, buf, count, type, "buf"));
    PD_CHECK(pd_check_peer(comm, call, source, true, "source"));
    return pd_check_tag(comm, call, tag, true);
}
