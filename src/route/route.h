/*
 * Routing: which backend serves a call. The backend policy (PaddlePaddle's
 * gloo | nccl | bkcl | auto) and, per call, the memory kind of the buffers
 * decide, reading the one table of backends (route/backends.h).
 */
#ifndef PD_ROUTE_ROUTE_H
#define PD_ROUTE_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"
#include "backend/dccl/dccl.h"

/* What MPI_Init knows that routing needs. */
struct pd_route_setup {
    const char *policy;         /* gloo | nccl | bkcl | auto */
    const char *device_hint;    /* launcher's device ids ("2" or "2,3"), "" */
    int local_rank;
    int local_size;
    bool fallback_error;        /* PDMPI_DEVICE_FALLBACK=error */
    /* The path a library variable of the backend table (PDMPI_NCCL_LIB
     * ...) sets; "" or NULL: the library's usual soname. */
    const char *(*lib_path)(const char *var);
};

/*
 * At MPI_Init: resolve the policy. auto takes NCCL when a CUDA device and
 * libnccl are usable, else BKCL when an XPU and libbkcl are, else gloo;
 * nccl or bkcl where the library or a device is missing is an error with
 * a one-line reason naming what is missing. With gloo (chosen or fallen
 * back to), a device runtime that loads still lets device buffers be
 * recognised and staged through host memory.
 */
int pd_route_init(const struct pd_route_setup *setup, char *err,
                  size_t errlen);

/* The backend for host-memory buffers on a communicator of size ranks. */
int pd_route_host_backend(int size, const struct pd_backend_ops **ops,
                          char *err, size_t errlen);

/* Where each memory kind goes, and why, for PDMPI_DEBUG=info. */
void pd_route_describe(int world_size, char *buf, size_t len);

/* Whether any device runtime is loaded (else every buffer is host). */
bool pd_route_memory_aware(void);

/* Whether CUDA buffers are accepted (MPIX_Query_cuda_support). */
bool pd_route_cuda_aware(void);

/* The device CCL calls may go to, or NULL. */
struct pd_dccl *pd_route_device(void);

/* The device runtime that recognises and copies device buffers, or NULL
 * (the CCL's, or a runtime loaded for staging only). */
struct pd_dccl *pd_route_runtime(void);

/* True when buf is device memory (CUDA, XPU), which the host must not
 * read or write. */
bool pd_route_is_device(const void *buf);

enum pd_route {
    PD_ROUTE_HOST,      /* every buffer is host memory */
    PD_ROUTE_DEVICE,    /* the device CCL takes the call */
    PD_ROUTE_STAGE,     /* device buffers staged through host memory */
    PD_ROUTE_REFUSE,    /* PDMPI_DEVICE_FALLBACK=error; why says why */
};

/*
 * The route for one call with n buffers (NULL entries are ignored): the
 * device CCL only when every buffer is memory of this rank's device and,
 * for reductions, the CCL has the element kind and op; plain_type false
 * (derived types, user ops) always means the host path.
 */
enum pd_route pd_route_buffers(const void *const *bufs, size_t n,
                                   bool reduction, enum pd_elem_kind kind,
                                   enum pd_op_id op, bool plain_type,
                                   char *why, size_t whylen);

#endif
