/*
 * Raising MPI errors: one line naming the rank, the call, the
 * communicator, the error class and the cause, then the communicator's
 * error handler decides -- MPI_ERRORS_ARE_FATAL ends the job,
 * MPI_ERRORS_RETURN returns the class to the caller.
 */
#ifndef PD_CORE_ERROR_H
#define PD_CORE_ERROR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/objects.h"

/* comm may be NULL or invalid: MPI_COMM_WORLD's handler then applies. */
int pd_raise(struct ompi_communicator_t *comm, const char *call, int errclass,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The same for a file: its error handler decides (file NULL, invalid or
 * MPI_FILE_NULL: MPI_FILE_NULL's, which MPI_File_open and
 * MPI_File_delete raise on). */
int pd_raise_file(struct ompi_file_t *file, const char *call, int errclass,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* While into is set on this thread (NULL: unset), pd_raise records its
 * first failure there, naming the call, and returns the class without
 * any handler: a call run for a request (a nonblocking collective on an
 * intercommunicator) reports its failure when the request finishes. */
struct pd_fail;
void pd_raise_capture(struct pd_fail *into);

/* A call made before MPI_Init or after MPI_Finalize: always fatal, since
 * no error handler exists outside that window. */
int pd_raise_inactive(const char *call);

/* Class name ("MPI_ERR_COUNT") and the standard's description. */
const char *pd_error_class_name(int errclass);
const char *pd_error_class_text(int errclass);
/* A predefined class or an added code. */
int pd_error_class_is_valid(int errclass);

/* Codes a program adds: a new class (errclass < 0) or a new code of
 * errclass; -1 when out of memory. Numbered past MPI_ERR_LASTCODE. */
int pd_error_add(int errclass);
/* The largest code in use (the MPI_LASTUSEDCODE attribute). */
int pd_error_last_code(void);
/* Set an added code's string; false for a predefined or unknown code. */
bool pd_error_set_text(int code, const char *text);
/* The class of a code, -1 for an unknown one. */
int pd_error_code_class(int code);
bool pd_error_is_user_class(int code);
/* MPI_Error_string's text of a code. */
void pd_error_text(int code, char *out, size_t len);
/* Forget the added codes (MPI_Finalize). */
void pd_errors_reset(void);

#endif
