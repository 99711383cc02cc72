/*
 * One progress thread per communicator, started by its first nonblocking
 * call, runs that communicator's nonblocking collectives one after another
 * in call order -- their tags were taken at call time, so they line up
 * with the same calls on every other rank -- while the caller computes.
 */
#ifndef PD_SERVICE_PROGRESS_H
#define PD_SERVICE_PROGRESS_H

#include "service/request.h"

/* Queue req's collective on its communicator; MPI error class. */
int pd_progress_submit(struct ompi_request_t *req, struct pd_fail *fail);
/* Queue a call of the library's own on req's communicator, after those
 * started before it: run(args) on the progress thread in its turn; args
 * go with args_free when the request does. req completes once run has
 * run. On failure req is let go of (args with it); MPI error class. */
int pd_progress_defer(struct ompi_request_t *req,
                      int (*run)(void *args, struct pd_fail *fail),
                      void *args, void (*args_free)(void *args),
                      struct pd_fail *fail);
/* Wait until every nonblocking call queued on comm so far has run (a no-op
 * on the progress thread itself). A transport that serves one call at a
 * time in call order -- shared memory -- needs the calls started before a
 * blocking one to finish first; they can, as every rank started them in
 * the same order. */
void pd_progress_drain(struct ompi_communicator_t *comm);
/* Run c now on the calling thread, after the calls queued on its
 * communicator before it where those must finish first (see drain). */
int pd_progress_run_now(const struct pd_coll *c, struct pd_fail *fail);
/* An allgather of bytes per rank from mine into all, run now (the
 * library's own calls: communicator creation, call checks). */
int pd_progress_allgather(struct ompi_communicator_t *comm, const void *mine,
                          void *all, size_t bytes, struct pd_fail *fail);
/* Finish every queued call, then end comm's thread (MPI_Comm_free,
 * MPI_Finalize). */
void pd_progress_stop(struct ompi_communicator_t *comm);

#endif
