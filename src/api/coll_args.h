/*
 * Checks shared by the collectives that move blocks of data (gather,
 * scatter, all-to-all and their v-variants): one side's (buffer, count,
 * type) and the rule that both sides' type signatures match in bytes.
 */
#ifndef PD_API_COLL_ARGS_H
#define PD_API_COLL_ARGS_H

#include "api/api.h"

/* Which arguments a pd_check_side names in its messages. */
enum pd_side {
    PD_SIDE_SEND,                   /* sendbuf, sendcount, sendtype */
    PD_SIDE_RECV,                   /* recvbuf, recvcount, recvtype */
    PD_SIDE_ONE,                    /* buf, count, type */
};

/* buf/count/type as one side of a block transfer. */
int pd_check_side(MPI_Comm comm, const char *call, const void *buf, int count,
                  MPI_Datatype type, enum pd_side side);
/* Bytes sent must equal bytes expected: MPI_ERR_TRUNCATE otherwise. */
int pd_check_same_bytes(MPI_Comm comm, const char *call, size_t sent,
                        size_t expected, int peer);

/* MPI_IN_PLACE as buf (named what) is the root's alone. */
int pd_check_in_place_at_root(MPI_Comm comm, const char *call, const void *buf,
                              int root, const char *what);

/* The arguments of MPI_Allreduce and MPI_Iallreduce. */
int pd_check_allreduce_args(MPI_Comm comm, const char *call,
                            const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype type, MPI_Op op);
/* The arguments of MPI_Reduce and MPI_Ireduce (recvbuf matters at the
 * root only; MPI_IN_PLACE is the root's alone). */
int pd_check_reduce_args(MPI_Comm comm, const char *call, const void *sendbuf,
                         void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root);

/* Both sides of a fixed-size block exchange (allgather, alltoall): the
 * receive side always, the send side unless sendbuf is MPI_IN_PLACE, and
 * the same bytes per block both ways. *bytes is one block's size. */
int pd_check_blocks(MPI_Comm comm, const char *call, const void *sendbuf,
                    int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, size_t *bytes);

/* Reduce_scatter and its block and nonblocking forms (api/reduce_scatter.c):
 * counts NULL means every rank keeps block elements; total is the sum. */
int pd_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                      const int *counts, size_t block, size_t total,
                      MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                      MPI_Request *request);

#endif
