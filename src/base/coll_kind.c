#include "base/coll_kind.h"

const char *pd_coll_kind_name(enum pd_coll_kind kind)
{
    static const char *const names[PD_COLL_KINDS] = {
        [PD_COLL_NONE] = "no call", [PD_COLL_ALLREDUCE] = "allreduce",
        [PD_COLL_REDUCE] = "reduce", [PD_COLL_BCAST] = "broadcast",
        [PD_COLL_ALLGATHER] = "allgather",
        [PD_COLL_ALLGATHERV] = "allgatherv", [PD_COLL_GATHERV] = "gather",
        [PD_COLL_SCATTERV] = "scatter", [PD_COLL_ALLTOALLV] = "alltoall",
        [PD_COLL_REDUCE_SCATTER] = "reduce_scatter", [PD_COLL_SCAN] = "scan",
        [PD_COLL_EXSCAN] = "exscan", [PD_COLL_BARRIER] = "barrier",
    };
    return (unsigned)kind < PD_COLL_KINDS ? names[kind] : "an unknown call";
}
