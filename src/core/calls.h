/*
 * The collective calls a process is in: a sequence number per
 * communicator and the call recorded for the stall report (PDMPI_CHECK's
 * cross-check is service/call_check.h).
 */
#ifndef PD_CORE_CALLS_H
#define PD_CORE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "core/comm.h"

/* Number the next collective call on comm and record it as this
 * process's last call (for the stall table); returns its number. */
uint64_t pd_calls_note(struct ompi_communicator_t *comm, const char *name);

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

/* " (on vm, pid 812)" for rank r of comm into buf, from its entry in the
 * store (asked for at most 200 ms); where there is none, " (vm, pid 812)"
 * for a rank of this host, " (another host)" for one of another. */
void pd_calls_where_rank(struct ompi_communicator_t *comm, int r, char *buf,
                         size_t len);

/* After a step of comm with tag timed out on ranks (n of comm's ranks;
 * NULL: all of them) where no transport could say which rank it waited
 * for: every rank whose step timed out says so in the store and waits up
 * to window_ms for the others to say it too. The first rank that does
 * not (stopped, or not in the step), or -1 (every one did, or there is
 * no store to ask). */
int pd_calls_silent_rank(struct ompi_communicator_t *comm, uint32_t tag,
                         const int *ranks, int n, int window_ms);

#endif
