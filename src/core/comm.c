/* Communicator state: handles, ranks, tags, and the predefined ones
 * (connection: comm_connect.c; creation: service/comm_create.c). */
#include <stdio.h>
#include <stdlib.h>

#include "core/cart.h"
#include "core/graph.h"
#include "core/comm.h"
#include "core/group.h"

bool pd_comm_is_usable(const struct ompi_communicator_t *comm)
{
    return comm != NULL && comm->magic == PD_MAGIC_COMM &&
           comm->kind != PD_COMM_NULL && comm->state != NULL &&
           !comm->state->freed;
}

bool pd_comm_is_predefined(const struct ompi_communicator_t *comm)
{
    return comm->kind == PD_COMM_WORLD || comm->kind == PD_COMM_SELF ||
           comm->kind == PD_COMM_NULL;
}

bool pd_comm_is_inter(const struct ompi_communicator_t *comm)
{
    return comm->state->inter != NULL;
}

int pd_comm_world_rank(const struct ompi_communicator_t *comm, int r)
{
    return comm->state->group->members[r];
}

struct pd_comm_state *pd_comm_state_new(struct ompi_group_t *group,
                                        const char *id)
{
    struct pd_comm_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NULL;
    pthread_mutex_init(&st->lock, NULL);
    snprintf(st->id, sizeof(st->id), "%s", id);
    st->group = group;
    return st;
}

void pd_comm_state_free(struct pd_comm_state *st)
{
    while (st->group_counts != NULL) {
        struct pd_create_group_count *next = st->group_counts->next;
        free(st->group_counts);
        st->group_counts = next;
    }
    pd_group_release(st->group);
    pd_cart_free(st->cart);
    pd_graph_free(st->graph);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

uint32_t pd_comm_reserve_tags(struct ompi_communicator_t *comm)
{
    /* Atomic, not under the state's lock: this is on every call's path. */
    return __atomic_fetch_add(&comm->state->next_tag, PD_TAGS_PER_CALL,
                              __ATOMIC_RELAXED);
}

int pd_comm_init_predefined(struct ompi_communicator_t *comm,
                            struct ompi_group_t *group, const char *id,
                            bool connect_now, struct pd_fail *fail)
{
    struct pd_comm_state *st = pd_comm_state_new(group, id);
    if (st == NULL) {
        pd_group_release(group);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return -1;
    }
    comm->rank = group->rank;
    comm->size = group->size;
    comm->errhandler = (struct ompi_errhandler_t *)MPI_ERRORS_ARE_FATAL;
    comm->state = st;
    if (connect_now && pd_comm_connect(comm, fail) != 0) {
        comm->state = NULL;
        pd_comm_state_free(st);
        return -1;
    }
    return 0;
}

