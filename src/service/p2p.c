#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/hash.h"
#include "service/p2p_internal.h"
#include "service/progress.h"
#include "core/runtime.h"
#include "route/route.h"

static int pd_p2p_send_host(struct ompi_communicator_t *comm, const void *buf,
                            size_t bytes, int dst, int tag,
                            MPI_Request *request, const char *call,
                            struct pd_fail *fail);

bool pd_p2p_matches(int want_src, int want_tag, int src, int tag)
{
    /* A receipt: only the synchronous send waiting for it takes it. */
    if (tag < 0)
        return want_tag == tag && want_src == src;
    return (want_src == MPI_ANY_SOURCE || want_src == src) &&
           (want_tag == MPI_ANY_TAG || want_tag == (tag & ~PD_TAG_SYNC));
}

static void pd_status_for(MPI_Status *status, int src, int tag, size_t bytes)
{
    status->MPI_SOURCE = src;
    status->MPI_TAG = tag >= 0 ? tag & ~PD_TAG_SYNC : tag;
    /* MPI_ERROR is the caller's (a probe's) to keep. */
    status->_cancelled = 0;
    status->_ucount = bytes;
}

/* Receipts owed for synchronous messages that receives have matched,
 * sent by pd_p2p_send_receipts outside the matching locks. */
struct pd_receipt {
    struct ompi_communicator_t *comm;
    int dst, tag;
    struct pd_receipt *next;
};
static struct pd_receipt *pd_receipts;
static pthread_mutex_t pd_receipts_lock = PTHREAD_MUTEX_INITIALIZER;

static void pd_owe_receipt(struct ompi_communicator_t *comm, int dst, int tag)
{
    struct pd_receipt *r = malloc(sizeof(*r));
    if (r == NULL)
        abort(); /* a lost receipt would hang its sender */
    pthread_mutex_lock(&pd_receipts_lock);
    *r = (struct pd_receipt){ comm, dst, PD_TAG_RECEIPT(tag), pd_receipts };
    pd_receipts = r;
    pthread_mutex_unlock(&pd_receipts_lock);
}

void pd_p2p_send_receipts(void)
{
    if (__atomic_load_n(&pd_receipts, __ATOMIC_ACQUIRE) == NULL)
        return;
    pthread_mutex_lock(&pd_receipts_lock);
    struct pd_receipt *r = pd_receipts, *reversed = NULL;
    pd_receipts = NULL;
    pthread_mutex_unlock(&pd_receipts_lock);
    while (r != NULL) {             /* oldest first */
        struct pd_receipt *next = r->next;
        r->next = reversed;
        reversed = r;
        r = next;
    }
    for (r = reversed; r != NULL; r = reversed) {
        reversed = r->next;
        MPI_Request req = NULL;
        struct pd_fail fail;
        /* A receipt that cannot be sent leaves its sender to find the
         * failure (the peer is gone, or its watch times out). */
        if (pd_p2p_send_host(r->comm, NULL, 0, r->dst, r->tag, &req,
                             "MPI_Ssend", &fail) == MPI_SUCCESS &&
            req != NULL)
            pd_request_release(&req);
        free(r);
    }
}

void pd_p2p_fill(struct pd_posted *posted, int src, int tag,
                 const void *data, size_t bytes)
{
    struct pd_request_state *st = posted->st;
    if (tag >= 0 && (tag & PD_TAG_SYNC))
        pd_owe_receipt(st->comm, src, tag & ~PD_TAG_SYNC);
    size_t copied = bytes <= posted->capacity ? bytes : posted->capacity;
    if (copied > 0 && data != NULL)
        memcpy(posted->buf, data, copied);
    pd_status_for(&st->status, src, tag, copied);
    st->has_status = true;
    if (bytes > posted->capacity)
        pd_fail_set(&st->fail, MPI_ERR_TRUNCATE,
                    "a message of %zu bytes from rank %d (tag %d) does not "
                    "fit the %zu-byte receive buffer", bytes, src, tag,
                    posted->capacity);
    /* Once complete, its waiter may return and its state go: posted
     * (in one or the other) is not touched after. */
    pd_request_complete(st);
}

void pd_p2p_fail_posted(struct pd_posted *posted, const char *why)
{
    struct pd_request_state *st = posted->st;
    pd_fail_set(&st->fail, MPI_ERR_OTHER, "%s", why);
    pd_request_complete(st);
}

void pd_p2p_queue_unexpected(struct pd_p2p *p, struct pd_message *m)
{
    m->next = NULL;
    *p->unexpected_tail = m;
    p->unexpected_tail = &m->next;
    pthread_cond_broadcast(&p->arrived);
}

/* The link to the first posted receive matching (src, tag), or NULL
 * (lock held). */
