/* Reduce_scatter, Reduce_scatter_block, Scan and Exscan. */
#include <stdlib.h>

#include "api/api.h"

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
#pragma weak MPI_Scan = PMPI_Scan
#pragma weak MPI_Exscan = PMPI_Exscan

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
        PD_CHECK(pd_check_buffer(comm, call, sendbuf, in_count, "sendbuf"));
    return pd_check_buffer(comm, call, recvbuf,
                           sendbuf == MPI_IN_PLACE ? in_count : out_count,
                           "recvbuf");
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce_scatter";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_counts(comm, call, recvcounts, comm->size, "recvcounts"));
    long total = 0;
    for (int i = 0; i < comm->size; i++)
        total += recvcounts[i];
    if (total > 0x7fffffffL)
        return pd_raise(comm, call, MPI_ERR_COUNT,
                        "the recvcounts add up to %ld, more than an int", total);
    PD_CHECK(pd_check_reduction_call(comm, call, sendbuf, recvbuf, (int)total,
                                     recvcounts[comm->rank], datatype, op));
    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, datatype, op, -1, (size_t)total * pd_type_size(datatype) }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_REDUCE_SCATTER,
                   (size_t)total * pd_type_size(datatype));
    int rc = pd_coll_reduce_scatter(comm, pd_comm_reserve_tags(comm),
                                    sendbuf == MPI_IN_PLACE ? NULL : sendbuf,
                                    recvbuf, recvcounts, datatype, op, &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
                              int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce_scatter_block";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, recvcount, "recvcount"));
    if ((long)recvcount * comm->size > 0x7fffffffL)
        return pd_raise(comm, call, MPI_ERR_COUNT,
                        "recvcount %d times %d ranks is more than an int",
                        recvcount, comm->size);
    PD_CHECK(pd_check_reduction_call(comm, call, sendbuf, recvbuf,
                                     recvcount * comm->size, recvcount,
                                     datatype, op));
    int *counts = malloc((size_t)comm->size * sizeof(int));
    if (counts == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < comm->size; i++)
        counts[i] = recvcount;
    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, datatype, op, -1,
                                    (size_t)recvcount * (size_t)comm->size *
                                        pd_type_size(datatype) }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_REDUCE_SCATTER,
                   (size_t)recvcount * (size_t)comm->size *
                       pd_type_size(datatype));
    int rc = pd_coll_reduce_scatter(comm, pd_comm_reserve_tags(comm),
                                    sendbuf == MPI_IN_PLACE ? NULL : sendbuf,
                                    recvbuf, counts, datatype, op, &fail);
    pd_stats_end(&stat);
    free(counts);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

static int pd_scan(const char *call, const void *sendbuf, void *recvbuf,
                   int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   bool exclusive)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_reduction_call(comm, call, sendbuf, recvbuf, count,
                                     count, datatype, op));
    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, datatype, op, -1, (size_t)count * pd_type_size(datatype) }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_SCAN, (size_t)count * pd_type_size(datatype));
    int rc = pd_coll_scan(comm, pd_comm_reserve_tags(comm),
                     sendbuf == MPI_IN_PLACE ? NULL : sendbuf, recvbuf,
                     (size_t)count, datatype, op, exclusive,
                     &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return pd_scan("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm,
                   false);
}

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return pd_scan("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm,
                   true);
}
