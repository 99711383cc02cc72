#include "api/api.h"
#include "api/intercoll.h"

#pragma weak MPI_Bcast = PMPI_Bcast

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm)
{
    static const char call[] = "MPI_Bcast";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (pd_comm_is_inter(comm))
        return pd_inter_bcast(call, buffer, count, datatype, root, comm,
                              NULL);
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, datatype, "datatype"));
    PD_CHECK(pd_check_root(comm, call, root));
    PD_CHECK(pd_check_buffer(comm, call, buffer, count, datatype, "buffer"));
    size_t bytes = (size_t)count * pd_type_packed(datatype);
    struct pd_coll c = { .kind = PD_COLL_BCAST, .comm = comm,
                         .recvbuf = pd_coll_buf(buffer), .count = bytes, .root = root,
                         .signature = pd_type_signature(datatype) };
    return pd_api_coll(call, &c, &(struct pd_agree){
        datatype, (size_t)count * pd_type_size(datatype), bytes, NULL,
        datatype, NULL }, NULL);
}