static struct pd_posted **pd_posted_find(struct pd_p2p *p, int src, int tag)
{
    for (struct pd_posted **q = &p->posted; *q != NULL; q = &(*q)->next)
        if (pd_p2p_matches((*q)->src, (*q)->tag, src, tag))
            return q;
    return NULL;
}

/* The posted receive at link q, taken off the list (lock held). */
static struct pd_posted *pd_posted_unlink(struct pd_p2p *p,
                                          struct pd_posted **q)
{
    struct pd_posted *posted = *q;
    *q = posted->next;
    if (*q == NULL)
        p->posted_tail = q;
    return posted;
}

struct pd_posted *pd_p2p_take_posted(struct pd_p2p *p, int src, int tag)
{
    struct pd_posted **q = pd_posted_find(p, src, tag);
    return q != NULL ? pd_posted_unlink(p, q) : NULL;
}

/* A message taken from the unexpected queue into posted (lock held). */
static void pd_receive_queued(struct pd_posted *posted, struct pd_message *m)
{
    if (m->rts != NULL) {
        pd_p2p_shm_fetch_later(posted, m->src, m->tag, m->rts);
    } else {
        pd_p2p_fill(posted, m->src, m->tag, m->data, m->bytes);
        free(m->data);
    }
    free(m);
}

/* A large message from the network whose header is in: the first
 * receive that matches it, taken for it where its buffer holds the whole
 * message (a shorter one -- a truncation -- is matched on delivery, the
 * usual way, as nothing can come between from this sender). */
static void *pd_claim(void *ctx, int src, int tag, size_t bytes, void **token)
{
    struct pd_p2p *p = ctx;
    void *into = NULL;
    *token = NULL;
    pthread_mutex_lock(&p->lock);
    struct pd_posted **q = pd_posted_find(p, src, tag);
    if (q != NULL && (*q)->capacity >= bytes) {
        struct pd_posted *posted = pd_posted_unlink(p, q);
        *token = posted;
        into = posted->buf;
    }
    pthread_mutex_unlock(&p->lock);
    return into;
}

/* A large message for a posted receive of a non-contiguous type in host
 * memory, unpacked into the user's buffer as it comes (pd_take): the
 * receive's packed scratch buffer is never written. */
static bool pd_claim_pieces(void *ctx, int src, int tag, size_t bytes,
                            void **token)
{
    struct pd_p2p *p = ctx;
    *token = NULL;
    pthread_mutex_lock(&p->lock);
    struct pd_posted **q = pd_posted_find(p, src, tag);
    if (q != NULL && (*q)->capacity >= bytes &&
        (*q)->st->stage_host == NULL &&
        pd_stage_by_pieces((*q)->st->type_stages))
        *token = pd_posted_unlink(p, q);
    pthread_mutex_unlock(&p->lock);
    return *token != NULL;
}

static void pd_take(void *ctx, void *token, size_t from, size_t n,
                    const void *data)
{
    (void)ctx;
    const struct pd_posted *posted = token;
    pd_stage_unpack_piece(posted->st->type_stages, from, n, data);
}

static void pd_unclaim(void *ctx, void *token, const char *why)
{
    struct pd_p2p *p = ctx;
    pthread_mutex_lock(&p->lock);
    pd_p2p_fail_posted(token, why);
    pthread_mutex_unlock(&p->lock);
}

/* The backend's receiving thread hands over each message here. */
static void pd_deliver(void *ctx, int src, int tag, void *data, size_t bytes,
                       void *token)
{
    struct pd_p2p *p = ctx;
    pthread_mutex_lock(&p->lock);
    if (token != NULL) {            /* read into the claimed receive */
        pd_p2p_fill(token, src, tag, NULL, bytes);
        pthread_mutex_unlock(&p->lock);
        pd_p2p_send_receipts();
        return;
    }
    if (src < 0) {
        /* The stream broke: nothing more will arrive. */
        p->broken = true;
        snprintf(p->broken_why, sizeof(p->broken_why), "%s",
                 data != NULL ? (char *)data : "the receiving side failed");
        free(data);
        pd_runtime_note_peer_lost();
        while (p->posted != NULL) {
            struct pd_posted *next = p->posted->next;
            pd_p2p_fail_posted(p->posted, p->broken_why);
            p->posted = next;
        }
        p->posted_tail = &p->posted;
        pthread_cond_broadcast(&p->arrived);
        pthread_mutex_unlock(&p->lock);
        return;
    }
    struct pd_posted *posted = pd_p2p_take_posted(p, src, tag);
    if (posted != NULL) {
        pd_p2p_fill(posted, src, tag, data, bytes);
        free(data);
        pthread_mutex_unlock(&p->lock);
        pd_p2p_send_receipts();
        return;
    }
    struct pd_message *m = malloc(sizeof(*m));
    if (m == NULL)
        abort(); /* the receiving thread has no one to report to */
    *m = (struct pd_message){ src, tag, data, bytes, NULL, NULL };
    pd_p2p_queue_unexpected(p, m);
    pthread_mutex_unlock(&p->lock);
}

