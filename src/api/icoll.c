/* Nonblocking collectives: checked here, tagged in call order, run by
 * the communicator's progress thread. */
#include <limits.h>

#include "api/coll_args.h"
#include "api/intercoll.h"
#include "service/progress.h"

#pragma weak MPI_Iallreduce = PMPI_Iallreduce
#pragma weak MPI_Ireduce = PMPI_Ireduce
#pragma weak MPI_Ibcast = PMPI_Ibcast
#pragma weak MPI_Iallgather = PMPI_Iallgather
#pragma weak MPI_Ialltoall = PMPI_Ialltoall
#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
#pragma weak MPI_Ibarrier = PMPI_Ibarrier

/* Queue c; ranks may pass different bytes (checked where they run). */
static int pd_start_move(const char *call, struct pd_coll *c,
                         MPI_Datatype send_type, MPI_Datatype recv_type,
                         MPI_Request *request)
{
    return pd_api_coll(call, c, &(struct pd_agree){
        c->type, PD_CALL_ANY_BYTES, 0, send_type, recv_type, NULL }, request);
}

static int pd_start(const char *call, struct pd_coll *c, MPI_Request *request)
{
    return pd_start_move(call, c, NULL, NULL, request);
}

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *request)
{
    static const char call[] = "MPI_Iallreduce";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_request_out(comm, call, request));
    if (pd_comm_is_inter(comm))
        return pd_inter_allreduce(call, sendbuf, recvbuf, count, datatype, op,
                                  comm, request);
    PD_CHECK(pd_check_allreduce_args(comm, call, sendbuf, recvbuf, count,
                                     datatype, op));
    struct pd_coll c = { .kind = PD_COLL_ALLREDUCE, .comm = comm,
                          .sendbuf = pd_coll_sendbuf(sendbuf),
                          .recvbuf = pd_coll_buf(recvbuf), .count = (size_t)count,
                          .type = datatype, .op = op, .root = -1 };
    return pd_start(call, &c, request);
}

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    static const char call[] = "MPI_Ireduce";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_request_out(comm, call, request));
    if (pd_comm_is_inter(comm))
        return pd_inter_reduce(call, sendbuf, recvbuf, count, datatype, op,
                               root, comm, request);
    PD_CHECK(pd_check_reduce_args(comm, call, sendbuf, recvbuf, count,
                                  datatype, op, root));
    struct pd_coll c = { .kind = PD_COLL_REDUCE, .comm = comm,
                          .sendbuf = pd_coll_sendbuf(sendbuf),
                          .recvbuf = comm->rank == root ? pd_coll_buf(recvbuf) : NULL,
                          .count = (size_t)count, .type = datatype, .op = op,
                          .root = root };
    return pd_start(call, &c, request);
}

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
                MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Ibcast";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_request_out(comm, call, request));
    if (pd_comm_is_inter(comm))
        return pd_inter_bcast(call, buffer, count, datatype, root, comm,
                              request);
    PD_CHECK(pd_check_side(comm, call, buffer, count, datatype, PD_SIDE_ONE));
    PD_CHECK(pd_check_root(comm, call, root));
    struct pd_coll c = { .kind = PD_COLL_BCAST, .comm = comm,
                         .recvbuf = pd_coll_buf(buffer),
                         .count = (size_t)count * pd_type_packed(datatype),
                         .root = root,
                         .signature = pd_type_signature(datatype) };
    return pd_start_move(call, &c, NULL, datatype, request);
}

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Iallgather";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_request_out(comm, call, request));
    if (pd_comm_is_inter(comm))
        return pd_inter_allgather(call, sendbuf, sendcount, sendtype, recvbuf,
                                  recvcount, NULL, NULL, recvtype, comm,
                                  request);
    size_t bytes;
    PD_CHECK(pd_check_blocks(comm, call, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, &bytes));
    struct pd_coll c = { .kind = PD_COLL_ALLGATHER, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .count = bytes, .root = -1,
                         .signature = pd_type_signature(
                             in_place ? recvtype : sendtype) };
    return pd_start_move(call, &c, sendtype, recvtype, request);
}

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Ialltoall";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_request_out(comm, call, request));
    if (pd_comm_is_inter(comm))
        return pd_inter_alltoall(call, sendbuf, sendcount, NULL, NULL, NULL,
                                 sendtype, recvbuf, recvcount, NULL, NULL,
                                 NULL, recvtype, comm, request);
    size_t bytes;
    PD_CHECK(pd_check_blocks(comm, call, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, &bytes));
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .send = { NULL, NULL, bytes },
                         .recv = { NULL, NULL, bytes }, .root = -1,
                         .signature = pd_type_signature(
                             in_place ? recvtype : sendtype) };
    return pd_start_move(call, &c, sendtype, recvtype, request);
}

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
                               int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Ireduce_scatter_block";
    bool in_place = sendbuf == MPI_IN_PLACE;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_request_out(comm, call, request));
    if (pd_comm_is_inter(comm))
        return pd_inter_reduce_scatter(call, sendbuf, recvbuf, recvcount, NULL,
                                       datatype, op, comm, request);
    PD_CHECK(pd_check_count(comm, call, recvcount, "recvcount"));
    PD_CHECK(pd_check_data_type(comm, call, datatype, "datatype"));
    PD_CHECK(pd_check_op(comm, call, datatype, op));
    if ((long)recvcount * comm->size > INT_MAX)
        return pd_raise(comm, call, MPI_ERR_COUNT,
                        "recvcount %d times %d ranks is more than an int",
                        recvcount, comm->size);
    int total = recvcount * comm->size;
    if (!in_place)
        PD_CHECK(pd_check_buffer(comm, call, sendbuf, total, datatype,
                                 "sendbuf"));
    PD_CHECK(pd_check_buffer(comm, call, recvbuf,
                             in_place ? total : recvcount, datatype,
                             "recvbuf"));
    return pd_reduce_scatter(call, sendbuf, recvbuf, NULL, (size_t)recvcount,
                             (size_t)total, datatype, op, comm, request);
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Ibarrier";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_request_out(comm, call, request));
    if (pd_comm_is_inter(comm))
        return pd_inter_barrier(call, comm, request);
    struct pd_coll c = { .kind = PD_COLL_BARRIER, .comm = comm, .root = -1 };
    return pd_start(call, &c, request);
}
