/*
 * Routing: which backend serves a call. The backend policy (PaddlePaddle's
 * gloo | nccl | bkcl | auto) and, per call, the memory kind of the buffers
 * decide. This is the only place that names backends.
 */
#ifndef PD_ROUTE_ROUTE_H
#define PD_ROUTE_ROUTE_H

#include <stddef.h>

#include "backend/backend.h"

/* At MPI_Init: can the requested policy run here? -1 with a one-line
 * reason (what is missing) if not. */
int pd_route_check_policy(const char *policy, char *err, size_t errlen);

/* The backend for host-memory buffers on a communicator of size ranks. */
int pd_route_host_backend(int size, const struct pd_backend_ops **ops,
                          char *err, size_t errlen);

/* Name of the backend each memory kind goes to, for PDMPI_DEBUG=info. */
void pd_route_describe(const char *policy, int world_size, char *buf,
                       size_t len);

#endif
