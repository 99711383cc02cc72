/*
 * The collective calls a process is in: a sequence number per
 * communicator, the call recorded for the stall report, and PDMPI_CHECK's
 * cross-check of every rank's call before it runs.
 */
#ifndef PD_CORE_CALLS_H
#define PD_CORE_CALLS_H

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

/* The publisher of this process's last call (a thread that writes it to
 * the store when it changes, at most once a second), so that a rank that
 * times out can print what every rank was last doing. Started at
 * MPI_Init in a world of more than one, stopped at MPI_Finalize. */
void pd_calls_start_publisher(void);
void pd_calls_stop_publisher(void);

/* Append to buf the last call of every rank of comm whose last call is
 * not this rank's (the ranks that have not arrived), read from the store
 * within about two seconds. */
void pd_calls_stall_table(struct ompi_communicator_t *comm, char *buf,
                          size_t len);

#endif
