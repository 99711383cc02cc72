/* Gather and scatter, fixed-size and v-variants, blocking and
 * nonblocking (a request: queued on the communicator's progress thread;
 * the ranks' byte counts are then compared where the call runs). */
#include "api/coll_args.h"
#include "api/intercoll.h"

#pragma weak MPI_Gather = PMPI_Gather
#pragma weak MPI_Gatherv = PMPI_Gatherv
#pragma weak MPI_Scatter = PMPI_Scatter
#pragma weak MPI_Scatterv = PMPI_Scatterv
#pragma weak MPI_Igather = PMPI_Igather
#pragma weak MPI_Igatherv = PMPI_Igatherv
#pragma weak MPI_Iscatter = PMPI_Iscatter
#pragma weak MPI_Iscatterv = PMPI_Iscatterv

/* The non-root side of a gather (what it sends), or the root's own block
 * when it does not gather in place. */
static int pd_check_gather_send(MPI_Comm comm, const char *call,
                                const void *sendbuf, int sendcount,
                                MPI_Datatype sendtype, size_t *bytes)
{
    PD_CHECK(pd_check_side(comm, call, sendbuf,
                           sendcount, sendtype, PD_SIDE_SEND));
    *bytes = (size_t)sendcount * pd_type_packed(sendtype);
    return MPI_SUCCESS;
}

/* recvtype: significant at the root only. */
static int pd_gather(const char *call, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf,
                     const struct pd_layout *recv, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Request *request)
{
    bool is_root = comm->rank == root;
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_in_place_at_root(comm, call, sendbuf, root, "sendbuf"));
    size_t send_bytes = 0;
    if (!in_place)
        PD_CHECK(pd_check_gather_send(comm, call, sendbuf, sendcount, sendtype,
                                      &send_bytes));
    if (is_root && !in_place) {
        int mine = recv->counts != NULL ? recv->counts[root] : 1;
        PD_CHECK(pd_check_same_bytes(comm, call, send_bytes,
                                     (size_t)mine * recv->extent, root));
    }
    struct pd_coll c = { .kind = PD_COLL_GATHERV, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = is_root ? pd_coll_buf(recvbuf) : NULL,
                         .count = send_bytes, .recv = *recv, .root = root,
                         .signature = pd_type_signature(
                             in_place ? recvtype : sendtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        NULL, PD_CALL_ANY_BYTES, send_bytes, sendtype, recvtype, NULL },
        request);
}

static int pd_gather_fixed(const char *call, const void *sendbuf,
                           int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_gather(call, sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, NULL, NULL, recvtype, root, comm,
                               request);
    PD_CHECK(pd_check_root(comm, call, root));
    struct pd_layout recv = { NULL, NULL, 0 };
    if (comm->rank == root) {
        PD_CHECK(pd_check_side(comm, call, recvbuf,
                               recvcount, recvtype, PD_SIDE_RECV));
        recv.extent = (size_t)recvcount * pd_type_packed(recvtype);
    }
    return pd_gather(call, sendbuf, sendcount, sendtype, recvbuf, &recv,
                     recvtype, root, comm, request);
}

static int pd_gather_v(const char *call, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm,
                       MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_gather(call, sendbuf, sendcount, sendtype, recvbuf, 0,
                               recvcounts, displs, recvtype, root, comm,
                               request);
    PD_CHECK(pd_check_root(comm, call, root));
    struct pd_layout recv = { recvcounts, displs, 0 };
    if (comm->rank == root) {
        PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
        PD_CHECK(pd_check_displs(comm, call, displs, "displs"));
        PD_CHECK(pd_check_data_type(comm, call, recvtype, "recvtype"));
        recv.extent = pd_type_packed(recvtype);
    }
    return pd_gather(call, sendbuf, sendcount, sendtype, recvbuf, &recv,
                     recvtype, root, comm, request);
}

