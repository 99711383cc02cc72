/* pdmpi's extensions (include/pdmpi.h). */
#include <stdio.h>

#include "api/api.h"
#include "pdmpi.h"
#include "route/route.h"

/* No CUDA path exists in this build, so device buffers are not accepted;
 * answering 0 keeps CUDA-aware applications from passing them. */
int MPIX_Query_cuda_support(void)
{
    /* CUDA buffers are accepted once a CUDA runtime is loaded: by NCCL,
     * or staged through host memory under gloo. */
    return pd_route_cuda_aware() ? 1 : 0;
}

int pdmpi_comm_backend(MPI_Comm comm, char *name, int len)
{
    static const char call[] = "pdmpi_comm_backend";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (name == NULL || len <= 0)
        return pd_raise(comm, call, MPI_ERR_ARG,
                        "name must be a buffer of positive length");
    const struct pd_backend_ops *ops = NULL;
    char why[256];
    if (pd_route_host_backend(comm->size, &ops, why, sizeof(why)) != 0)
        return pd_raise(comm, call, MPI_ERR_OTHER, "%s", why);
    snprintf(name, (size_t)len, "%s", ops->name);
    return MPI_SUCCESS;
}

int pdmpi_world_info(char *launcher, int len, int *local_rank,
                     int *local_size, int *num_hosts)
{
    static const char call[] = "pdmpi_world_info";
    PD_CHECK(pd_check_active(call));
    if (launcher != NULL && len <= 0)
        return pd_raise(MPI_COMM_WORLD, call, MPI_ERR_ARG,
                        "len must be positive when launcher is given");
    if (launcher != NULL)
        snprintf(launcher, (size_t)len, "%s", pd_rt.world.launcher);
    if (local_rank != NULL)
        *local_rank = pd_rt.world.local_rank;
    if (local_size != NULL)
        *local_size = pd_rt.world.local_size;
    if (num_hosts != NULL)
        *num_hosts = pd_rt.world.num_nodes;
    return MPI_SUCCESS;
}
