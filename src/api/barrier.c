#include "api/api.h"
#include "api/intercoll.h"

#pragma weak MPI_Barrier = PMPI_Barrier

int pd_api_barrier(const char *call, MPI_Comm comm)
{
    if (pd_comm_is_inter(comm))
        return pd_inter_barrier(call, comm, NULL);
    struct pd_coll c = { .kind = PD_COLL_BARRIER, .comm = comm, .root = -1 };
    return pd_api_coll(call, &c, &(struct pd_agree){ .type = NULL }, NULL);
}

int PMPI_Barrier(MPI_Comm comm)
{
    static const char call[] = "MPI_Barrier";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    return pd_api_barrier(call, comm);
}
