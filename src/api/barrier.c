#include "api/api.h"

#pragma weak MPI_Barrier = PMPI_Barrier

int PMPI_Barrier(MPI_Comm comm)
{
    static const char call[] = "MPI_Barrier";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));

    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, NULL, NULL, -1, 0 }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_BARRIER, 0);
    int rc = pd_coll_barrier(comm, pd_comm_reserve_tags(comm), &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}
