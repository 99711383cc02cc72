/*
 * Point-to-point messages: the matching of MPI's (source, tag,
 * communicator) rules on top of the backend's ordered message stream.
 * Every message that arrives is taken at once by the backend's receiving
 * thread: it completes a posted receive that matches, or waits in the
 * unexpected queue for one, in arrival order -- so messages between two
 * ranks on one communicator never overtake each other.
 */
#ifndef PD_SERVICE_P2P_H
#define PD_SERVICE_P2P_H

#include "service/request.h"

/* Send bytes to dst (a rank of comm, possibly this one). With request
 * NULL, return once the peer has the message; else start it and let
 * *request complete it. */
int pd_p2p_send(struct ompi_communicator_t *comm, const void *buf,
                size_t bytes, int dst, int tag, MPI_Request *request,
                const char *call, struct pd_fail *fail);
/* From this many bytes a send of a non-contiguous type to another host
 * is packed piece by piece as it is written (pd_p2p_send_streamed):
 * where a packed copy of the whole would weigh, as on this host. It
 * saves memory, not time (backend/gloo/gloo_adapter.cc). */
#define PD_P2P_NET_STREAM_MIN ((size_t)4 << 20)
/* Whether a send of bytes at buf (packed) to dst may be packed piece by
 * piece while it moves (pd_p2p_send_streamed): host memory, and a large
 * message to another rank. */
bool pd_p2p_may_stream(struct ompi_communicator_t *comm, int dst,
                       const void *buf, size_t bytes);
/* Send the bytes that stage's in-blocks pack to (a stage without a
 * scratch buffer) to dst, packed piece by piece: on this host as the
 * receiver reads them (backend/shm/pairs.h), to another host as they are
 * written to its connection (synchronous: then complete when the
 * receiver's receipt comes; on this host a send is complete only once
 * the receiver has read it all). request NULL: blocking, stage the
 * caller's still; else *request completes the send and owns stage.
 * *streamed false: not possible now, nothing sent, stage still the
 * caller's; send it packed whole. */
int pd_p2p_send_streamed(struct ompi_communicator_t *comm,
                         struct pd_type_stage *stage, size_t bytes, int dst,
                         int tag, bool synchronous, MPI_Request *request,
                         const char *call, bool *streamed,
                         struct pd_fail *fail);
/* A blocking send's quickest way, tried first: a small host message to a
 * rank of this host on a communicator that has sent or received before,
 * written into shared memory now. False: send with pd_p2p_send. */
bool pd_p2p_send_now(struct ompi_communicator_t *comm, const void *buf,
                     size_t bytes, int dst, int tag);
int pd_p2p_wait_send(struct ompi_communicator_t *comm, struct pd_p2p_send *send,
                     struct pd_fail *fail);

/*
 * Synchronous sends: the message's tag carries PD_TAG_SYNC, and the
 * receive that matches it sends back an empty receipt with tag
 * PD_TAG_RECEIPT(tag) -- negative, so no receive of the program matches
 * it; the send completes when its receipt arrives. Receipts of one tag
 * come back in the order the messages were matched, which for one
 * sender, receiver and tag is the order they were sent.
 */
#define PD_TAG_SYNC (1 << 30)
#define PD_TAG_RECEIPT(tag) (-2 - (tag))
/* The neighbourhood collectives' messages (api/neighbor.c): negative
 * too, and below every receipt's tag; k tells apart messages that one
 * pair of ranks exchanges in one call along different directions. */
#define PD_TAG_NEIGHBOR(k) (-(1 << 30) - 16 - (k))
/* The messages of collectives on an intercommunicator, which travel on
 * its private union of both groups (api/intercoll.c): below every
 * receipt's tag, and no neighbourhood collective runs there. */
#define PD_TAG_INTER (-(1 << 30) - 8)

/* Start a synchronous send of bytes to dst; *request completes when a
 * receive has matched it. */
int pd_p2p_issend(struct ompi_communicator_t *comm, const void *buf,
                  size_t bytes, int dst, int tag, MPI_Request *request,
                  const char *call, struct pd_fail *fail);
/* Start taking comm's messages from the network now (a communicator
 * that needs it, when it is made): a sender must not wait for this rank's
 * first point-to-point call, which may come after a collective that
 * waits for the sender. */
int pd_p2p_listen(struct ompi_communicator_t *comm, struct pd_fail *fail);
/* A nonblocking receive was posted and its caller goes on: messages for
 * it are taken while the caller is elsewhere (a blocking receive's own
 * thread takes them while it waits). */
void pd_p2p_receive_left(void);
/* Send the receipts of the synchronous messages receives have matched
 * (called where no matching lock is held). */
void pd_p2p_send_receipts(void);

/* Post a receive of at most capacity bytes from src (or MPI_ANY_SOURCE)
 * with tag (or MPI_ANY_TAG); *request completes with the status. stage:
 * where buf is the scratch buffer of a non-contiguous receive (else
 * NULL), its stage, the request's once this succeeds (unpacked as the
 * request completes, or piece by piece as a message streams in). */
int pd_p2p_irecv(struct ompi_communicator_t *comm, void *buf, size_t capacity,
                 struct pd_type_stage *stage, int src, int tag,
                 MPI_Request *request, const char *call,
                 struct pd_fail *fail);

/* MPI_Recv's own: the same receive, waited for here on a request of the
 * stack, its status into *status. 1 (nothing done) when buf is device
 * memory: use pd_p2p_irecv then. */
int pd_p2p_recv(struct ompi_communicator_t *comm, void *buf, size_t capacity,
                int src, int tag, MPI_Status *status, const char *call,
                struct pd_fail *fail);

/* MPI_Cancel of an MPI_Irecv request: true when no message had matched
 * it yet, and it is now complete, its status cancelled; false when a
 * message had (the receive completes as usual). */
bool pd_p2p_cancel_recv(struct ompi_request_t *req);

/* A message a matched probe took off the matching: no receive but the
 * MPI_Mrecv given its handle can have it. */
struct pd_message;

/* Look for a matching message not yet received: *found, and its status.
 * With block, wait until one arrives. With taken (MPI_Mprobe), the
 * message found is taken off the matching and *taken is it. */
int pd_p2p_probe(struct ompi_communicator_t *comm, int src, int tag,
                 bool block, int *found, MPI_Status *status,
                 struct pd_message **taken, struct pd_fail *fail);

/* Receive m, taken by a matched probe on comm, into at most capacity
 * bytes at buf (stage: as for pd_p2p_irecv); *request completes with the
 * status. Frees m. */
int pd_p2p_mrecv(struct ompi_communicator_t *comm, struct pd_message *m,
                 void *buf, size_t capacity, struct pd_type_stage *stage,
                 MPI_Request *request, const char *call,
                 struct pd_fail *fail);

/* Messages on comm may travel over the host backend's connections (a
 * rank of another host, or no shared-memory queues to reach one). */
bool pd_p2p_needs_network(struct ompi_communicator_t *comm);

/* MPI_Init: the shared-memory queues between the ranks of this host
 * (collective over the world; nothing where PDMPI_SHM or PDMPI_SHM_P2P
 * is 0 or a rank is alone on its host). MPI_Finalize: let go of them. */
int pd_p2p_shm_open(struct pd_fail *fail);
void pd_p2p_shm_close(void);

/* MPI_Comm_free / MPI_Finalize: stop receiving, drop what is queued. */
void pd_p2p_release(struct ompi_communicator_t *comm);

#endif
