/* Communicator creation and release (service/comm_create.c). */
#ifndef PD_SERVICE_COMM_CREATE_H
#define PD_SERVICE_COMM_CREATE_H

#include "core/comm.h"

/* Creation; *out is MPI_COMM_NULL for a rank that is not a member. */
int pd_comm_dup(struct ompi_communicator_t *comm,
                struct ompi_communicator_t **out, struct pd_fail *fail);
/* The duplicate of intracommunicator comm whose id pd_comm_child_id
 * gave (MPI_Comm_idup takes the id in call order, then makes it in its
 * turn on comm's progress thread). */
int pd_comm_dup_as(struct ompi_communicator_t *comm, const char *id,
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

/* The pieces the kinds of creation share (intercomm.c too). A new
 * communicator object over group, this rank a member (NULL: out of
 * memory); its errors go to parent's handler. */
struct ompi_communicator_t *pd_comm_new(struct ompi_communicator_t *parent,
                                        struct ompi_group_t *group,
                                        const char *id);
/* A fixed-length id hashed from how (a text every member makes alike). */
void pd_comm_derive_id(char id[PD_COMM_ID_LEN], const char *how);
/* The id of the next child of parent, made by a call on all its ranks;
 * detail tells apart the children of one call (split's colors). */
void pd_comm_child_id(struct ompi_communicator_t *parent, char *id,
                      const char *detail);
/* Wrap group (owned from here) into *out with its connections formed,
 * or MPI_COMM_NULL where this rank is not a member. */
int pd_comm_finish(struct ompi_communicator_t *parent,
                   struct ompi_group_t *group, const char *id,
                   struct ompi_communicator_t **out, struct pd_fail *fail);

/* Release a user communicator (its attributes are deleted first). */
void pd_comm_free(struct ompi_communicator_t *comm);
/* MPI_Comm_free's release: now, or, while requests made on comm are
 * outstanding, once the last is let go of (pd_comm_release_freed). The
 * handle is unusable from here on either way. */
void pd_comm_free_when_idle(struct ompi_communicator_t *comm);
/* Release the communicators pd_comm_free_when_idle left whose requests
 * are all let go of; every one of them where all (MPI_Finalize). Call
 * from the program's threads, where no call on them runs. */
void pd_comm_release_freed(bool all);
/* Release the predefined ones' state at MPI_Finalize. */
void pd_comm_finalize_predefined(struct ompi_communicator_t *comm);

#endif
