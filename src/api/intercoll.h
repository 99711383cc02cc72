/*
 * The collectives on intercommunicators (api/intercoll.c): the entry
 * points hand an intercommunicator here after checking it is one. Each
 * checks the arguments MPI makes significant on its side; NULL count
 * arrays mean the fixed-size form. With request NULL the call runs now;
 * else the intercommunicator's progress thread runs it in its turn and
 * *request completes then.
 */
#ifndef PD_API_INTERCOLL_H
#define PD_API_INTERCOLL_H

#include "api/api.h"

int pd_inter_barrier(const char *call, MPI_Comm comm, MPI_Request *request);
int pd_inter_bcast(const char *call, void *buffer, int count,
                   MPI_Datatype type, int root, MPI_Comm comm,
                   MPI_Request *request);
int pd_inter_gather(const char *call, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    const int *recvcounts, const int *displs,
                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request);
int pd_inter_scatter(const char *call, const void *sendbuf, int sendcount,
                     const int *sendcounts, const int *displs,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request);
int pd_inter_allgather(const char *call, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       const int *recvcounts, const int *displs,
                       MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request);
/* Alltoall (counts NULL), alltoallv (types NULL), alltoallw. */
int pd_inter_alltoall(const char *call, const void *sendbuf, int sendcount,
                      const int *sendcounts, const int *sdispls,
                      const MPI_Datatype *sendtypes, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, const int *recvcounts,
                      const int *rdispls, const MPI_Datatype *recvtypes,
                      MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request);
int pd_inter_reduce(const char *call, const void *sendbuf, void *recvbuf,
                    int count, MPI_Datatype type, MPI_Op op, int root,
                    MPI_Comm comm,
                    MPI_Request *request);
int pd_inter_allreduce(const char *call, const void *sendbuf, void *recvbuf,
                       int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm,
                       MPI_Request *request);
/* Reduce_scatter_block (recvcounts NULL) and reduce_scatter. */
int pd_inter_reduce_scatter(const char *call, const void *sendbuf,
                            void *recvbuf, int recvcount,
                            const int *recvcounts, MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm,
                            MPI_Request *request);

#endif
