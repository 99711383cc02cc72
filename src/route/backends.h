/*
 * Every backend a call can be routed to, one row each: where to add a
 * host transport or a device library. Routing (route.c) reads this table;
 * no other code names a backend.
 */
#ifndef PD_ROUTE_BACKENDS_H
#define PD_ROUTE_BACKENDS_H

#include <stdbool.h>

#include "backend/backend.h"
#include "backend/dccl/dccl.h"

struct pd_backend_row {
    const char *name;           /* as PDMPI_BACKEND / PaddlePaddle name it */
    const char *memory;         /* the memory it moves: host, CUDA, XPU */
    bool policy;                /* a word of the backend policy */
    /* Host transports: the vtable and the communicator sizes it serves
     * (shm has no vtable: coll/hier.c drives it inside each host). */
    const struct pd_backend_ops *host;
    int min_ranks, max_ranks;
    /* Device libraries: the binding, in the order auto tries them; the
     * launcher's device-list variable and the variables naming the
     * library and its runtime. */
    const struct pd_dccl_binding *device;
    const char *devices_var, *lib_var, *runtime_var;
    bool cuda;                  /* MPIX_Query_cuda_support */
    const char *missing;        /* why this build lacks it, else NULL */
};

extern const struct pd_backend_row pd_backend_rows[];
extern const int pd_backend_row_count;

/* The row named name, or NULL. */
const struct pd_backend_row *pd_backend_row_named(const char *name);

#endif
