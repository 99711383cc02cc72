/* PDMPI_CHECK's cross-check of every rank's call (service/call_check.c). */
#ifndef PD_SERVICE_CALL_CHECK_H
#define PD_SERVICE_CALL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "core/comm.h"

/* bytes when ranks may legitimately pass different amounts (gatherv...). */
#define PD_CALL_ANY_BYTES SIZE_MAX

/* One collective call as the ranks must agree on it. */
struct pd_call {
    const char *name;           /* "MPI_Allreduce" */
    MPI_Datatype type;          /* NULL: none */
    MPI_Op op;                  /* NULL: none */
    int root;                   /* -1: none */
    size_t bytes;               /* the same on every rank, or ANY */
};

/* Enter call on comm: number it and, under PDMPI_CHECK=1, compare it with
 * every other rank's current call (collective); a mismatch fails on every
 * rank with each rank's call listed. */
int pd_calls_enter(struct ompi_communicator_t *comm,
                   const struct pd_call *call, struct pd_fail *fail);

#endif
