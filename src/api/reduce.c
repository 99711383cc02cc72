#include "api/coll_args.h"
#include "api/intercoll.h"

#pragma weak MPI_Reduce = PMPI_Reduce

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_reduce(call, sendbuf, recvbuf, count, datatype, op,
                               root, comm, NULL);
    PD_CHECK(pd_check_reduce_args(comm, call, sendbuf, recvbuf, count,
                                  datatype, op, root));
    size_t bytes = (size_t)count * pd_type_size(datatype);
    struct pd_coll c = { .kind = PD_COLL_REDUCE, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = comm->rank == root ? pd_coll_buf(recvbuf) : NULL,
                         .count = (size_t)count, .type = datatype, .op = op,
                         .root = root };
    return pd_api_coll(call, &c, &(struct pd_agree){ .type = datatype, .bytes = bytes,
                                                     .stat_bytes = bytes },
                       NULL);
}
