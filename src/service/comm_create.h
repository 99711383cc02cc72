/* Communicator creation and release (service/comm_create.c). */
#ifndef PD_SERVICE_COMM_CREATE_H
#define PD_SERVICE_COMM_CREATE_H

#include "core/comm.h"

/* Creation; *out is MPI_COMM_NULL for a rank that is not a member. */
int pd_comm_dup(struct ompi_communicator_t *comm,
                struct ompi_communicator_t **out, struct pd_fail *fail);
int pd_comm_split(struct ompi_communicator_t *comm, int color, int key,
                  struct ompi_communicator_t **out, struct pd_fail *fail);
/* By host; ranks that pass member = false (MPI_UNDEFINED) still take
 * part in the exchange and get MPI_COMM_NULL. */
int pd_comm_split_shared(struct ompi_communicator_t *comm, bool member,
                         int key, struct ompi_communicator_t **out,
                         struct pd_fail *fail);
int pd_comm_create(struct ompi_communicator_t *comm,
                   struct ompi_group_t *group,
                   struct ompi_communicator_t **out, struct pd_fail *fail);
int pd_comm_create_group(struct ompi_communicator_t *comm,
                         struct ompi_group_t *group, int tag,
                         struct ompi_communicator_t **out,
                         struct pd_fail *fail);

/* Release a user communicator (its attributes are deleted first). */
void pd_comm_free(struct ompi_communicator_t *comm);
/* Release the predefined ones' state at MPI_Finalize. */
void pd_comm_finalize_predefined(struct ompi_communicator_t *comm);

#endif
