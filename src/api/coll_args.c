#include <stdio.h>

#include "api/coll_args.h"

int pd_check_side(MPI_Comm comm, const char *call, const void *buf, int count,
                  MPI_Datatype type, const char *side)
{
    char what[32];
    snprintf(what, sizeof(what), "%scount", side);
    PD_CHECK(pd_check_count(comm, call, count, what));
    snprintf(what, sizeof(what), "%stype", side);
    PD_CHECK(pd_check_data_type(comm, call, type, what));
    snprintf(what, sizeof(what), "%sbuf", side);
    return pd_check_buffer(comm, call, buf, count, what);
}

int pd_check_same_bytes(MPI_Comm comm, const char *call, size_t sent,
                        size_t expected, int peer)
{
    if (sent == expected)
        return MPI_SUCCESS;
    return pd_raise(comm, call, MPI_ERR_TRUNCATE,
                    "the type signatures do not match: %zu bytes sent for "
                    "rank %d's block but %zu expected", sent, peer, expected);
}
