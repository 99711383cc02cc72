/*
 * Raising MPI errors: one line naming the rank, the call, the
 * communicator, the error class and the cause, then the communicator's
 * error handler decides -- MPI_ERRORS_ARE_FATAL ends the job,
 * MPI_ERRORS_RETURN returns the class to the caller.
 */
#ifndef PD_CORE_ERROR_H
#define PD_CORE_ERROR_H

#include "core/objects.h"

/* comm may be NULL or invalid: MPI_COMM_WORLD's handler then applies. */
int pd_raise(struct ompi_communicator_t *comm, const char *call, int errclass,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A call made before MPI_Init or after MPI_Finalize: always fatal, since
 * no error handler exists outside that window. */
int pd_raise_inactive(const char *call);

/* Class name ("MPI_ERR_COUNT") and the standard's description. */
const char *pd_error_class_name(int errclass);
const char *pd_error_class_text(int errclass);
int pd_error_class_is_valid(int errclass);

#endif
