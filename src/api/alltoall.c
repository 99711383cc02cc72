#include "api/coll_args.h"

#pragma weak MPI_Alltoall = PMPI_Alltoall
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm)
{
    static const char call[] = "MPI_Alltoall";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    size_t bytes;
    PD_CHECK(pd_check_blocks(comm, call, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, &bytes));
    /* Equal block sizes both ways: one layout serves send and receive. */
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = in_place ? NULL : sendbuf,
                         .recvbuf = recvbuf, .send = { NULL, NULL, bytes },
                         .recv = { NULL, NULL, bytes }, .root = -1,
                         .signature = pd_type_signature(
                             in_place ? recvtype : sendtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        NULL, bytes, bytes * (size_t)comm->size }, NULL);
}

/* MPI_Alltoallv, and with request MPI_Ialltoallv. */
static int pd_alltoallv(const char *call, const void *sendbuf,
                        const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Request *request)
{
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    PD_CHECK(pd_check_displs(comm, call, rdispls, "rdispls"));
    PD_CHECK(pd_check_data_type(comm, call, recvtype, "recvtype"));
    struct pd_layout recv = { recvcounts, rdispls, pd_type_extent(recvtype) };
    struct pd_layout send = recv;
    if (!in_place) {
        PD_CHECK(pd_check_counts(comm, call, sendcounts, comm->size, "sendcounts"));
        PD_CHECK(pd_check_displs(comm, call, sdispls, "sdispls"));
        PD_CHECK(pd_check_data_type(comm, call, sendtype, "sendtype"));
        send = (struct pd_layout){ sendcounts, sdispls, pd_type_extent(sendtype) };
        /* Only this rank's own block can be compared locally. */
        PD_CHECK(pd_check_same_bytes(
            comm, call, (size_t)sendcounts[comm->rank] * send.extent,
            (size_t)recvcounts[comm->rank] * recv.extent, comm->rank));
    }
    size_t received = 0;
    for (int i = 0; i < comm->size; i++)
        received += (size_t)recvcounts[i] * recv.extent;
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = in_place ? NULL : sendbuf,
                         .recvbuf = recvbuf, .send = send, .recv = recv,
                         .root = -1, .signature = pd_type_signature(recvtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        NULL, PD_CALL_ANY_BYTES, received }, request);
}

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    return pd_alltoallv("MPI_Alltoallv", sendbuf, sendcounts, sdispls,
                        sendtype, recvbuf, recvcounts, rdispls, recvtype,
                        comm, NULL);
}

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[],
                    const int sdispls[], MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Ialltoallv", request));
    return pd_alltoallv("MPI_Ialltoallv", sendbuf, sendcounts, sdispls,
                        sendtype, recvbuf, recvcounts, rdispls, recvtype,
                        comm, request);
}
