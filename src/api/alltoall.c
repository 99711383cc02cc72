/* Alltoall and its v- and w-forms, blocking and nonblocking. */
#include <limits.h>
#include <stdlib.h>

#include "api/coll_args.h"

#pragma weak MPI_Alltoall = PMPI_Alltoall
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
#pragma weak MPI_Alltoallw = PMPI_Alltoallw

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

/* counts[i] items of types[i] as bytes in *bytes (a new array); the
 * datatypes checked, a block past INT_MAX bytes refused. */
static int pd_block_bytes(MPI_Comm comm, const char *call, const int *counts,
                          const MPI_Datatype *types, const char *what,
                          int **bytes)
{
    if (types == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL", what);
    for (int i = 0; i < comm->size; i++)
        PD_CHECK(pd_check_data_type(comm, call, types[i], what));
    if ((*bytes = malloc((size_t)comm->size * sizeof(int))) == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < comm->size; i++) {
        size_t n = (size_t)counts[i] * pd_type_extent(types[i]);
        if (n > INT_MAX) {
            free(*bytes);
            return pd_raise(comm, call, MPI_ERR_COUNT, "block %d of %s is "
                            "%zu bytes, more than an int counts", i, what, n);
        }
        (*bytes)[i] = (int)n;
    }
    return MPI_SUCCESS;
}

/* Every block has a datatype of its own and a displacement in bytes: as
 * an alltoallv of bytes. */
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char call[] = "MPI_Alltoallw";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    PD_CHECK(pd_check_displs(comm, call, rdispls, "rdispls"));
    int *rbytes = NULL, *sbytes = NULL;
    PD_CHECK(pd_block_bytes(comm, call, recvcounts, recvtypes, "recvtypes",
                            &rbytes));
    int rc = MPI_SUCCESS;
    if (!in_place &&
        ((rc = pd_check_counts(comm, call, sendcounts, comm->size,
                               "sendcounts")) != MPI_SUCCESS ||
         (rc = pd_check_displs(comm, call, sdispls, "sdispls")) !=
             MPI_SUCCESS ||
         (rc = pd_block_bytes(comm, call, sendcounts, sendtypes, "sendtypes",
                              &sbytes)) != MPI_SUCCESS ||
         (rc = pd_check_same_bytes(comm, call, (size_t)sbytes[comm->rank],
                                   (size_t)rbytes[comm->rank], comm->rank)) !=
             MPI_SUCCESS)) {
        free(rbytes);
        free(sbytes);
        return rc;
    }
    struct pd_layout recv = { rbytes, rdispls, 1 };
    struct pd_layout send = in_place ? recv
                                     : (struct pd_layout){ sbytes, sdispls, 1 };
    size_t received = 0;
    for (int i = 0; i < comm->size; i++)
        received += (size_t)rbytes[i];
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = in_place ? NULL : sendbuf,
                         .recvbuf = recvbuf, .send = send, .recv = recv,
                         .root = -1,
                         .signature = pd_type_signature(MPI_BYTE) };
    rc = pd_api_coll(call, &c, &(struct pd_agree){
        NULL, PD_CALL_ANY_BYTES, received }, NULL);
    free(rbytes);
    free(sbytes);
    return rc;
}
