/* Reduce_scatter, Reduce_scatter_block, Scan and Exscan, and the
 * nonblocking Ireduce_scatter, Iscan, Iexscan (Ireduce_scatter_block is
 * with the other nonblocking calls, in icoll.c). */
#include "api/coll_args.h"
#include "api/intercoll.h"

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
#pragma weak MPI_Scan = PMPI_Scan
#pragma weak MPI_Exscan = PMPI_Exscan
#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
#pragma weak MPI_Iscan = PMPI_Iscan
#pragma weak MPI_Iexscan = PMPI_Iexscan

/* The checks every reduction with a result per rank shares. */
static int pd_check_reduction_call(MPI_Comm comm, const char *call,
                                   const void *sendbuf, void *recvbuf,
                                   int in_count, int out_count,
                                   MPI_Datatype type, MPI_Op op)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_data_type(comm, call, type, "datatype"));
    PD_CHECK(pd_check_op(comm, call, type, op));
    if (sendbuf != MPI_IN_PLACE)
        PD_CHECK(pd_check_buffer(comm, call, sendbuf, in_count, type,
                                 "sendbuf"));
    return pd_check_buffer(comm, call, recvbuf,
                           sendbuf == MPI_IN_PLACE ? in_count : out_count,
                           type, "recvbuf");
}

/* counts NULL: every rank keeps block elements; total is their sum. */
int pd_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                      const int *counts, size_t block, size_t total,
                      MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                      MPI_Request *request)
{
    size_t bytes = total * pd_type_size(type);
    struct pd_coll c = { .kind = PD_COLL_REDUCE_SCATTER, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .count = block, .counts = counts,
                         .type = type, .op = op, .root = -1 };
    return pd_api_coll(call, &c, &(struct pd_agree){
        .type = type, .bytes = request ? PD_CALL_ANY_BYTES : bytes,
        .stat_bytes = bytes }, request);
}

static int pd_reduce_scatter_v(const char *call, const void *sendbuf,
                               void *recvbuf, const int recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_reduce_scatter(call, sendbuf, recvbuf, 0, recvcounts,
                                       datatype, op, comm, request);
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    long total = 0;
    for (int i = 0; i < comm->size; i++)
        total += recvcounts[i];
    if (total > 0x7fffffffL)
        return pd_raise(comm, call, MPI_ERR_COUNT,
                        "the recvcounts add up to %ld, more than an int", total);
    PD_CHECK(pd_check_reduction_call(comm, call, sendbuf, recvbuf, (int)total,
                                     recvcounts[comm->rank], datatype, op));
    return pd_reduce_scatter(call, sendbuf, recvbuf, recvcounts, 0,
                             (size_t)total, datatype, op, comm, request);
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    return pd_reduce_scatter_v("MPI_Reduce_scatter", sendbuf, recvbuf,
                               recvcounts, datatype, op, comm, NULL);
}

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf,
                         const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Ireduce_scatter", request));
    return pd_reduce_scatter_v("MPI_Ireduce_scatter", sendbuf, recvbuf,
                               recvcounts, datatype, op, comm, request);
}

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
                              int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce_scatter_block";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_reduce_scatter(call, sendbuf, recvbuf, recvcount, NULL,
                                       datatype, op, comm, NULL);
    PD_CHECK(pd_check_count(comm, call, recvcount, "recvcount"));
    if ((long)recvcount * comm->size > 0x7fffffffL)
        return pd_raise(comm, call, MPI_ERR_COUNT,
                        "recvcount %d times %d ranks is more than an int",
                        recvcount, comm->size);
    PD_CHECK(pd_check_reduction_call(comm, call, sendbuf, recvbuf,
                                     recvcount * comm->size, recvcount,
                                     datatype, op));
    return pd_reduce_scatter(call, sendbuf, recvbuf, NULL, (size_t)recvcount,
                             (size_t)recvcount * (size_t)comm->size, datatype,
                             op, comm, NULL);
}

static int pd_scan(const char *call, const void *sendbuf, void *recvbuf,
                   int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   bool exclusive, MPI_Request *request)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_reduction_call(comm, call, sendbuf, recvbuf, count,
                                     count, datatype, op));
    size_t bytes = (size_t)count * pd_type_size(datatype);
    struct pd_coll c = { .kind = exclusive ? PD_COLL_EXSCAN : PD_COLL_SCAN,
                         .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .count = (size_t)count,
                         .type = datatype, .op = op, .root = -1 };
    /* Started calls compare the ranks' bytes where they run. */
    return pd_api_coll(call, &c, &(struct pd_agree){
        .type = datatype, .bytes = request ? PD_CALL_ANY_BYTES : bytes,
        .stat_bytes = bytes }, request);
}

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return pd_scan("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm,
                   false, NULL);
}

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return pd_scan("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm,
                   true, NULL);
}

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Iscan", request));
    return pd_scan("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm,
                   false, request);
}

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
    PD_CHECK(pd_check_request_out(comm, "MPI_Iexscan", request));
    return pd_scan("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm,
                   true, request);
}
