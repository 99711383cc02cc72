/* Alltoall and its v- and w-forms, blocking and nonblocking. */
#include <limits.h>
#include <stdlib.h>

#include "api/coll_args.h"
#include "api/intercoll.h"
#include "route/route.h"

#pragma weak MPI_Alltoall = PMPI_Alltoall
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm)
{
    static const char call[] = "MPI_Alltoall";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_alltoall(call, sendbuf, sendcount, NULL, NULL, NULL,
                                 sendtype, recvbuf, recvcount, NULL, NULL,
                                 NULL, recvtype, comm, NULL);
    size_t bytes;
    PD_CHECK(pd_check_blocks(comm, call, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, &bytes));
    /* Equal block sizes both ways: one layout serves send and receive. */
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .send = { NULL, NULL, bytes },
                         .recv = { NULL, NULL, bytes }, .root = -1,
                         .signature = pd_type_signature(
                             in_place ? recvtype : sendtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        NULL, bytes, bytes * (size_t)comm->size, sendtype, recvtype, NULL },
        NULL);
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
    if (pd_comm_is_inter(comm))
        return pd_inter_alltoall(call, sendbuf, 0, sendcounts, sdispls, NULL,
                                 sendtype, recvbuf, 0, recvcounts, rdispls,
                                 NULL, recvtype, comm, request);
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    PD_CHECK(pd_check_displs(comm, call, rdispls, "rdispls"));
    PD_CHECK(pd_check_data_type(comm, call, recvtype, "recvtype"));
    struct pd_layout recv = { recvcounts, rdispls, pd_type_packed(recvtype) };
    struct pd_layout send = recv;
    if (!in_place) {
        PD_CHECK(pd_check_counts(comm, call, sendcounts, comm->size, "sendcounts"));
        PD_CHECK(pd_check_displs(comm, call, sdispls, "sdispls"));
        PD_CHECK(pd_check_data_type(comm, call, sendtype, "sendtype"));
        send = (struct pd_layout){ sendcounts, sdispls, pd_type_packed(sendtype) };
        /* Only this rank's own block can be compared locally. */
        PD_CHECK(pd_check_same_bytes(
            comm, call, (size_t)sendcounts[comm->rank] * send.extent,
            (size_t)recvcounts[comm->rank] * recv.extent, comm->rank));
    }
    size_t received = 0;
    for (int i = 0; i < comm->size; i++)
        received += (size_t)recvcounts[i] * recv.extent;
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .send = send, .recv = recv,
                         .root = -1, .signature = pd_type_signature(recvtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        NULL, PD_CALL_ANY_BYTES, received, sendtype, recvtype, NULL },
        request);
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

/* counts[i] items of types[i] as packed bytes in *bytes (a new array);
 * the datatypes checked, a block past INT_MAX bytes refused. *plain:
 * whether every block's type is contiguous. */