void pd_p2p_hopeless(struct ompi_communicator_t *comm, int peer, int tag,
                     bool sending, int64_t since, char *why, size_t len)
{
    const char *role = sending ? "which this send goes to"
                               : "which this receive waits for";
    why[0] = '\0';
    for (int r = 0; r < comm->size; r++) {
        if (r == comm->rank || (peer != MPI_ANY_SOURCE && r != peer))
            continue;
        int w = pd_comm_world_rank(comm, r);
        if (pd_runtime_local_rank_gone(w)) {
            snprintf(why, len, "rank %d (%s, pid %d), %s, is gone", r,
                     pd_rt.host, pd_rt.world.pid_of[w], role);
            return;
        }
        char remote[400];
        if (pd_runtime_remote_rank_gone(w, remote, sizeof(remote))) {
            snprintf(why, len, "rank %d (another host, pid %d), %s, is "
                     "gone: %s", r, pd_rt.world.pid_of[w], role, remote);
            return;
        }
    }
    int64_t waited = pd_clock_ms() - since;
    if (pd_rt.config.timeout_ms <= 0 || waited <= pd_rt.config.timeout_ms)
        return;
    if (sending)
        snprintf(why, len, "rank %d did not take the message (tag %d) "
                 "within %lld ms (PDMPI_TIMEOUT bounds every wait)", peer,
                 tag, (long long)waited);
    else
        snprintf(why, len, "no message from %s%d (tag %d) within %lld ms "
                 "(PDMPI_TIMEOUT bounds every wait)",
                 peer == MPI_ANY_SOURCE ? "any rank of " : "rank ",
                 peer == MPI_ANY_SOURCE ? comm->size : peer, tag,
                 (long long)waited);
}

/* A blocking wait's look at a posted receive (request.h's watch). */
static void pd_watch_receive(struct ompi_request_t *req, int64_t since)
{
    struct ompi_communicator_t *comm = req->state->comm;
    struct pd_p2p *p = comm->state->p2p;
    pthread_mutex_lock(&p->lock);
    for (struct pd_posted **q = &p->posted; *q != NULL; q = &(*q)->next) {
        if ((*q)->st != req->state)
            continue;
        char why[600];
        pd_p2p_hopeless(comm, (*q)->src, (*q)->tag, false, since, why,
                        sizeof(why));
        if (why[0] != '\0')
            pd_p2p_fail_posted(pd_posted_unlink(p, q), why);
        break;
    }
    pthread_mutex_unlock(&p->lock);
}

/* Every other rank of comm runs on this host and the shared-memory
 * queues reach it: no socket is needed for comm's messages. */
static bool pd_p2p_all_local(struct ompi_communicator_t *comm)
{
    if (!pd_p2p_shm_active())
        return false;
    for (int r = 0; r < comm->size; r++)
        if (r != comm->rank && pd_p2p_shm_local(comm, r) < 0)
            return false;
    return true;
}

bool pd_p2p_needs_network(struct ompi_communicator_t *comm)
{
    /* A one-rank communicator only ever talks to itself. */
    return comm->size > 1 && !pd_p2p_all_local(comm);
}

/* comm's matching state; the backend's receiving thread started where a
 * rank of another host may send. */
static struct pd_p2p *pd_p2p_get(struct ompi_communicator_t *comm,
                                 struct pd_fail *fail)
{
    struct pd_comm_state *cs = comm->state;
    struct pd_p2p *p = __atomic_load_n(&cs->p2p, __ATOMIC_ACQUIRE);
    if (p != NULL)
        return p;
    const struct pd_backend_ops *ops = NULL;
    struct pd_backend_comm *bc = NULL;
    bool network = pd_p2p_needs_network(comm);
    if (network && pd_comm_backend(comm, &ops, &bc, fail) != MPI_SUCCESS)
        return NULL;
    pthread_mutex_lock(&cs->lock);
    p = cs->p2p;
    if (p == NULL && (p = calloc(1, sizeof(*p))) != NULL) {
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->arrived, NULL);
        p->unexpected_tail = &p->unexpected;
        p->posted_tail = &p->posted;
        p->comm = comm;
        p->cid = pd_fnv1a64(cs->id, strlen(cs->id));
        pd_p2p_shm_register(p);
        if (network) {
            struct pd_backend_error berr;
            berr.msg[0] = '\0';
            if (ops->p2p_start == NULL) {
                p->broken = true;
                snprintf(p->broken_why, sizeof(p->broken_why),
                         "the %s backend has no point-to-point messages",
                         ops->name);
            } else if (ops->p2p_start(bc, &(struct pd_p2p_sink){
                                              p, pd_claim, pd_deliver,
                                              pd_unclaim, pd_claim_pieces,
                                              pd_take },
                                      &berr) != 0) {
                p->broken = true;
                snprintf(p->broken_why, sizeof(p->broken_why), "%s", berr.msg);
            } else {
                p->receiving = true;
            }
        }
        __atomic_store_n(&cs->p2p, p, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&cs->lock);
    if (p == NULL)
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
    return p;
}

