#include "api/coll_args.h"
#include "api/intercoll.h"

#pragma weak MPI_Allreduce = PMPI_Allreduce

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static const char call[] = "MPI_Allreduce";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_allreduce(call, sendbuf, recvbuf, count, datatype, op,
                                  comm, NULL);
    PD_CHECK(pd_check_allreduce_args(comm, call, sendbuf, recvbuf, count,
                                     datatype, op));
    size_t bytes = (size_t)count * pd_type_size(datatype);
    struct pd_coll c = { .kind = PD_COLL_ALLREDUCE, .comm = comm,
                         .sendbuf = pd_coll_sendbuf(sendbuf),
                         .recvbuf = pd_coll_buf(recvbuf), .count = (size_t)count,
                         .type = datatype, .op = op, .root = -1 };
    return pd_api_coll(call, &c, &(struct pd_agree){ .type = datatype, .bytes = bytes,
                                                     .stat_bytes = bytes },
                       NULL);
}
