#include "api/api.h"

#pragma weak MPI_Reduce = PMPI_Reduce

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, datatype, "datatype"));
    PD_CHECK(pd_check_op(comm, call, datatype, op));
    PD_CHECK(pd_check_root(comm, call, root));
    bool is_root = comm->rank == root;
    if (in_place && !is_root)
        return pd_raise(comm, call, MPI_ERR_BUFFER,
                        "sendbuf is MPI_IN_PLACE on rank %d, which is not the root (%d)",
                        comm->rank, root);
    if (!in_place)
        PD_CHECK(pd_check_buffer(comm, call, sendbuf, count, "sendbuf"));
    if (is_root) {
        PD_CHECK(pd_check_buffer(comm, call, recvbuf, count, "recvbuf"));
        if (!in_place && sendbuf == recvbuf && count > 0)
            return pd_raise(comm, call, MPI_ERR_BUFFER,
                            "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
    }

    struct pd_fail fail;
    if (pd_coll_reduce(comm, pd_comm_reserve_tags(comm),
                       in_place ? NULL : sendbuf, is_root ? recvbuf : NULL,
                       (size_t)count, datatype, op, root, &fail) != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}
