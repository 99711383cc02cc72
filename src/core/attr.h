/* Attribute caching on communicators (keyvals, copy and delete callbacks)
 * and the predefined attributes of MPI_COMM_WORLD. */
#ifndef PD_CORE_ATTR_H
#define PD_CORE_ATTR_H

#include "core/comm.h"

int pd_keyval_create(MPI_Comm_copy_attr_function *copy,
                     MPI_Comm_delete_attr_function *del, void *extra,
                     int *keyval);
/* -1 if keyval is not one of pd_keyval_create's (live) keyvals. */
int pd_keyval_free(int keyval);
bool pd_keyval_is_user(int keyval);
bool pd_keyval_is_predefined(int keyval);

/* An MPI error class; a callback's non-success code is returned as is. */
int pd_attr_set(struct ompi_communicator_t *comm, int keyval, void *value,
                struct pd_fail *fail);
void pd_attr_get(struct ompi_communicator_t *comm, int keyval, void **value,
                 int *found);
int pd_attr_delete(struct ompi_communicator_t *comm, int keyval,
                   struct pd_fail *fail);

/* MPI_Comm_dup: run every copy callback of comm's attributes into dst. */
int pd_attr_copy_all(struct ompi_communicator_t *comm,
                     struct ompi_communicator_t *dst, struct pd_fail *fail);
/* MPI_Comm_free, and MPI_COMM_SELF at MPI_Finalize: run every delete
 * callback, the newest attribute first; -1 if one fails. */
int pd_attr_delete_all(struct ompi_communicator_t *comm);

#endif
