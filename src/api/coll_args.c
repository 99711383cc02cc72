#include "api/coll_args.h"

int pd_check_side(MPI_Comm comm, const char *call, const void *buf, int count,
                  MPI_Datatype type, enum pd_side side)
{
    /* Names picked, not printed: this runs on every call. */
    static const char *const names[3][3] = {
        [PD_SIDE_SEND] = { "sendcount", "sendtype", "sendbuf" },
        [PD_SIDE_RECV] = { "recvcount", "recvtype", "recvbuf" },
        [PD_SIDE_ONE] = { "count", "type", "buf" },
    };
    PD_CHECK(pd_check_count(comm, call, count, names[side][0]));
    PD_CHECK(pd_check_data_type(comm, call, type, names[side][1]));
    return pd_check_buffer(comm, call, buf, count, type, names[side][2]);
}

int pd_check_same_bytes(MPI_Comm comm, const char *call, size_t sent,
                        size_t expected, int peer)
{
    if (sent == expected)
        return MPI_SUCCESS;
    return pd_raise(comm, call, MPI_ERR_TRUNCATE,
                    "the type signatures do not match: %zu bytes sent for "
                    "rank %d's block but %zu expected", sent, peer, expected);
}

int pd_check_blocks(MPI_Comm comm, const char *call, const void *sendbuf,
                    int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, size_t *bytes)
{
    PD_CHECK(pd_check_side(comm, call, recvbuf,
                           recvcount, recvtype, PD_SIDE_RECV));
    *bytes = (size_t)recvcount * pd_type_packed(recvtype);
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    PD_CHECK(pd_check_side(comm, call, sendbuf,
                           sendcount, sendtype, PD_SIDE_SEND));
    return pd_check_same_bytes(comm, call,
                               (size_t)sendcount * pd_type_packed(sendtype),
                               *bytes, comm->rank);
}

int pd_check_in_place_at_root(MPI_Comm comm, const char *call, const void *buf,
                              int root, const char *what)
{
    if (buf == MPI_IN_PLACE && comm->rank != root)
        return pd_raise(comm, call, MPI_ERR_BUFFER,
                        "%s is MPI_IN_PLACE on rank %d, which is not the root (%d)",
                        what, comm->rank, root);
    return MPI_SUCCESS;
}

/* Passing one buffer as both send and receive buffer is erroneous: the
 * caller means MPI_IN_PLACE. */
static int pd_check_not_aliased(MPI_Comm comm, const char *call,
                                const void *sendbuf, const void *recvbuf,
                                int count)
{
    if (sendbuf == recvbuf && count > 0)
        return pd_raise(comm, call, MPI_ERR_BUFFER,
                        "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

int pd_check_allreduce_args(MPI_Comm comm, const char *call,
                            const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype type, MPI_Op op)
{
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, type, "datatype"));
    PD_CHECK(pd_check_op(comm, call, type, op));
    PD_CHECK(pd_check_buffer(comm, call, recvbuf, count, type, "recvbuf"));
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    PD_CHECK(pd_check_buffer(comm, call, sendbuf, count, type, "sendbuf"));
    return pd_check_not_aliased(comm, call, sendbuf, recvbuf, count);
}

int pd_check_reduce_args(MPI_Comm comm, const char *call, const void *sendbuf,
                         void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root)
{
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, type, "datatype"));
    PD_CHECK(pd_check_op(comm, call, type, op));
    PD_CHECK(pd_check_root(comm, call, root));
    bool is_root = comm->rank == root;
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_in_place_at_root(comm, call, sendbuf, root, "sendbuf"));
    if (!in_place)
        PD_CHECK(pd_check_buffer(comm, call, sendbuf, count, type, "sendbuf"));
    if (!is_root)
        return MPI_SUCCESS;
    PD_CHECK(pd_check_buffer(comm, call, recvbuf, count, type, "recvbuf"));
    return in_place ? MPI_SUCCESS
                    : pd_check_not_aliased(comm, call, sendbuf, recvbuf, count);
}
