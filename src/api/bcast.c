#include "api/api.h"

#pragma weak MPI_Bcast = PMPI_Bcast

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm)
{
    static const char call[] = "MPI_Bcast";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, datatype, "datatype"));
    PD_CHECK(pd_check_root(comm, call, root));
    PD_CHECK(pd_check_buffer(comm, call, buffer, count, "buffer"));

    PD_CHECK(pd_enter_call(comm, &(struct pd_call){ call, datatype, NULL, root, (size_t)count * pd_type_size(datatype) }));
    struct pd_fail fail;
    struct pd_stat_scope stat;
    pd_stats_begin(&stat, PD_STAT_BCAST, (size_t)count * pd_type_extent(datatype));
    int rc = pd_coll_bcast(comm, pd_comm_reserve_tags(comm), buffer,
                      (size_t)count * pd_type_extent(datatype), root,
                      &fail);
    pd_stats_end(&stat);
    if (rc != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}
