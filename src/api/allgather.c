#include "api/api.h"

#pragma weak MPI_Allgather = PMPI_Allgather

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    static const char call[] = "MPI_Allgather";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, recvcount, "recvcount"));
    PD_CHECK(pd_check_type(comm, call, recvtype, "recvtype"));
    PD_CHECK(pd_check_buffer(comm, call, recvbuf, recvcount, "recvbuf"));
    size_t bytes = (size_t)recvcount * pd_type_extent(recvtype);
    if (!in_place) {
        PD_CHECK(pd_check_count(comm, call, sendcount, "sendcount"));
        PD_CHECK(pd_check_type(comm, call, sendtype, "sendtype"));
        PD_CHECK(pd_check_buffer(comm, call, sendbuf, sendcount, "sendbuf"));
        size_t send_bytes = (size_t)sendcount * pd_type_extent(sendtype);
        /* Type signatures must match: same bytes per rank both ways. */
        if (send_bytes != bytes)
            return pd_raise(comm, call, MPI_ERR_TRUNCATE,
                            "each rank sends %zu bytes (%d x %s) but receives "
                            "%zu bytes per rank (%d x %s)",
                            send_bytes, sendcount, pd_type_name(sendtype),
                            bytes, recvcount, pd_type_name(recvtype));
    }

    struct pd_fail fail;
    if (pd_coll_allgather(comm, in_place ? NULL : sendbuf, recvbuf, bytes,
                          &fail) != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}
