/*
 * Communicators: lifecycle (predefined, dup, split, create, free), the
 * lazily connected backend context, and the tag sequence that keeps every
 * rank's calls on one communicator in the same order.
 */
#ifndef PD_CORE_COMM_H
#define PD_CORE_COMM_H

#include <pthread.h>
#include <stdint.h>

#include "backend/backend.h"
#include "base/call_sig.h"
#include "base/fail.h"
#include "core/objects.h"

struct pd_dccl_comm;
struct pd_hier;
struct pd_store_client;

#define PD_COMM_ID_LEN 160

/* Each MPI call on a communicator owns this many consecutive tags, so a
 * call built from several backend operations never collides with the
 * next call. */
#define PD_TAGS_PER_CALL 4u

/* The largest tag a program may use (MPI_TAG_UB): the bit above is the
 * synchronous-send mark of service/p2p.h, negative tags are pdmpi's. */
#define PD_TAG_UB ((1 << 30) - 1)

struct pd_attr;
struct pd_progress;
struct pd_p2p;
/* How many MPI_Comm_create_group calls were made with one (tag, group):
 * the group's members alone must agree on the new communicator's id. */
struct pd_create_group_count {
    int tag;
    uint64_t group_hash;
    unsigned count;
    struct pd_create_group_count *next;
};

struct pd_cart;         /* core/cart.h */
struct pd_graph;        /* core/graph.h */
struct pd_inter;        /* service/intercomm.h */

struct pd_comm_state {
    pthread_mutex_t lock;           /* the fields below */
    uint32_t next_tag;              /* atomic: pd_comm_reserve_tags */
    unsigned next_child;            /* creation calls made on this comm */
    struct pd_create_group_count *group_counts; /* MPI_Comm_create_group */
    char id[PD_COMM_ID_LEN];        /* same on every member, unique in job */
    struct ompi_group_t *group;
    const struct pd_backend_ops *host_ops;
    struct pd_backend_comm *host_comm;   /* connected on first use */
    struct pd_agree_owed *host_owed;     /* coll/agree.h, for host_comm */
    struct pd_attr *attrs;               /* core/attr.c */
    struct pd_cart *cart;                /* MPI_Cart_create's grid, or NULL */
    struct pd_graph *graph;              /* a (distributed) graph, or NULL */
    /* An intercommunicator's remote group and the private communicators
     * its calls run on; NULL for an intracommunicator. */
    struct pd_inter *inter;
    struct pd_progress *progress;        /* started by the first I-call */
    struct pd_p2p *p2p;                  /* started by the first message */
    struct pd_dccl_comm *dev_comm;       /* device CCL, on first device call */
    struct pd_hier *hier;                /* host path by host (coll/hier.c) */
    bool hier_known;                     /* hier decided (may be NULL) */
    /* The device call in progress and its number (coll/devcoll.c), which
     * the device wait compares with the local ranks' calls. */
    struct pd_call_sig dev_call;
    uint32_t dev_call_n;
    uint64_t calls;                      /* collective calls entered */
    /* Requests made on this communicator and not yet let go of (atomic,
     * service/request.c). MPI_Comm_free with some outstanding marks it
     * freed and leaves it on a list (service/comm_create.c) until the
     * last is: MPI lets pending operations complete normally. */
    int requests;
    bool freed;
    struct ompi_communicator_t *next_freed;
};

/* MPI_COMM_WORLD and MPI_COMM_SELF at MPI_Init; world connects at once so
 * a broken world fails in MPI_Init, not in the first collective. */
int pd_comm_init_predefined(struct ompi_communicator_t *comm,
                            struct ompi_group_t *group, const char *id,
                            bool connect_now, struct pd_fail *fail);

/* True for a communicator handle usable in a call (not MPI_COMM_NULL). */
bool pd_comm_is_usable(const struct ompi_communicator_t *comm);
bool pd_comm_is_predefined(const struct ompi_communicator_t *comm);
/* An intercommunicator (usable comm): its group is the local one. */
bool pd_comm_is_inter(const struct ompi_communicator_t *comm);

/* Connect comm's host backend context now (state lock held or not yet
 * shared); 0, or -1 with fail set. */
int pd_comm_connect(struct ompi_communicator_t *comm, struct pd_fail *fail);
/* The backend serving host memory on comm, connecting it on first use. */
int pd_comm_backend(struct ompi_communicator_t *comm,
                    const struct pd_backend_ops **ops,
                    struct pd_backend_comm **bc, struct pd_fail *fail);

/* A host backend context of size ranks named prefix (unique in the job),
 * connected through the store: comm's own, or one of its parts (coll/
 * hier.c). label names it in messages. Collective over the ranks. */
int pd_comm_connect_host(const char *label, int rank, int size,
                         const char *prefix,
                         const struct pd_backend_ops **ops,
                         struct pd_backend_comm **bc, struct pd_fail *fail);

/* A store client of one's own (NULL in a world of one); what names the
 * purpose in the message if the store cannot be reached. */
int pd_comm_store_client(struct pd_store_client **store, const char *what,
                         struct pd_fail *fail);

/* The first of PD_TAGS_PER_CALL tags for the next call on comm. */
uint32_t pd_comm_reserve_tags(struct ompi_communicator_t *comm);

/* World rank of rank r of comm. */
int pd_comm_world_rank(const struct ompi_communicator_t *comm, int r);

/* A new communicator's state over group (NULL if out of memory), and its
 * release (the contexts hung on it are released by its owner first). */
struct pd_comm_state *pd_comm_state_new(struct ompi_group_t *group,
                                        const char *id);
void pd_comm_state_free(struct pd_comm_state *st);

#endif
