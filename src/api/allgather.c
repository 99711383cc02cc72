#include "api/coll_args.h"

#pragma weak MPI_Allgather = PMPI_Allgather
#pragma weak MPI_Allgatherv = PMPI_Allgatherv

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    static const char call[] = "MPI_Allgather";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    size_t bytes;
    PD_CHECK(pd_check_blocks(comm, call, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, &bytes));

    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, NULL, NULL, -1, bytes }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_ALLGATHER, bytes);
    int rc = pd_coll_allgather(comm, pd_comm_reserve_tags(comm),
                          in_place ? NULL : sendbuf, recvbuf, bytes,
                          &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char call[] = "MPI_Allgatherv";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    PD_CHECK(pd_check_displs(comm, call, displs, "displs"));
    PD_CHECK(pd_check_data_type(comm, call, recvtype, "recvtype"));
    size_t extent = pd_type_extent(recvtype);
    if (!in_place) {
        PD_CHECK(pd_check_side(comm, call, sendbuf,
                               sendcount, sendtype, PD_SIDE_SEND));
        PD_CHECK(pd_check_same_bytes(comm, call,
                                     (size_t)sendcount * pd_type_extent(sendtype),
                                     (size_t)recvcounts[comm->rank] * extent,
                                     comm->rank));
    }
    struct pd_layout recv = { recvcounts, displs, extent };
    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, recvtype, NULL, -1, PD_CALL_ANY_BYTES }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_ALLGATHERV, (size_t)recvcounts[comm->rank] * extent);
    int rc = pd_coll_allgatherv(comm, pd_comm_reserve_tags(comm),
                           in_place ? NULL : sendbuf, recvbuf, &recv,
                           &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}