/* sendtype: significant at the root only. */
static int pd_scatter(const char *call, const void *sendbuf,
                      const struct pd_layout *send, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Request *request)
{
    bool is_root = comm->rank == root;
    bool in_place = recvbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_in_place_at_root(comm, call, recvbuf, root, "recvbuf"));
    size_t recv_bytes = 0;
    if (!in_place) {
        PD_CHECK(pd_check_side(comm, call, recvbuf,
                               recvcount, recvtype, PD_SIDE_RECV));
        recv_bytes = (size_t)recvcount * pd_type_packed(recvtype);
    }
    if (is_root && !in_place) {
        int mine = send->counts != NULL ? send->counts[root] : 1;
        PD_CHECK(pd_check_same_bytes(comm, call, (size_t)mine * send->extent,
                                     recv_bytes, root));
    }
    struct pd_coll c = { .kind = PD_COLL_SCATTERV, .comm = comm,
                         .sendbuf = is_root ? pd_coll_buf(sendbuf) : NULL,
                         .recvbuf = in_place ? NULL : pd_coll_buf(recvbuf),
                         .count = recv_bytes, .send = *send, .root = root,
                         .signature = pd_type_signature(
                             is_root ? sendtype : recvtype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        NULL, PD_CALL_ANY_BYTES, recv_bytes, sendtype, recvtype, NULL },
        request);
}

static int pd_scatter_fixed(const char *call, const void *sendbuf,
                            int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_scatter(call, sendbuf, sendcount, NULL, NULL,
                                sendtype, recvbuf, recvcount, recvtype, root,
                                comm, request);
    PD_CHECK(pd_check_root(comm, call, root));
    struct pd_layout send = { NULL, NULL, 0 };
    if (comm->rank == root) {
        PD_CHECK(pd_check_side(comm, call, sendbuf,
                               sendcount, sendtype, PD_SIDE_SEND));
        send.extent = (size_t)sendcount * pd_type_packed(sendtype);
    }
    return pd_scatter(call, sendbuf, &send, sendtype, recvbuf, recvcount,
                      recvtype, root, comm, request);
}

static int pd_scatter_v(const char *call, const void *sendbuf,
                        const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_scatter(call, sendbuf, 0, sendcounts, displs,
                                sendtype, recvbuf, recvcount, recvtype, root,
                                comm, request);
    PD_CHECK(pd_check_root(comm, call, root));
    struct pd_layout send = { sendcounts, displs, 0 };
    if (comm->rank == root) {
        PD_CHECK(pd_check_counts(comm, call, sendcounts, comm->size, "sendcounts"));
        PD_CHECK(pd_check_displs(comm, call, displs, "displs"));
        PD_CHECK(pd_check_data_type(comm, call, sendtype, "sendtype"));
        send.extent = pd_type_packed(sendtype);
    }
    return pd_scatter(call, sendbuf, &send, sendtype, recvbuf, recvcount,
                      recvtype, root, comm, request);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    return pd_gather_fixed("MPI_Gather", sendbuf, sendcount, sendtype,
                           recvbuf, recvcount, recvtype, root, comm, NULL);
}

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Igather", request));
    return pd_gather_fixed("MPI_Igather", sendbuf, sendcount, sendtype,
                           recvbuf, recvcount, recvtype, root, comm, request);
}

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return pd_gather_v("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf,
                       recvcounts, displs, recvtype, root, comm, NULL);
}

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int displs[],
                  MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Igatherv", request));
    return pd_gather_v("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf,
                       recvcounts, displs, recvtype, root, comm, request);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    return pd_scatter_fixed("MPI_Scatter", sendbuf, sendcount, sendtype,
                            recvbuf, recvcount, recvtype, root, comm, NULL);
}

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Iscatter", request));
    return pd_scatter_fixed("MPI_Iscatter", sendbuf, sendcount, sendtype,
                            recvbuf, recvcount, recvtype, root, comm, request);
}

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return pd_scatter_v("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype,
                        recvbuf, recvcount, recvtype, root, comm, NULL);
}

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[],
                   const int displs[], MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Iscatterv", request));
    return pd_scatter_v("MPI_Iscatterv", sendbuf, sendcounts, displs,
                        sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request);
}
