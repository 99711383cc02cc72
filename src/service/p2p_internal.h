/*
 * Point-to-point matching state shared by its two transports: the host
 * backend's message stream (p2p.c) and the shared-memory queues between
 * the ranks of one host (p2p_shm.c).
 */
#ifndef PD_SERVICE_P2P_INTERNAL_H
#define PD_SERVICE_P2P_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/shm/pairs.h"
#include "service/p2p.h"

/* A large message of a rank of this host whose data is still with its
 * sender: where to fetch it, and what to acknowledge. */
struct pd_rts {
    int from;                       /* the sender's local rank */
    struct pd_pair_msg m;
    char name[96];                  /* PD_PULL_FILE: the file */
};

/* A message that arrived before a receive matched it: its data, or
 * (rts non-NULL) where the data is. */
struct pd_message {
    int src;
    int tag;
    void *data;
    size_t bytes;
    struct pd_rts *rts;
    struct pd_message *next;
};

struct pd_p2p {
    pthread_mutex_t lock;
    pthread_cond_t arrived;         /* for MPI_Probe */
    struct pd_message *unexpected, **unexpected_tail;
    struct pd_posted *posted, **posted_tail;
    bool receiving;                 /* the backend's thread runs */
    bool broken;                    /* ... and has failed: */
    char broken_why[512];
    struct ompi_communicator_t *comm;
    uint64_t cid;                   /* the queues' name for comm */
    struct pd_p2p *next_known;      /* p2p_shm.c's list */
};

bool pd_p2p_matches(int want_src, int want_tag, int src, int tag);

/* Why a receive from peer (or MPI_ANY_SOURCE), or a send to peer, on comm
 * can no longer be waited for: a rank it waits for is a process of this
 * host that has ended, or one of another host that the job's store no
 * longer sees (asked every PD_REMOTE_CHECK_MS), or PDMPI_TIMEOUT has
 * passed since waiting began. Empty: go on. */
void pd_p2p_hopeless(struct ompi_communicator_t *comm, int peer, int tag,
                     bool sending, int64_t since, char *why, size_t len);

/* Complete posted with bytes at data from src (lock held; data NULL:
 * already in posted's buffer); frees posted, not data. */
void pd_p2p_fill(struct pd_posted *posted, int src, int tag,
                 const void *data, size_t bytes);
/* Fail posted with why (lock held); frees posted. */
void pd_p2p_fail_posted(struct pd_posted *posted, const char *why);
/* Queue m as unexpected (lock held) and wake probes. */
void pd_p2p_queue_unexpected(struct pd_p2p *p, struct pd_message *m);
/* The first posted receive matching (src, tag), taken off the list
 * (lock held); NULL when none. */
struct pd_posted *pd_p2p_take_posted(struct pd_p2p *p, int src, int tag);

/* ---- p2p_shm.c ---------------------------------------------------------- */

/* The queues are open (MPI_Init found ranks of this host). */
bool pd_p2p_shm_active(void);
/* comm rank r's local rank when it runs on this host (and is not this
 * process); else -1. */
int pd_p2p_shm_local(struct ompi_communicator_t *comm, int r);
/* Send through the queues to local rank `to` (comm rank dst of the
 * communicator the queues call cid). */
int pd_p2p_shm_send(struct ompi_communicator_t *comm, uint64_t cid,
                    const void *buf, size_t bytes, int dst, int to, int tag,
                    MPI_Request *request, const char *call,
                    struct pd_fail *fail);
/* pd_p2p_send_streamed to local rank `to`. */
int pd_p2p_shm_send_stream(struct ompi_communicator_t *comm, uint64_t cid,
                           struct pd_type_stage *stage, size_t bytes, int dst,
                           int to, int tag, MPI_Request *request,
                           const char *call, bool *streamed,
                           struct pd_fail *fail);
/* A blocking send's quickest way: an eager message to a rank of this
 * host written into its ring now; false where it cannot go so (another
 * host, too large, an earlier send waiting for room): then send as
 * usual. */
bool pd_p2p_shm_send_now(struct ompi_communicator_t *comm, uint64_t cid,
                         const void *buf, size_t bytes, int dst, int tag);
/* A blocking receive's quickest way: from local rank `from` (comm rank
 * src of p's communicator), with no receive posted and nothing queued on
 * p, the eager message at the head of from's ring taken straight into
 * buf if it matches tag and fits, waiting for it a moment (as long as a
 * waiting rank polls). True with its tag and bytes; false where it must
 * go the usual way (another message first, a large or synchronous one,
 * nothing yet, another thread draining). */
bool pd_p2p_shm_recv_now(struct pd_p2p *p, int src, int from, int tag,
                         void *buf, size_t capacity, int *got_tag,
                         size_t *got_bytes);
/* p's comm takes messages now: what arrived for it before is queued. */
void pd_p2p_shm_register(struct pd_p2p *p);
/* A receive was posted that no message matched yet: the helper takes
 * what arrives while the program is elsewhere. */
void pd_p2p_shm_receive_posted(void);
void pd_p2p_shm_unregister(struct pd_p2p *p);
/* Complete posted from an RTS: fetch, acknowledge. Frees
 * posted, not the RTS. */
void pd_p2p_shm_fetch(struct pd_posted *posted, int src, int tag,
                      struct pd_rts *rts);
/* The same for a receive matched to an RTS that waited in the unexpected
 * queue, by the next poll of any thread or by the helper: the receive
 * call itself returns at once. Takes the RTS. */
void pd_p2p_shm_fetch_later(struct pd_posted *posted, int src, int tag,
                            struct pd_rts *rts);
/* An RTS nobody will receive (its communicator freed): let the sender
 * go. Frees it. */
void pd_p2p_shm_drop(struct pd_rts *rts);

#endif
