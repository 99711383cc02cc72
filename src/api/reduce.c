#include "api/coll_args.h"

#pragma weak MPI_Reduce = PMPI_Reduce

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_reduce_args(comm, call, sendbuf, recvbuf, count,
                                  datatype, op, root));

    bool is_root = comm->rank == root;
    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, datatype, op, root, (size_t)count * pd_type_size(datatype) }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_REDUCE, (size_t)count * pd_type_size(datatype));
    int rc = pd_coll_reduce(comm, pd_comm_reserve_tags(comm),
                       sendbuf == MPI_IN_PLACE ? NULL : sendbuf,
                       is_root ? recvbuf : NULL, (size_t)count, datatype, op,
                       root, &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}
