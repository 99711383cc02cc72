/*
 * The collective kinds, one enum for every layer: the call descriptor,
 * statistics, call checks, nonblocking requests and the shared-memory
 * arrival record all name a call by it.
 */
#ifndef PD_BASE_COLL_KIND_H
#define PD_BASE_COLL_KIND_H

enum pd_coll_kind {
    PD_COLL_NONE = 0,           /* no call (an empty arrival record) */
    PD_COLL_ALLREDUCE,
    PD_COLL_REDUCE,
    PD_COLL_BCAST,
    PD_COLL_ALLGATHER,
    PD_COLL_ALLGATHERV,
    PD_COLL_GATHERV,            /* gather too */
    PD_COLL_SCATTERV,           /* scatter too */
    PD_COLL_ALLTOALLV,          /* alltoall too */
    PD_COLL_REDUCE_SCATTER,     /* reduce_scatter_block too */
    PD_COLL_SCAN,
    PD_COLL_EXSCAN,
    PD_COLL_BARRIER,
    PD_COLL_KINDS,
};

/* "allreduce", "broadcast", "reduce_scatter" ... for messages. */
const char *pd_coll_kind_name(enum pd_coll_kind kind);

#endif
