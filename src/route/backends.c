#include <limits.h>
#include <string.h>

#include "route/backends.h"

#ifdef PD_HAVE_GLOO
#define PD_GLOO_OPS (&pd_backend_gloo)
#define PD_GLOO_MISSING NULL
#else
#define PD_GLOO_OPS NULL
#define PD_GLOO_MISSING "this pdmpi was built without gloo (rebuild --with-gloo)"
#endif
#ifdef PD_HAVE_NCCL_BINDING
#define PD_NCCL_BINDING (&pd_dccl_nccl)
#define PD_NCCL_MISSING NULL
#else
#define PD_NCCL_BINDING NULL
#define PD_NCCL_MISSING "this pdmpi build has no NCCL binding (nccl.h and " \
    "cuda_runtime_api.h were not found at configure time)"
#endif

const struct pd_backend_row pd_backend_rows[] = {
    { .name = "self", .memory = "host", .host = &pd_backend_self,
      .min_ranks = 1, .max_ranks = 1 },
    { .name = "gloo", .memory = "host", .policy = true, .host = PD_GLOO_OPS,
      .min_ranks = 2, .max_ranks = INT_MAX, .missing = PD_GLOO_MISSING },
    { .name = "shm", .memory = "host" },
    { .name = "nccl", .memory = "CUDA", .policy = true,
      .device = PD_NCCL_BINDING, .devices_var = "FLAGS_selected_gpus",
      .lib_var = "PDMPI_NCCL_LIB", .runtime_var = "PDMPI_CUDART_LIB",
      .cuda = true, .missing = PD_NCCL_MISSING },
    { .name = "bkcl", .memory = "XPU", .policy = true,
      .device = &pd_dccl_bkcl, .devices_var = "FLAGS_selected_xpus",
      .lib_var = "PDMPI_BKCL_LIB", .runtime_var = "PDMPI_XPURT_LIB" },
};

const int pd_backend_row_count =
    (int)(sizeof(pd_backend_rows) / sizeof(pd_backend_rows[0]));

const struct pd_backend_row *pd_backend_row_named(const char *name)
{
    for (int i = 0; i < pd_backend_row_count; i++)
        if (strcmp(pd_backend_rows[i].name, name) == 0)
            return &pd_backend_rows[i];
    return NULL;
}
