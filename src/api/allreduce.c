#include "api/coll_args.h"

#pragma weak MPI_Allreduce = PMPI_Allreduce

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static const char call[] = "MPI_Allreduce";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_allreduce_args(comm, call, sendbuf, recvbuf, count,
                                     datatype, op));

    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, datatype, op, -1, (size_t)count * pd_type_size(datatype) }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_ALLREDUCE, (size_t)count * pd_type_size(datatype));
    int rc = pd_coll_allreduce(comm, pd_comm_reserve_tags(comm),
                          sendbuf == MPI_IN_PLACE ? NULL : sendbuf, recvbuf,
                          (size_t)count, datatype, op, &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}
