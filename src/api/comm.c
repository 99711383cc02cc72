/* Communicator queries and error handlers. */
#include "api/api.h"

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
#pragma weak MPI_Comm_size = PMPI_Comm_size
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    static const char call[] = "MPI_Comm_rank";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (rank == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "rank is NULL");
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    static const char call[] = "MPI_Comm_size";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (size == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "size is NULL");
    *size = comm->size;
    return MPI_SUCCESS;
}

static bool pd_errhandler_is_usable(MPI_Errhandler handler)
{
    return handler != NULL && handler->magic == PD_MAGIC_ERRH &&
           handler->kind != PD_ERRH_NULL;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    static const char call[] = "MPI_Comm_set_errhandler";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (!pd_errhandler_is_usable(errhandler))
        return pd_raise(comm, call, MPI_ERR_ARG,
                        errhandler == MPI_ERRHANDLER_NULL
                            ? "errhandler is MPI_ERRHANDLER_NULL"
                            : "errhandler is not a valid error handler");
    __atomic_store_n(&comm->errhandler, errhandler, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    static const char call[] = "MPI_Comm_get_errhandler";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (errhandler == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "errhandler is NULL");
    *errhandler = __atomic_load_n(&comm->errhandler, __ATOMIC_ACQUIRE);
    return MPI_SUCCESS;
}
