/*
 * Requests of nonblocking collectives. A request carries its call's
 * arguments; the communicator's progress thread runs it (service/progress.c)
 * and marks it done; MPI_Wait/MPI_Test observe that.
 */
#ifndef PD_SERVICE_REQUEST_H
#define PD_SERVICE_REQUEST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "coll/coll.h"
#include "core/type_stage.h"

/* A receive waiting for its message, in its communicator's matching
 * (service/p2p.c): in its request's state, or on the stack of a blocking
 * receive, either of which outlives it. */
struct pd_posted {
    int src;
    int tag;
    void *buf;
    size_t capacity;
    /* The request's state, not its handle: MPI_Request_free lets go of
     * the handle of a receive still posted, whose state stays until the
     * receive completes. */
    struct pd_request_state *st;
    struct pd_posted *next;
};

struct pd_request_state {
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    bool done;
    bool user_freed;            /* MPI_Request_free before completion */
    struct ompi_communicator_t *comm;
    const char *call;
    struct pd_coll coll;            /* a nonblocking collective, or */
    struct pd_p2p_send *send;       /* a posted send to wait for */
    bool collective;                /* coll is the request's call */
    bool coll_refs;                 /* ... holding coll.type and coll.op
                                       until the request is freed */
    int *coll_arrays;               /* coll's count and displacement
                                       arrays, copied (api/coll_call.c) */
    bool receive;                   /* an MPI_Irecv (MPI_Cancel takes it
                                       back while no message matched it) */
    bool sync_send;                 /* a synchronous send, which waits for
                                       its receipt: a send's status */
    MPI_Status status;          /* receives: source, tag, byte count */
    /* Receives: looked at every PD_REQUEST_WATCH_MS of a blocking wait
     * (a peer that died, PDMPI_TIMEOUT); may complete the request. */
    void (*watch)(struct ompi_request_t *req, int64_t waiting_since_ms);
    bool has_status;
    /* A receive into device memory lands in stage_host first; the user's
     * thread copies it to stage_device when it finishes the request. */
    void *stage_host;
    void *stage_device;
    int (*unstage)(struct pd_request_state *st, bool deliver,
                   struct pd_fail *fail);
    /* Buffers of non-contiguous datatypes: the call ran on their packed
     * copies; finishing it unpacks what it received (api/stage.c). */
    struct pd_type_stage *type_stages;
    /* A persistent request (MPI_Send_init & co.): start makes the
     * operation's request, active, from the arguments it was made with
     * (persistent_args, freed with it); inactive while active is NULL.
     * The completion calls look at active in its place, and finishing
     * it leaves this request inactive, not freed. */
    bool persistent;
    struct ompi_request_t *active;
    void *persistent_args;
    /* A generalized request (MPI_Grequest_start): the user's callbacks,
     * which give its status when it is finished, free its state when it
     * is let go of, and take it back on MPI_Cancel. */
    MPI_Grequest_query_function *greq_query;
    MPI_Grequest_free_function *greq_free;
    MPI_Grequest_cancel_function *greq_cancel;
    void *greq_extra;
    /* An Isend through the shared-memory queues (service/p2p_shm.c):
     * the send, its local rank, and its comm rank and tag for messages. */
    void *queued;
    int queued_to, queued_dst, queued_tag;
    /* A call made of point-to-point requests (a neighbourhood
     * collective's sends and receives): done when each of its nparts
     * parts is; finishing it finishes them, and its failure is the
     * first of theirs. */
    struct ompi_request_t **parts;
    int nparts;
    /* A receive on an intercommunicator runs on its private union, whose
     * ranks are the remote group's plus this: the status names the
     * sender's rank in the remote group. */
    int source_shift;
    /* A call the communicator's progress thread runs in its turn (a
     * nonblocking collective on an intercommunicator): run with args,
     * its failure into fail; args freed by args_free with the request. */
    int (*deferred)(void *args, struct pd_fail *fail);
    void *deferred_args;
    void (*deferred_free)(void *args);
    struct pd_request_state *next;  /* progress queue link */
    /* Made where waiting threads poll (the shared-memory queues'
     * hooks are set), so nobody sleeps on its condition: its lock and
     * condition are never made, done is a store, and handoff settles
     * whether the completer or MPI_Request_free lets go of the state. */
    bool lock_free;
    _Atomic unsigned handoff;       /* PD_HANDOFF_* */
    /* A nonblocking receive's entry in the matching, and the handle the
     * program holds (pd_request_new): no allocations of their own. */
    struct pd_posted posted;
    struct ompi_request_t handle;
    /* fail.errclass MPI_SUCCESS when it worked. Last: a new request
     * clears what comes before its reason's kilobyte, not the whole. */
    struct pd_fail fail;
};

