#include <stdlib.h>
#include <string.h>

#include "core/group.h"
#include "core/handles.h"
#include "core/runtime.h"

struct ompi_group_t *pd_group_new(int size, const int *members)
{
    struct ompi_group_t *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return NULL;
    if (size > 0) {
        g->members = malloc((size_t)size * sizeof(int));
        if (g->members == NULL) {
            free(g);
            return NULL;
        }
        memcpy(g->members, members, (size_t)size * sizeof(int));
    }
    g->magic = PD_MAGIC_GROUP;
    g->id = 2;
    g->size = size;
    g->refs = 1;
    g->rank = pd_group_rank_of(g, pd_rt.world.rank);
    return g;
}

struct ompi_group_t *pd_group_new_world(int size)
{
    int *ranks = malloc((size_t)size * sizeof(int));
    if (ranks == NULL)
        return NULL;
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    struct ompi_group_t *g = pd_group_new(size, ranks);
    free(ranks);
    return g;
}

static bool pd_group_is_predefined(const struct ompi_group_t *group)
{
    return group == (struct ompi_group_t *)MPI_GROUP_EMPTY ||
           group == (struct ompi_group_t *)MPI_GROUP_NULL;
}

void pd_group_retain(struct ompi_group_t *group)
{
    if (!pd_group_is_predefined(group))
        __atomic_add_fetch(&group->refs, 1, __ATOMIC_RELAXED);
}

void pd_group_release(struct ompi_group_t *group)
{
    if (group == NULL || pd_group_is_predefined(group))
        return;
    if (__atomic_sub_fetch(&group->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    pd_handle_forget(PD_HANDLE_GROUP, group);
    group->magic = PD_MAGIC_FREED;
    free(group->members);
    free(group);
}

bool pd_group_is_valid(const struct ompi_group_t *group)
{
    return group != NULL && group->magic == PD_MAGIC_GROUP &&
           group != (struct ompi_group_t *)MPI_GROUP_NULL;
}

int pd_group_rank_of(const struct ompi_group_t *group, int world_rank)
{
    for (int i = 0; i < group->size; i++)
        if (group->members[i] == world_rank)
            return i;
    return MPI_UNDEFINED;
}
