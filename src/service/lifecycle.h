/* MPI_Init's and MPI_Finalize's work (service/lifecycle.c). */
#ifndef PD_SERVICE_LIFECYCLE_H
#define PD_SERVICE_LIFECYCLE_H

#include <stddef.h>

/* MPI_Init's work: configuration, world, store, MPI_COMM_WORLD/SELF.
 * Returns an MPI error class, with a message in err on failure. */
int pd_runtime_init(int required_level, int *provided, char *err,
                    size_t errlen);

/* MPI_Finalize's work: a barrier on MPI_COMM_WORLD, then release
 * communicators and the store connection. */
int pd_runtime_finalize(char *err, size_t errlen);

#endif