static int pd_block_bytes(MPI_Comm comm, const char *call, const int *counts,
                          const MPI_Datatype *types, const char *what,
                          int **bytes, bool *plain)
{
    if (types == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL", what);
    for (int i = 0; i < comm->size; i++)
        PD_CHECK(pd_check_data_type(comm, call, types[i], what));
    if ((*bytes = malloc((size_t)comm->size * sizeof(int))) == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    *plain = true;
    for (int i = 0; i < comm->size; i++) {
        size_t n = (size_t)counts[i] * pd_type_packed(types[i]);
        if (n > INT_MAX) {
            free(*bytes);
            return pd_raise(comm, call, MPI_ERR_COUNT, "block %d of %s is "
                            "%zu bytes, more than an int counts", i, what, n);
        }
        (*bytes)[i] = (int)n;
        if (counts[i] > 0 && !types[i]->contiguous)
            *plain = false;
    }
    return MPI_SUCCESS;
}

/* One side of an alltoallw whose blocks are not all contiguous: every
 * block laid end to end at the offsets written to packed_displs (bytes),
 * in a stage added to *list; packed into its scratch buffer now unless
 * later (the call then moves it a piece at a time). */
static int pd_alltoallw_stage(MPI_Comm comm, const char *call, const void *buf,
                              const int *counts, const int *displs,
                              const MPI_Datatype *types, const int *bytes,
                              bool in, bool out, bool later,
                              int *packed_displs, struct pd_type_stage **list)
{
    struct pd_type_stage *st = pd_stage_new();
    if (st == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    st->next = *list;
    *list = st;
    size_t offset = 0;
    for (int i = 0; i < comm->size; i++) {
        if (offset > INT_MAX)
            return pd_raise(comm, call, MPI_ERR_COUNT, "the blocks pack to "
                            "more bytes than an int counts");
        packed_displs[i] = (int)offset;
        if (bytes[i] > 0 &&
            pd_stage_add(st, (char *)buf + displs[i], types[i],
                         (size_t)counts[i], offset, in, out) != 0)
            return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
        offset += (size_t)bytes[i];
    }
    if (!later && pd_stage_pack(st) != 0)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

/* Every block has a datatype of its own and a displacement in bytes: an
 * alltoallv of bytes, by way of packed copies where a type is not
 * contiguous. Request NULL: blocking. */
static int pd_alltoallw(const char *call, const void *sendbuf,
                        const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf,
                        const int recvcounts[], const int rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Request *request)
{
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_alltoall(call, sendbuf, 0, sendcounts, sdispls,
                                 sendtypes, NULL, recvbuf, 0, recvcounts,
                                 rdispls, recvtypes, NULL, comm, request);
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    PD_CHECK(pd_check_displs(comm, call, rdispls, "rdispls"));
    int *rbytes = NULL, *sbytes = NULL, *displs = NULL;
    bool rplain, splain = true;
    PD_CHECK(pd_block_bytes(comm, call, recvcounts, recvtypes, "recvtypes",
                            &rbytes, &rplain));
    int rc = MPI_SUCCESS;
    struct pd_type_stage *stage = NULL;
    if (!in_place &&
        ((rc = pd_check_counts(comm, call, sendcounts, comm->size,
                               "sendcounts")) != MPI_SUCCESS ||
         (rc = pd_check_displs(comm, call, sdispls, "sdispls")) !=
             MPI_SUCCESS ||
         (rc = pd_block_bytes(comm, call, sendcounts, sendtypes, "sendtypes",
                              &sbytes, &splain)) != MPI_SUCCESS ||
         (rc = pd_check_same_bytes(comm, call, (size_t)sbytes[comm->rank],
                                   (size_t)rbytes[comm->rank], comm->rank)) !=
             MPI_SUCCESS))
        goto out;
    struct pd_layout recv = { rbytes, rdispls, 1 };
    struct pd_layout send = in_place ? recv
                                     : (struct pd_layout){ sbytes, sdispls, 1 };
    const void *sdata = pd_coll_sendbuf(sendbuf);
    void *rdata = pd_coll_buf(recvbuf);
    struct pd_type_stage *recv_stage = NULL, *send_stage = NULL;
    /* Of host memory, the blocks are packed and unpacked by the call, a
     * piece at a time where it can (else it packs them whole). */
    bool later = !pd_route_is_device(rdata) &&
                 (in_place || !pd_route_is_device(sdata));
    if (!rplain || !splain) {
        int n = comm->size;
        if ((displs = malloc(2 * (size_t)n * sizeof(int))) == NULL) {
            rc = pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
            goto out;
        }
        if ((rc = pd_alltoallw_stage(comm, call, recvbuf, recvcounts, rdispls,
                                     recvtypes, rbytes, in_place, true, later,
                                     displs, &stage)) != MPI_SUCCESS)
            goto out;
        recv_stage = stage;
        recv.displs = displs;
        send = recv;
        if (!in_place) {
            if ((rc = pd_alltoallw_stage(comm, call, sendbuf, sendcounts,
                                         sdispls, sendtypes, sbytes, true,
                                         false, later, displs + n, &stage)) !=
                MPI_SUCCESS)
                goto out;
            send_stage = stage;
            send = (struct pd_layout){ sbytes, displs + n, 1 };
        }
        if (!later) {
            rdata = recv_stage->packed;
            if (send_stage != NULL)
                sdata = send_stage->packed;
            recv_stage = send_stage = NULL;
        }
    }
    size_t received = 0;
    for (int i = 0; i < comm->size; i++)
        received += (size_t)rbytes[i];
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = sdata, .recvbuf = rdata, .send = send,
                         .recv = recv, .root = -1,
                         .signature = pd_type_signature(MPI_BYTE),
                         .stage = recv_stage, .send_stage = send_stage };
    /* The request copies the layouts' arrays (api/coll_call.c). */
    rc = pd_api_coll(call, &c, &(struct pd_agree){
        .type = NULL, .bytes = PD_CALL_ANY_BYTES, .stat_bytes = received,
        .stage = stage }, request);
    stage = NULL;                   /* the call's now */
out:
    pd_stage_free(stage);
    free(displs);
    free(rbytes);
    free(sbytes);
    return rc;
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return pd_alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls,
                        sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                        comm, NULL);
}

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[],
                    const int sdispls[], const MPI_Datatype sendtypes[],
                    void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Ialltoallw", request));
    return pd_alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls,
                        sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                        comm, request);
}
