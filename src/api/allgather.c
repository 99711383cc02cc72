#include "api/coll_args.h"
#include "api/intercoll.h"

#pragma weak MPI_Allgather = PMPI_Allgather
#pragma weak MPI_Allgatherv = PMPI_Allgatherv
#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    static const char call[] = "MPI_Allgather";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_allgather(call, sendbuf, sendcount, sendtype, recvbuf,
                                  recvcount, NULL, NULL, recvtype, comm,
                                  NULL);
    size_t bytes;
    PD_CHECK(pd_check_blocks(comm, call, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, &bytes));
    struct pd_coll c = { .kind = PD_COLL_ALLGATHER, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .count = bytes, .root = -1,
                         .signature = pd_type_signature(
                             in_place ? recvtype : sendtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        NULL, bytes, bytes, sendtype, recvtype, NULL }, NULL);
}

/* MPI_Allgatherv, and with request MPI_Iallgatherv. */
static int pd_allgatherv(const char *call, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *request)
{
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_allgather(call, sendbuf, sendcount, sendtype, recvbuf,
                                  0, recvcounts, displs, recvtype, comm,
                                  request);
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    PD_CHECK(pd_check_displs(comm, call, displs, "displs"));
    PD_CHECK(pd_check_data_type(comm, call, recvtype, "recvtype"));
    size_t extent = pd_type_packed(recvtype);
    if (!in_place) {
        PD_CHECK(pd_check_side(comm, call, sendbuf,
                               sendcount, sendtype, PD_SIDE_SEND));
        PD_CHECK(pd_check_same_bytes(comm, call,
                                     (size_t)sendcount * pd_type_packed(sendtype),
                                     (size_t)recvcounts[comm->rank] * extent,
                                     comm->rank));
    }
    struct pd_coll c = { .kind = PD_COLL_ALLGATHERV, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf),
                         .recv = { recvcounts, displs, extent }, .root = -1,
                         .signature = pd_type_signature(recvtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        recvtype, PD_CALL_ANY_BYTES,
        (size_t)recvcounts[comm->rank] * extent, sendtype, recvtype, NULL },
        request);
}

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm)
{
    return pd_allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype,
                         recvbuf, recvcounts, displs, recvtype, comm, NULL);
}

int PMPI_Iallgatherv(const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Iallgatherv", request));
    return pd_allgatherv("MPI_Iallgatherv", sendbuf, sendcount, sendtype,
                         recvbuf, recvcounts, displs, recvtype, comm,
                         request);
}
