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

int pd_check_blocks(MPI_Comm comm, const char *call, const void *sendbuf,
                    int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, size_t *bytes)
{
    PD_CHECK(pd_check_side(comm, call, recvbuf, recvcount, recvtype, "recv"));
    *bytes = (size_t)recvcount * pd_type_extent(recvtype);
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    PD_CHECK(pd_check_side(comm, call, sendbuf, sendcount, sendtype, "send"));
    return pd_check_same_bytes(comm, call,
                               (size_t)sendcount * pd_type_extent(sendtype),
                               *bytes, comm->rank);
}
