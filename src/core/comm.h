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
#include "core/objects.h"

struct pd_dccl_comm;
struct pd_hier;
struct pd_store_client;

#define PD_COMM_ID_LEN 160

/* Each MPI call on a communicator owns this many consecutive tags, so a
 * call built from several backend operations never collides with the
 * next call. */
#define PD_TAGS_PER_CALL 4u

struct pd_attr;
struct pd_progress;
struct pd_p2p;
struct pd_create_group_count;

struct pd_comm_state {
    pthread_mutex_t lock;           /* the fields below */
    uint32_t next_tag;              /* atomic: pd_comm_reserve_tags */
    unsigned next_child;            /* creation calls made on this comm */
    struct pd_create_group_count *group_counts; /* MPI_Comm_create_group */
    char id[PD_COMM_ID_LEN];        /* same on every member, unique in job */
    struct ompi_group_t *group;
    const struct pd_backend_ops *host_ops;
    struct pd_backend_comm *host_comm;   /* connected on first use */
    struct pd_attr *attrs;               /* core/attr.c */
    struct pd_progress *progress;        /* started by the first I-call */
    struct pd_p2p *p2p;                  /* started by the first message */
    struct pd_dccl_comm *dev_comm;       /* device CCL, on first device call */
    struct pd_hier *hier;                /* host path by host (core/hier.c) */
    bool hier_known;                     /* hier decided (may be NULL) */
    uint64_t calls;                      /* collective calls entered */
};

/* A failure inside core: the MPI error class and a one-line reason. */
struct pd_fail {
    int errclass;
    char msg[1024];
};

void pd_fail_set(struct pd_fail *fail, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* MPI_COMM_WORLD and MPI_COMM_SELF at MPI_Init; world connects at once so
 * a broken world fails in MPI_Init, not in the first collective. */
int pd_comm_init_predefined(struct ompi_communicator_t *comm,
                            struct ompi_group_t *group, const char *id,
                            bool connect_now, struct pd_fail *fail);

/* True for a communicator handle usable in a call (not MPI_COMM_NULL). */
bool pd_comm_is_usable(const struct ompi_communicator_t *comm);
bool pd_comm_is_predefined(const struct ompi_communicator_t *comm);

/* The backend serving host memory on comm, connecting it on first use. */
int pd_comm_backend(struct ompi_communicator_t *comm,
                    const struct pd_backend_ops **ops,
                    struct pd_backend_comm **bc, struct pd_fail *fail);

/* A host backend context of size ranks named prefix (unique in the job),
 * connected through the store: comm's own, or one of its parts (core/
 * hier.c). label names it in messages. Collective over the ranks. */
int pd_comm_connect_host(const char *label, int rank, int size,
                         const char *prefix,
                         const struct pd_backend_ops **ops,
                         struct pd_backend_comm **bc, struct pd_fail *fail);

/* A store client of one's own (NULL in a world of one); what names the
 * purpose in the message if the store cannot be reached. */
int pd_comm_store_client(struct pd_store_client **store, const char *what,
                         struct pd_fail *fail);

/* comm's device-CCL context, created on first use (collective: every
 * member calls it at the same point). */
int pd_comm_device(struct ompi_communicator_t *comm,
                   struct pd_dccl_comm **out, struct pd_fail *fail);

/* The first of PD_TAGS_PER_CALL tags for the next call on comm. */
uint32_t pd_comm_reserve_tags(struct ompi_communicator_t *comm);

/* World rank of rank r of comm. */
int pd_comm_world_rank(const struct ompi_communicator_t *comm, int r);

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