#define PD_HANDOFF_DONE 1u      /* pd_request_complete ran */
#define PD_HANDOFF_FREED 2u     /* pd_request_release ran */

/* A new, not yet started request for call on comm; NULL if out of memory. */
struct ompi_request_t *pd_request_new(struct ompi_communicator_t *comm,
                                      const char *call);
/* A request on the caller's stack (req, st), for a blocking call that
 * waits for it and is done with it before it returns: no handle, nothing
 * allocated. Finish it with pd_request_finish_local. */
void pd_request_init_local(struct ompi_request_t *req,
                           struct pd_request_state *st,
                           struct ompi_communicator_t *comm, const char *call);
/* Its status (source, tag, count) and failure, once done; the class. */
int pd_request_finish_local(struct ompi_request_t *req, MPI_Status *status,
                            struct pd_fail *fail);
/* A request for call on comm that is complete already (a call whose work
 * is done when it returns); NULL if out of memory. */
struct ompi_request_t *pd_request_new_done(struct ompi_communicator_t *comm,
                                           const char *call);
/* The progress thread's end of a request: record the outcome, wake
 * waiters, and free it if the user already let go of it. */
void pd_request_complete(struct pd_request_state *st);

bool pd_request_is_valid(const struct ompi_request_t *req);
bool pd_request_is_null(const struct ompi_request_t *req);
/* MPI_REQUEST_NULL, or a persistent request not started: what the
 * any/some completion calls pass over. */
bool pd_request_is_inactive(const struct ompi_request_t *req);
/* Non-blocking look. */
bool pd_request_is_done(struct ompi_request_t *req);
#define PD_REQUEST_WATCH_MS 100

/* Block until done. */
void pd_request_wait_done(struct ompi_request_t *req);

/*
 * Requests that complete only while some thread of the process polls
 * (service/p2p.c's shared-memory queues have no receiving thread): the
 * waits call poll, and idle between polls on a doorbell that any
 * progress rings. Set at MPI_Init, before any request exists; NULL
 * (MPI_Finalize) unsets it.
 */
struct pd_request_progress {
    bool (*poll)(void);                 /* one look; whether anything moved */
    uint32_t (*bell)(void);             /* read before a poll ... */
    void (*idle)(uint32_t bell, int64_t waited_ns); /* ... then pause */
    void (*wake)(void);                 /* a request completed: ring */
};
void pd_request_set_progress(const struct pd_request_progress *progress);
/* A look at the queues (nothing where none are set); returns the bell to
 * pause with if nothing completed. */
uint32_t pd_request_poll(void);
/* A waiting loop's pause: idle on bell, or a 20 us sleep. */
void pd_request_pause(uint32_t bell, int64_t waited_ns);
/* A done request's status (source, tag, count; MPI_ERROR as it was) into
 * *status, the request left as it is (MPI_Request_get_status). */
void pd_request_status(const struct ompi_request_t *req, MPI_Status *status);
/* A done request's outcome into *status (if not MPI_STATUS_IGNORE); the
 * request is released and *handle becomes MPI_REQUEST_NULL. Returns the
 * outcome's error class; *fail holds the message. */
int pd_request_finish(MPI_Request *handle, MPI_Status *status,
                      struct pd_fail *fail);
/* MPI_Request_free: release now if done, else when it completes (a
 * generalized request's handle stays until MPI_Grequest_complete, which
 * then drops it with pd_request_drop_handle). */
void pd_request_drop_handle(struct ompi_request_t *req);
void pd_request_release(MPI_Request *handle);
void pd_status_set_empty(MPI_Status *status, int error);

#endif
