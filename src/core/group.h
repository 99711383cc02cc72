/* Groups: ordered sets of processes, named by their MPI_COMM_WORLD rank. */
#ifndef PD_CORE_GROUP_H
#define PD_CORE_GROUP_H

#include "core/objects.h"

/* A new group of size members (world ranks, copied); refs = 1. NULL when
 * out of memory. size 0 gives a new empty group. */
struct ompi_group_t *pd_group_new(int size, const int *members);
/* The group of ranks 0..size-1 of MPI_COMM_WORLD. */
struct ompi_group_t *pd_group_new_world(int size);
void pd_group_retain(struct ompi_group_t *group);
/* Drop one reference; predefined groups are never freed. */
void pd_group_release(struct ompi_group_t *group);
bool pd_group_is_valid(const struct ompi_group_t *group);

/* The rank in group of world rank w, or MPI_UNDEFINED. */
int pd_group_rank_of(const struct ompi_group_t *group, int world_rank);

#endif
