/*
 * What the hierarchical algorithms share (coll/hier*.c): comm's hosts,
 * its shared-memory segment and the leaders' network context, and the
 * steps every algorithm is built from.
 */
#ifndef PD_COLL_HIER_INTERNAL_H
#define PD_COLL_HIER_INTERNAL_H

#include <stdbool.h>

#include "backend/shm/shm.h"
#include "coll/hier.h"

struct pd_hier {
    int num_hosts;
    int host;                   /* this rank's host */
    int local_rank, local_size;
    int *host_of;               /* comm rank -> host */
    int *local_of;              /* comm rank -> local rank on its host */
    int *leader;                /* host -> comm rank of its leader */
    int *host_size;             /* host -> ranks on it */
    struct pd_shm_comm *shm;    /* NULL when alone on the host */
    const struct pd_backend_ops *net_ops;   /* leaders, several hosts */
    struct pd_backend_comm *net;
    struct pd_agree_owed *net_owed;         /* coll/agree.h, for net */
    struct pd_call_sig call;    /* the call the steps serve (pd_hier_serve) */
};

/* A shared-memory or network step's failure as an MPI error class. */
int pd_hier_shm_failed(int status, struct ompi_communicator_t *comm,
                       const char *what, const struct pd_backend_error *e,
                       struct pd_fail *fail);
/* Intra-host reduction: local rank `to` keeps all of it at out. */
int pd_hier_local_reduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                         const void *in, void *out,
                         const struct pd_hier_reduction *red, int to,
                         const char *what, struct pd_fail *fail);
/* Whether a call whose bytes are mover's (not NULL) must be packed whole
 * instead: pieces go through shared memory on one host only. */
static inline bool pd_hier_refuses_mover(const struct pd_hier *h,
                                         const struct pd_shm_mover *mover)
{
    return mover != NULL && (h->num_hosts > 1 || h->shm == NULL);
}

/* Intra-host broadcast from local rank from (keep: it keeps buf), of
 * mover's bytes where mover is not NULL (pd_shm_bcast). */
int pd_hier_local_bcast(struct ompi_communicator_t *comm, struct pd_hier *h,
                        void *buf, const struct pd_shm_mover *mover,
                        size_t bytes, int from, bool keep, const char *what,
                        struct pd_fail *fail);
/* One step among the leaders (callers check that this rank leads). */
int pd_hier_net(struct ompi_communicator_t *comm, struct pd_hier *h,
                enum pd_coll_kind step, struct pd_coll_args *args,
                const char *what, struct pd_fail *fail);
/* This rank leads its host among several. */
bool pd_hier_leads(const struct pd_hier *h);
/* Name the call the host's steps serve, for the cross-check in shm: a
 * reduction's op and element kind from red, a move's type signature
 * (pd_type_signature) from signature. */
void pd_hier_serve(struct pd_hier *h, enum pd_coll_kind kind, int root,
                   size_t bytes, const struct pd_hier_reduction *red,
                   unsigned char signature);

#endif
