/*
 * Intercommunicators: a local and a remote group of ranks. Their calls
 * run on two private intracommunicators made with them: one over the
 * local group (the local steps of collectives), and one over both
 * groups, the lower group first (messages between the groups). The
 * lower group is the one whose leader has the lower world rank.
 */
#ifndef PD_SERVICE_INTERCOMM_H
#define PD_SERVICE_INTERCOMM_H

#include "core/comm.h"

struct pd_inter {
    struct ompi_group_t *remote;
    struct ompi_communicator_t *local;  /* the local group, private */
    struct ompi_communicator_t *both;   /* both groups, private */
    int local_first;                    /* local rank 0's rank in both */
    int remote_first;                   /* remote rank 0's rank in both */
};

/* MPI_Intercomm_create: collective over local_comm; peer_comm and
 * remote_leader matter at local_leader alone, whose messages to the
 * remote leader go on peer_comm under tag. */
int pd_intercomm_create(struct ompi_communicator_t *local_comm,
                        int local_leader,
                        struct ompi_communicator_t *peer_comm,
                        int remote_leader, int tag,
                        struct ompi_communicator_t **out,
                        struct pd_fail *fail);
/* MPI_Comm_dup of an intercommunicator: collective over both groups. */
int pd_intercomm_dup(struct ompi_communicator_t *comm,
                     struct ompi_communicator_t **out, struct pd_fail *fail);
/* ... in two steps, as MPI_Comm_idup takes it: the ids of its two inner
 * communicators' duplicates, in call order; then the duplicate made from
 * them (in its turn, on comm's progress thread). */
void pd_intercomm_child_ids(struct ompi_communicator_t *comm,
                            char id_local[PD_COMM_ID_LEN],
                            char id_both[PD_COMM_ID_LEN]);
int pd_intercomm_dup_as(struct ompi_communicator_t *comm,
                        const char *id_local, const char *id_both,
                        struct ompi_communicator_t **out,
                        struct pd_fail *fail);
/* MPI_Intercomm_merge: the group that passes high = false comes first
 * (both alike: the lower group). Collective over both groups. */
int pd_intercomm_merge(struct ompi_communicator_t *comm, bool high,
                       struct ompi_communicator_t **out,
                       struct pd_fail *fail);
/* MPI_Comm_split of an intercommunicator (collective over both groups):
 * the ranks of one color on each side, in key order, as a new
 * intercommunicator; MPI_COMM_NULL for MPI_UNDEFINED or a color the
 * other side lacks. MPI_Comm_create is the same with color 0 for the
 * group's members, their place in the group as key; detail tells the
 * calls' communicators apart (split: the color; create: the group). */
int pd_intercomm_split(struct ompi_communicator_t *comm, int color, int key,
                       const char *detail, struct ompi_communicator_t **out,
                       struct pd_fail *fail);
/* With the intercommunicator's release: its private communicators. */
void pd_intercomm_release(struct pd_inter *inter);

#endif