int pd_p2p_wait_send(struct ompi_communicator_t *comm, struct pd_p2p_send *send,
                     struct pd_fail *fail)
{
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    if (pd_comm_backend(comm, &ops, &bc, fail) != MPI_SUCCESS)
        return fail->errclass;
    struct pd_backend_error berr;
    berr.msg[0] = '\0';
    int status = ops->p2p_wait(bc, send, &berr);
    if (status == PD_BACKEND_OK)
        return MPI_SUCCESS;
    if (status == PD_BACKEND_ERR_IO)
        pd_runtime_note_peer_lost();
    pd_fail_set(fail, MPI_ERR_OTHER, "%s", berr.msg);
    return fail->errclass;
}

/* A request that is already complete (self-sends, MPI_PROC_NULL). */
static int pd_done_request(struct ompi_communicator_t *comm, const char *call,
                           MPI_Request *request, struct pd_fail *fail)
{
    if (request == NULL)
        return MPI_SUCCESS;
    if ((*request = pd_request_new_done(comm, call)) == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

/* ---- device memory, staged through the host ---------------------------- */

/* The runtime that owns buf when it is device memory (CUDA, XPU), which
 * the host must not read or write; else NULL. */
static struct pd_dccl *pd_p2p_device_runtime(const void *buf, size_t bytes)
{
    struct pd_dccl *rt = pd_route_runtime();
    int device;
    if (rt == NULL || buf == NULL || bytes == 0 ||
        rt->b->memory_kind(buf, &device) != PD_MEM_DEVICE)
        return NULL;
    return rt;
}

/* A host copy of bytes of device memory at buf, in *host (free with
 * rt->b->host_free). */
static int pd_p2p_stage_send(struct pd_dccl *rt, const void *buf,
                             size_t bytes, void **host, struct pd_fail *fail)
{
    char err[256];
    *host = rt->b->host_alloc(bytes);
    if (*host == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of host memory staging a "
                    "%zu-byte send from %s memory", bytes, rt->b->memory);
        return fail->errclass;
    }
    if (rt->b->copy(*host, buf, bytes, err, sizeof(err)) != 0) {
        rt->b->host_free(*host);
        *host = NULL;
        pd_fail_set(fail, MPI_ERR_OTHER, "staging a send from %s memory: "
                    "%s", rt->b->memory, err);
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

/* A receive into device memory: what arrived in the host buffer goes to
 * the device (deliver), then the host buffer is freed. */
static int pd_p2p_unstage(struct pd_request_state *st, bool deliver,
                          struct pd_fail *fail)
{
    struct pd_dccl *rt = pd_route_runtime();
    size_t bytes = st->has_status ? st->status._ucount : 0;
    char err[256];
    int rc = MPI_SUCCESS;
    if (deliver && bytes > 0 &&
        rt->b->copy(st->stage_device, st->stage_host, bytes, err,
                    sizeof(err)) != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER, "copying a received message to "
                    "%s memory: %s", rt->b->memory, err);
        rc = fail->errclass;
    }
    free(st->stage_host);
    st->stage_host = NULL;
    st->unstage = NULL;
    return rc;
}

bool pd_p2p_send_now(struct ompi_communicator_t *comm, const void *buf,
                     size_t bytes, int dst, int tag)
{
    struct pd_p2p *p = __atomic_load_n(&comm->state->p2p, __ATOMIC_ACQUIRE);
    return p != NULL && pd_p2p_device_runtime(buf, bytes) == NULL &&
           pd_p2p_shm_send_now(comm, p->cid, buf, bytes, dst, tag);
}

int pd_p2p_send(struct ompi_communicator_t *comm, const void *buf,
                size_t bytes, int dst, int tag, MPI_Request *request,
                const char *call, struct pd_fail *fail)
{
    struct pd_dccl *rt = pd_p2p_device_runtime(buf, bytes);
    if (rt == NULL)
        return pd_p2p_send_host(comm, buf, bytes, dst, tag, request, call,
                                fail);
    /* Sent from a host copy, complete before this returns: the peer's
     * receiving thread takes every message as it comes, so waiting here
     * cannot deadlock, and the copy is ours to free. */
    void *host;
    if (pd_p2p_stage_send(rt, buf, bytes, &host, fail) != MPI_SUCCESS)
        return fail->errclass;
    int rc = pd_p2p_send_host(comm, host, bytes, dst, tag, NULL, call, fail);
    rt->b->host_free(host);
    if (rc != MPI_SUCCESS || request == NULL)
        return rc;
    return pd_done_request(comm, call, request, fail);
}

bool pd_p2p_may_stream(struct ompi_communicator_t *comm, int dst,
                       const void *buf, size_t bytes)
{
    if (dst == comm->rank || pd_p2p_device_runtime(buf, bytes) != NULL)
        return false;
    if (pd_p2p_shm_local(comm, dst) >= 0)
        return bytes >= pd_shm_pairs_stream_min() &&
               pd_rt.config.shm_p2p != PD_SHM_P2P_COPY;
    return bytes >= PD_P2P_NET_STREAM_MIN;
}

/* To a rank of another host: written to its connection a piece at a
 * time by the backend, if it can. */
static int pd_p2p_net_send_stream(struct ompi_communicator_t *comm,
                                  const struct pd_p2p *p,
                                  struct pd_type_stage *stage, size_t bytes,
                                  int dst, int tag, MPI_Request *request,
                                  const char *call, bool *streamed,
                                  struct pd_fail *fail)
{
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    struct pd_fail ignored;
    /* Anything amiss is the whole path's to report. */
    if (p->broken || pd_comm_backend(comm, &ops, &bc, &ignored) !=
                         MPI_SUCCESS ||
        ops->p2p_post_packed == NULL)
        return MPI_SUCCESS;
    struct pd_p2p_source source = { pd_stage_packer, stage };
    struct pd_backend_error berr;
    berr.msg[0] = '\0';
    int rc = ops->p2p_post_packed(bc, dst, tag, &source, bytes, &berr);
    if (rc == PD_BACKEND_ERR_UNSUPPORTED)
        return MPI_SUCCESS;
    *streamed = true;
    if (rc == PD_BACKEND_OK &&
        pd_done_request(comm, call, request, fail) == MPI_SUCCESS) {
        if (request != NULL)
            (*request)->state->type_stages = stage;
        return MPI_SUCCESS;
    }
    if (rc != PD_BACKEND_OK)
        pd_fail_set(fail, MPI_ERR_OTHER, "%s", berr.msg);
    if (request != NULL)
        pd_stage_free(stage);       /* no request holds it */
    return fail->errclass;
}

/* The wait for a synchronous send's receipt, which comes once the
 * receive has taken the message (one that arrives first waits among the
 * unexpected). */
static int pd_p2p_receipt(struct ompi_communicator_t *comm, int dst, int tag,
                          MPI_Request *request, const char *call,
                          struct pd_fail *fail)
{
    if (pd_p2p_irecv(comm, NULL, 0, NULL, dst, PD_TAG_RECEIPT(tag), request,
                     call, fail) != MPI_SUCCESS)
        return fail->errclass;
    (*request)->state->receive = false;     /* MPI_Cancel: a send */
    (*request)->state->sync_send = true;
    return MPI_SUCCESS;
}

/* ... synchronous: written so, marked for a receipt, then complete with
 * the receipt (written is not yet received). */
static int pd_p2p_net_ssend_stream(struct ompi_communicator_t *comm,
                                   const struct pd_p2p *p,
                                   struct pd_type_stage *stage, size_t bytes,
                                   int dst, int tag, MPI_Request *request,
                                   const char *call, bool *streamed,
                                   struct pd_fail *fail)
{
    int rc = pd_p2p_net_send_stream(comm, p, stage, bytes, dst,
                                    tag | PD_TAG_SYNC, NULL, call, streamed,
                                    fail);
    if (!*streamed)
        return rc;
    if (rc == MPI_SUCCESS) {
        MPI_Request own, *req = request != NULL ? request : &own;
        rc = pd_p2p_receipt(comm, dst, tag, req, call, fail);
        if (rc == MPI_SUCCESS && request == NULL) {
            pd_request_wait_done(own);
            return pd_request_finish(&own, MPI_STATUS_IGNORE, fail);
        }
    }
    if (request != NULL) {
        if (rc == MPI_SUCCESS)
            (*request)->state->type_stages = stage;
        else
            pd_stage_free(stage);   /* no request holds it */
    }
    return rc;
}

int pd_p2p_send_streamed(struct ompi_communicator_t *comm,
                         struct pd_type_stage *stage, size_t bytes, int dst,
                         int tag, bool synchronous, MPI_Request *request,
                         const char *call, bool *streamed,
                         struct pd_fail *fail)
{
    *streamed = false;
    struct pd_p2p *p = pd_p2p_get(comm, fail);
    if (p == NULL)
        return MPI_SUCCESS;         /* the whole path reports it */
    int to = pd_p2p_shm_local(comm, dst);
    if (to < 0)
        return (synchronous ? pd_p2p_net_ssend_stream
                            : pd_p2p_net_send_stream)(
            comm, p, stage, bytes, dst, tag, request, call, streamed, fail);
    return pd_p2p_shm_send_stream(comm, p->cid, stage, bytes, dst, to, tag,
                                  request, call, streamed, fail);
}

static int pd_p2p_send_host(struct ompi_communicator_t *comm, const void *buf,
                            size_t bytes, int dst, int tag,
                            MPI_Request *request, const char *call,
                            struct pd_fail *fail)
{
    struct pd_p2p *p = pd_p2p_get(comm, fail);
    if (p == NULL)
        return fail->errclass;
    if (dst == comm->rank) {
        /* To oneself: straight into the matching, a copy of the data. */
        void *copy = malloc(bytes ? bytes : 1);
        if (copy == NULL) {
            pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
            return fail->errclass;
        }
        if (bytes > 0)
            memcpy(copy, buf, bytes);
        pd_deliver(p, comm->rank, tag, copy, bytes, NULL);
        return pd_done_request(comm, call, request, fail);
    }
    int to = pd_p2p_shm_local(comm, dst);
    if (to >= 0)
        return pd_p2p_shm_send(comm, p->cid, buf, bytes, dst, to, tag,
                               request, call, fail);
    if (p->broken) {
        pd_fail_set(fail, MPI_ERR_OTHER, "%s", p->broken_why);
        return fail->errclass;
    }
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    if (pd_comm_backend(comm, &ops, &bc, fail) != MPI_SUCCESS)
        return fail->errclass;
    struct pd_p2p_send *send = NULL;
    struct pd_backend_error berr;
    berr.msg[0] = '\0';
    if (ops->p2p_post(bc, dst, tag, buf, bytes, &send, &berr) != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER, "%s", berr.msg);
        return fail->errclass;
    }
    if (send == NULL)   /* written already: nothing left to wait for */
        return pd_done_request(comm, call, request, fail);
    if (request == NULL)
        return pd_p2p_wait_send(comm, send, fail);
    /* The progress thread waits for it, after earlier queued work. */
    *request = pd_request_new(comm, call);
    if (*request == NULL) {
        pd_p2p_wait_send(comm, send, fail);
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    (*request)->state->send = send;
    return pd_progress_submit(*request, fail);
}

/* A receive request for call and its entry for the matching (*req,
 * *posted), its buffer staged in host memory when buf is device memory. */
static int pd_p2p_new_receive(struct ompi_communicator_t *comm, void *buf,
                              size_t capacity, int src, int tag,
                              const char *call, struct ompi_request_t **req,
                              struct pd_posted **posted, struct pd_fail *fail)
{
    *req = pd_request_new(comm, call);
    if (*req == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    *posted = &(*req)->state->posted;
    /* Device memory: the message lands in host memory, and goes to the
     * device in the user's thread when the request is finished. */
    if (pd_p2p_device_runtime(buf, capacity) != NULL) {
        void *host = malloc(capacity);
        if (host == NULL) {
            pd_request_complete((*req)->state);
            pd_request_release(req);
            pd_fail_set(fail, MPI_ERR_NO_MEM, "out of host memory staging "
                        "a %zu-byte receive into device memory", capacity);
            return fail->errclass;
        }
        (*req)->state->stage_host = host;
        (*req)->state->stage_device = buf;
        (*req)->state->unstage = pd_p2p_unstage;
        buf = host;
    }
    **posted = (struct pd_posted){ src, tag, buf, capacity, (*req)->state,
                                 NULL };
    return MPI_SUCCESS;
}

/* A receive's request: watched for a dead sender or the timeout (not
 * one from this rank), and cancellable while nothing matched it. */
static void pd_receive_state(struct pd_request_state *st,
                             struct ompi_communicator_t *comm, int src)
{
    st->watch = src == comm->rank ? NULL : pd_watch_receive;
    st->receive = true;
}

/* Match posted against what waited on p, or post it (src is the receive's
 * source, for a broken connection). */
static void pd_p2p_post(struct pd_p2p *p, struct ompi_communicator_t *comm,
                        struct pd_posted *posted, int src, int tag)
{
    pthread_mutex_lock(&p->lock);
    for (struct pd_message **m = &p->unexpected; *m != NULL; m = &(*m)->next) {
        if (pd_p2p_matches(src, tag, (*m)->src, (*m)->tag)) {
            struct pd_message *msg = *m;
            *m = msg->next;
            if (*m == NULL)
                p->unexpected_tail = m;
            pd_receive_queued(posted, msg);
            pthread_mutex_unlock(&p->lock);
            pd_p2p_send_receipts();
            return;
        }
    }
    if (p->broken && src != comm->rank) {
        pd_p2p_fail_posted(posted, p->broken_why);
    } else {
        *p->posted_tail = posted;
        p->posted_tail = &posted->next;
    }
    pthread_mutex_unlock(&p->lock);
}

int pd_p2p_irecv(struct ompi_communicator_t *comm, void *buf, size_t capacity,
                 struct pd_type_stage *stage, int src, int tag,
                 MPI_Request *request, const char *call,
                 struct pd_fail *fail)
{
    struct pd_p2p *p = pd_p2p_get(comm, fail);
    if (p == NULL)
        return fail->errclass;
    struct ompi_request_t *req;
    struct pd_posted *posted;
    if (pd_p2p_new_receive(comm, buf, capacity, src, tag, call, &req, &posted,
                           fail) != MPI_SUCCESS)
        return fail->errclass;
    pd_receive_state(req->state, comm, src);
    req->state->type_stages = stage;    /* before anything may match */
    *request = req;
    pd_p2p_post(p, comm, posted, src, tag);
    return MPI_SUCCESS;
}

/*
 * Why a path of its own: a blocking receive needs no handle, and the
 * allocations and frees of one (and its release) were a fifth of an
 * 8-byte MPI_Recv ping-pong's instructions (callgrind); its entry in the
 * matching lives on this stack too, as this call outlives it.
 */
int pd_p2p_recv(struct ompi_communicator_t *comm, void *buf, size_t capacity,
                int src, int tag, MPI_Status *status, const char *call,
                struct pd_fail *fail)
{
    if (pd_p2p_device_runtime(buf, capacity) != NULL)
        return 1;
    struct pd_p2p *p = pd_p2p_get(comm, fail);
    if (p == NULL)
        return fail->errclass;
    int from = src >= 0 ? pd_p2p_shm_local(comm, src) : -1;
    int got_tag;
    size_t got_bytes;
    if (from >= 0 && pd_p2p_shm_recv_now(p, src, from, tag, buf, capacity,
                                         &got_tag, &got_bytes)) {
        if (status != MPI_STATUS_IGNORE)
            pd_status_for(status, src, got_tag, got_bytes);
        return MPI_SUCCESS;
    }
    struct ompi_request_t req;
    struct pd_request_state st;
    pd_request_init_local(&req, &st, comm, call);
    pd_receive_state(&st, comm, src);
    struct pd_posted posted = { src, tag, buf, capacity, &st, NULL };
    pd_p2p_post(p, comm, &posted, src, tag);
    pd_request_wait_done(&req);
    return pd_request_finish_local(&req, status, fail);
}

int pd_p2p_mrecv(struct ompi_communicator_t *comm, struct pd_message *m,
                 void *buf, size_t capacity, struct pd_type_stage *stage,
                 MPI_Request *request, const char *call,
                 struct pd_fail *fail)
{
    struct pd_p2p *p = pd_p2p_get(comm, fail);
    struct ompi_request_t *req;
    struct pd_posted *posted;
    if (p == NULL || pd_p2p_new_receive(comm, buf, capacity, m->src, m->tag,
                                        call, &req, &posted,
                                        fail) != MPI_SUCCESS) {
        /* The message is dropped; its sender, if it waits, is let go. */
        if (m->rts != NULL)
            pd_p2p_shm_drop(m->rts);
        free(m->data);
        free(m);
        return fail->errclass;
    }
    req->state->type_stages = stage;
    *request = req;
    pthread_mutex_lock(&p->lock);
    pd_receive_queued(posted, m);
    pthread_mutex_unlock(&p->lock);
    pd_p2p_send_receipts();
    return MPI_SUCCESS;
}

bool pd_p2p_cancel_recv(struct ompi_request_t *req)
{
    struct pd_request_state *st = req->state;
    struct pd_fail fail;
    struct pd_p2p *p = pd_p2p_get(st->comm, &fail);
    if (p == NULL)
        return false;
    pthread_mutex_lock(&p->lock);
    struct pd_posted *found = NULL;
    for (struct pd_posted **q = &p->posted; *q != NULL; q = &(*q)->next) {
        if ((*q)->st == st) {
            found = pd_posted_unlink(p, q);
            break;
        }
    }
    if (found != NULL) {
        /* No bytes: a device receive's staging is dropped, not copied. */
        st->status = (MPI_Status){ .MPI_SOURCE = MPI_ANY_SOURCE,
                                   .MPI_TAG = MPI_ANY_TAG, ._cancelled = 1 };
        st->has_status = true;
        pd_request_complete(st);
    }
    pthread_mutex_unlock(&p->lock);
    return found != NULL;
}

int pd_p2p_probe(struct ompi_communicator_t *comm, int src, int tag,
                 bool block, int *found, MPI_Status *status,
                 struct pd_message **taken, struct pd_fail *fail)
{
    struct pd_p2p *p = pd_p2p_get(comm, fail);
    if (p == NULL)
        return fail->errclass;
    int rc = MPI_SUCCESS;
    int64_t since = pd_clock_ms(), start = pd_clock_ns(), next_check = 0;
    bool polled = pd_p2p_shm_active();
    uint32_t bell = pd_request_poll();
    *found = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        for (struct pd_message **q = &p->unexpected; *q != NULL;
             q = &(*q)->next) {
            struct pd_message *m = *q;
            if (!pd_p2p_matches(src, tag, m->src, m->tag))
                continue;
            *found = 1;
            if (status != MPI_STATUS_IGNORE)
                pd_status_for(status, m->src, m->tag, m->bytes);
            if (taken != NULL) {
                *q = m->next;
                if (*q == NULL)
                    p->unexpected_tail = q;
                m->next = NULL;
                *taken = m;
            }
            break;
        }
        if (*found || !block)
            break;
        if (p->broken && src != comm->rank) {
            pd_fail_set(fail, MPI_ERR_OTHER, "%s", p->broken_why);
            rc = fail->errclass;
            break;
        }
        int64_t now = pd_clock_ns();
        if (now >= next_check) {
            char why[600];
            pd_p2p_hopeless(comm, src, tag, false, since, why, sizeof(why));
            if (why[0] != '\0' && src != comm->rank) {
                pd_fail_set(fail, MPI_ERR_OTHER, "%s", why);
                rc = fail->errclass;
                break;
            }
            next_check = now + (int64_t)PD_REQUEST_WATCH_MS * 1000000;
        }
        if (!polled) {
            struct timespec until =
                pd_clock_realtime_after(PD_REQUEST_WATCH_MS);
            pthread_cond_timedwait(&p->arrived, &p->lock, &until);
            continue;
        }
        /* The shared-memory queues move only while someone polls. */
        pthread_mutex_unlock(&p->lock);
        pd_request_pause(bell, now - start);
        bell = pd_request_poll();
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

int pd_p2p_listen(struct ompi_communicator_t *comm, struct pd_fail *fail)
{
    return pd_p2p_get(comm, fail) != NULL ? MPI_SUCCESS : fail->errclass;
}

void pd_p2p_receive_left(void)
{
    pd_p2p_shm_receive_posted();
}

int pd_p2p_issend(struct ompi_communicator_t *comm, const void *buf,
                  size_t bytes, int dst, int tag, MPI_Request *request,
                  const char *call, struct pd_fail *fail)
{
    MPI_Request data;
    if (pd_p2p_send(comm, buf, bytes, dst, tag | PD_TAG_SYNC, &data, call,
                    fail) != MPI_SUCCESS)
        return fail->errclass;
    /* The message's own request goes when it is done; the caller's is
     * the wait for the receipt, which comes after the data has arrived.
     * A receipt that arrives first waits among the unexpected. */
    pd_request_release(&data);
    return pd_p2p_receipt(comm, dst, tag, request, call, fail);
}

void pd_p2p_release(struct ompi_communicator_t *comm)
{
    pd_p2p_send_receipts();     /* while the communicator is whole */
    struct pd_comm_state *cs = comm->state;
    struct pd_p2p *p = cs->p2p;
    if (p == NULL)
        return;
    if (p->receiving && cs->host_ops->p2p_stop != NULL)
        cs->host_ops->p2p_stop(cs->host_comm);
    pd_p2p_shm_unregister(p);
    cs->p2p = NULL;
    while (p->unexpected != NULL) {
        struct pd_message *next = p->unexpected->next;
        if (p->unexpected->rts != NULL)
            pd_p2p_shm_drop(p->unexpected->rts);
        free(p->unexpected->data);
        free(p->unexpected);
        p->unexpected = next;
    }
    while (p->posted != NULL) {
        struct pd_posted *next = p->posted->next;
        pd_p2p_fail_posted(p->posted, "the communicator was freed");
        p->posted = next;
    }
    pthread_cond_destroy(&p->arrived);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
