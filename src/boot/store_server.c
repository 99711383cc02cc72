/*
 * The store server: one background thread multiplexing every client with
 * poll(). Client sockets are non-blocking and each connection owns an
 * input and an output buffer, so no single client (slow, stalled or
 * hostile) can hold up the thread. A GET for a missing key is parked on
 * its connection with a deadline and answered by the SET/ADD that creates
 * the key or by the deadline, whichever comes first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* accept4, pipe2 under -std=c11 */
#endif
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/hash.h"
#include "net.h"
#include "store_auth.h"
#include "store_frame.h"
#include "store_proto.h"

#define PD_LISTEN_BACKLOG 4096    /* the kernel may cap it (somaxconn) */
#define PD_BUFFER_MIN 4096
#define PD_BUFFER_KEEP (64 * 1024)  /* shrink buffers above this when idle */
#define PD_ACCEPT_PAUSE_MS 100      /* after EMFILE, so poll does not spin */
#define PD_PEER_LEN 80
/* A job's clients say HELLO as soon as they are connected; a connection
 * that has not within PD_HELLO_GRACE_MS is a stranger's and is closed.
 * At most half the descriptor limit wait unauthenticated at once (a
 * job's burst of set-ups stays far below with the raised limit); beyond
 * that, or when accept runs out of descriptors, the oldest that has
 * waited PD_STRANGER_MIN_MS goes, or accepting waits for HELLOs, so that
 * idle strangers cannot take the descriptors the job needs. */
#define PD_HELLO_GRACE_MS 5000
#define PD_MIN_UNGREETED 64         /* the cap never goes below */
#define PD_STRANGER_MIN_MS 200      /* waited this long: may be closed */
#define PD_STRANGER_PAUSE_MS 10     /* accepting waits this for HELLOs */

struct pd_buffer {
    uint8_t *data;
    size_t len;  /* bytes held */
    size_t off;  /* bytes already consumed (output: sent) */
    size_t cap;
};

struct pd_kv_entry {
    struct pd_kv_entry *next;
    uint32_t hash;
    uint8_t *key;
    uint32_t keylen;
    uint8_t *value;
    size_t vallen;
};

struct pd_kv_table {
    struct pd_kv_entry **buckets;
    size_t nbuckets;
    size_t count;
    size_t bytes;               /* keys and values held */
    size_t max_bytes, max_keys; /* what one job may keep */
};

struct pd_store_conn {
    int fd;
    int dead;           /* close at the end of this loop iteration */
    int greeted;        /* HELLO with the right job key received */
    uint8_t nonce[PD_STORE_NONCE_LEN];  /* its challenge */
    int64_t accepted_ms;    /* when it was accepted */
    int head_checked;   /* header of the frame at the front was validated */
    int32_t rank;
    char peer[PD_PEER_LEN];
    struct pd_buffer in;
    struct pd_buffer out;
    /* A parked GET: */
    int parked;
    uint8_t *parked_key;
    uint32_t parked_keylen;
    uint32_t parked_timeout_ms;
    int64_t parked_deadline;
};

struct pd_store_server {
    int listen_fd;
    int wake_pipe[2];
    pthread_t thread;
    char job_key[PD_STORE_MAX_JOBKEY + 1];
    size_t job_key_len;
    struct pd_store_conn **conns;
    size_t nconns;
    size_t conns_cap;
    struct pollfd *pfds;
    size_t pfds_cap;
    struct pd_kv_table table;
    int64_t accept_paused_until;
    unsigned long strangers_closed;   /* not yet logged */
    uint32_t *alive;            /* rank -> its open, greeted connections */
    size_t alive_cap;
    int full_logged;
    size_t ungreeted_cap;
};

/* ---------------------------------------------------------------- logging */

static void server_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line so concurrent writers do not interleave it. */
    fprintf(stderr, "pdmpi store: %s\n", line);
}

/* --------------------------------------------------------------- buffers */

static int buffer_reserve(struct pd_buffer *b, size_t need)
{
    if (b->cap >= need)
        return 0;
    size_t cap = b->cap ? b->cap : PD_BUFFER_MIN;
    while (cap < need)
        cap *= 2;
    uint8_t *data = realloc(b->data, cap);
    if (data == NULL)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

static void buffer_shrink_if_idle(struct pd_buffer *b)
{
    if (b->cap <= PD_BUFFER_KEEP || b->len - b->off > PD_BUFFER_KEEP)
        return;
    if (b->off > 0) {
        memmove(b->data, b->data + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
    }
    uint8_t *data = realloc(b->data, PD_BUFFER_KEEP);
    if (data != NULL) {
        b->data = data;
        b->cap = PD_BUFFER_KEEP;
    }
}

static void buffer_free(struct pd_buffer *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------ key table */

static struct pd_kv_entry *kv_find(struct pd_kv_table *t, const uint8_t *key,
                                   uint32_t keylen)
{
    if (t->nbuckets == 0)
        return NULL;
    uint32_t h = pd_fnv1a32(key, keylen);
    for (struct pd_kv_entry *e = t->buckets[h % t->nbuckets]; e; e = e->next)
        if (e->hash == h && e->keylen == keylen &&
            memcmp(e->key, key, keylen) == 0)
            return e;
    return NULL;
}

static int kv_grow(struct pd_kv_table *t)
{
    size_t nbuckets = t->nbuckets ? t->nbuckets * 2 : 64;
    struct pd_kv_entry **buckets = calloc(nbuckets, sizeof *buckets);
    if (buckets == NULL)
        return -1;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct pd_kv_entry *e = t->buckets[i];
        while (e) {
            struct pd_kv_entry *next = e->next;
            e->next = buckets[e->hash % nbuckets];
            buckets[e->hash % nbuckets] = e;
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = buckets;
    t->nbuckets = nbuckets;
    return 0;
}

/* Insert or replace; the table takes a copy of key and value. -1: out
 * of memory; -2: past the table's limits. */
static int kv_set(struct pd_kv_table *t, const uint8_t *key, uint32_t keylen,
                  const uint8_t *value, size_t vallen)
{
    struct pd_kv_entry *e = kv_find(t, key, keylen);
    size_t bytes = t->bytes - (e != NULL ? e->keylen + e->vallen : 0) +
                   keylen + vallen;
    if (bytes > t->max_bytes || (e == NULL && t->count >= t->max_keys))
        return -2;
    uint8_t *copy = malloc(vallen ? vallen : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, value, vallen);

    if (e != NULL) {
        free(e->value);
        e->value = copy;
        e->vallen = vallen;
        t->bytes = bytes;
        return 0;
    }
    if (t->count >= t->nbuckets && kv_grow(t) < 0)
        goto fail;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        goto fail;
    e->key = malloc(keylen ? keylen : 1);
    if (e->key == NULL) {
        free(e);
        goto fail;
    }
    memcpy(e->key, key, keylen);
    e->keylen = keylen;
    e->hash = pd_fnv1a32(key, keylen);
    e->value = copy;
    e->vallen = vallen;
    e->next = t->buckets[e->hash % t->nbuckets];
    t->buckets[e->hash % t->nbuckets] = e;
    t->count++;
    t->bytes = bytes;
    return 0;

fail:
    free(copy);
    return -1;
}

static void kv_free(struct pd_kv_table *t)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct pd_kv_entry *e = t->buckets[i];
        while (e) {
            struct pd_kv_entry *next = e->next;
            free(e->key);
            free(e->value);
            free(e);
            e = next;
        }
    }
    free(t->buckets);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------- connections */

static void conn_free(struct pd_store_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    buffer_free(&c->in);
    buffer_free(&c->out);
    free(c->parked_key);
    free(c);
}

static void conn_describe(const struct pd_store_conn *c, char *buf,
                          size_t buflen)
{
    if (c->greeted)
        snprintf(buf, buflen, "%s (rank %" PRId32 ")", c->peer, c->rank);
    else
        snprintf(buf, buflen, "%s", c->peer);
}

/* Best effort: a refused peer should learn why, but may not be reading. */
static void send_err_now(struct pd_store_conn *c, const char *message)
{
    uint8_t frame[PD_STORE_HEADER_LEN + 256];
    size_t len = strlen(message);
    if (len > sizeof frame - PD_STORE_HEADER_LEN)
        len = sizeof frame - PD_STORE_HEADER_LEN;
    pd_store_encode_header(frame, PD_STORE_OP_ERR, 0, (uint32_t)len);
    memcpy(frame + PD_STORE_HEADER_LEN, message, len);
    ssize_t ignored = send(c->fd, frame, PD_STORE_HEADER_LEN + len,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
}

/*
 * Close one connection for a protocol violation. Only this connection is
 * affected; peer_message (may be NULL) is sent to the peer first.
 */
static void conn_refuse(struct pd_store_conn *c, const char *reason,
                        const char *peer_message)
{
    char who[PD_PEER_LEN + 32];
    conn_describe(c, who, sizeof who);
    server_log("%s connection from %s: %s; closing it",
               c->greeted ? "dropped" : "refused", who, reason);
    if (peer_message != NULL)
        send_err_now(c, peer_message);
    c->dead = 1;
}

static int conn_queue(struct pd_store_conn *c, uint16_t op,
                      const void *value, size_t vallen)
{
    struct pd_buffer *b = &c->out;
    if (buffer_reserve(b, b->len + PD_STORE_HEADER_LEN + vallen) < 0) {
        conn_refuse(c, "out of memory for a reply", NULL);
        return -1;
    }
    pd_store_encode_header(b->data + b->len, op, 0, (uint32_t)vallen);
    b->len += PD_STORE_HEADER_LEN;
    if (vallen > 0)
        memcpy(b->data + b->len, value, vallen);
    b->len += vallen;
    return 0;
}

static void conn_queue_errf(struct pd_store_conn *c, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    conn_queue(c, PD_STORE_OP_ERR, message, strlen(message));
}

static void conn_flush(struct pd_store_conn *c)
{
    struct pd_buffer *b = &c->out;
    while (!c->dead && b->off < b->len) {
        ssize_t n = send(c->fd, b->data + b->off, b->len - b->off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            b->off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        c->dead = 1; /* peer went away; nothing to report */
    }
    b->len = b->off = 0;
    buffer_shrink_if_idle(b);
}

static size_t frame_size(const uint8_t *head)
{
    struct pd_store_header h;
    pd_store_decode_header(head, &h);
    return pd_store_frame_size(&h);
}

/*
 * Validate the header of the frame at the front of the input buffer as soon
 * as its 16 bytes are in, so a bad frame is refused before its body is
 * buffered. Returns -1 (and kills the connection) on a bad header.
 */
static int conn_check_head(struct pd_store_conn *c)
{
    struct pd_buffer *in = &c->in;
    if (c->head_checked || in->len - in->off < PD_STORE_HEADER_LEN)
        return 0;

    struct pd_store_header h;
    char reason[160];
    const char *peer_message;
    int verdict = pd_store_frame_check_head(in->data + in->off,
                                            in->len - in->off, c->greeted,
                                            &h, reason, sizeof reason,
                                            &peer_message);
    if (verdict == PD_STORE_FRAME_INCOMPLETE)
        return 0;
    if (verdict == PD_STORE_FRAME_REFUSED) {
        conn_refuse(c, reason, peer_message);
        return -1;
    }
    c->head_checked = 1;
    return 0;
}

/* Bytes of buffer space the next read should be able to fill. */
static size_t conn_read_goal(const struct pd_store_conn *c)
{
    const struct pd_buffer *in = &c->in;
    if (!c->head_checked)
        return in->off + PD_BUFFER_MIN;
    size_t need = in->off + frame_size(in->data + in->off);
    return need > in->off + PD_BUFFER_MIN ? need : in->off + PD_BUFFER_MIN;
}

static int conn_has_frame(const struct pd_store_conn *c)
{
    const struct pd_buffer *in = &c->in;
    return c->head_checked &&
           in->len - in->off >= frame_size(in->data + in->off);
}

/* Read until the socket would block or the buffer holds a whole frame. */
static void conn_read(struct pd_store_conn *c)
{
    while (!c->dead && !conn_has_frame(c)) {
        if (buffer_reserve(&c->in, conn_read_goal(c)) < 0) {
            conn_refuse(c, "out of memory for a request", NULL);
            return;
        }
        struct pd_buffer *in = &c->in;
        ssize_t n = recv(c->fd, in->data + in->len, in->cap - in->len,
                         MSG_DONTWAIT);
        if (n > 0) {
            in->len += (size_t)n;
            conn_check_head(c);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        c->dead = 1; /* EOF or reset: the client is gone */
    }
}

static void consume_frame(struct pd_store_conn *c, size_t size)
{
    struct pd_buffer *in = &c->in;
    in->off += size;
    c->head_checked = 0;
    if (in->off == in->len) {
        in->off = in->len = 0;
        buffer_shrink_if_idle(in);
    } else if (in->off > PD_BUFFER_KEEP) {
        memmove(in->data, in->data + in->off, in->len - in->off);
        in->len -= in->off;
        in->off = 0;
    }
}

/* Count a rank's greeted connection in (+1) or out (-1): ALIVE tells a
 * rank's peers whether its process still holds any (a process that dies
 * closes them all). Ranks past PD_STORE_MAX_RANKS are not counted. */
#define PD_STORE_MAX_RANKS (1 << 24)
static void alive_note(struct pd_store_server *s, int32_t rank, int delta)
{
    if (rank < 0 || rank >= PD_STORE_MAX_RANKS)
        return;
    if ((size_t)rank >= s->alive_cap) {
        size_t cap = s->alive_cap ? s->alive_cap : 64;
        while (cap <= (size_t)rank)
            cap *= 2;
        uint32_t *alive = realloc(s->alive, cap * sizeof *alive);
        if (alive == NULL)
            return;
        memset(alive + s->alive_cap, 0,
               (cap - s->alive_cap) * sizeof *alive);
        s->alive = alive;
        s->alive_cap = cap;
    }
    if (delta > 0 || s->alive[rank] > 0)
        s->alive[rank] += (uint32_t)delta;
}

static void handle_alive(struct pd_store_server *s, struct pd_store_conn *c,
                         const uint8_t *value)
{
    int32_t rank = (int32_t)pd_store_get_u32(value);
    uint8_t reply[8];
    pd_store_put_i64(reply, rank >= 0 && (size_t)rank < s->alive_cap
                                ? (int64_t)s->alive[rank] : 0);
    conn_queue(c, PD_STORE_OP_VALUE, reply, sizeof reply);
}

static void handle_hello(struct pd_store_server *s, struct pd_store_conn *c,
                         const uint8_t *value, uint32_t vallen)
{
    int32_t rank = -1;
    uint8_t client_nonce[PD_STORE_NONCE_LEN];
    if (!pd_store_hello_check(s->job_key, s->job_key_len, c->nonce, value,
                              vallen, &rank, client_nonce)) {
        conn_refuse(c, "wrong job key (a process from another job, or one "
                       "with another PDMPI_JOB_SECRET?)",
                    "wrong job key: this store belongs to another job (or "
                    "one with another PDMPI_JOB_SECRET)");
        return;
    }
    c->greeted = 1;
    c->rank = rank;
    alive_note(s, rank, +1);
    uint8_t proof[PD_STORE_PROOF_LEN];
    pd_store_server_proof(s->job_key, s->job_key_len, client_nonce, c->nonce,
                          proof);
    conn_queue(c, PD_STORE_OP_OK, proof, sizeof proof);
}

static void unpark(struct pd_store_conn *c)
{
    free(c->parked_key);
    c->parked_key = NULL;
    c->parked_keylen = 0;
    c->parked = 0;
}

/* Answer every GET parked on key now that it has a value. */
static void wake_waiters(struct pd_store_server *s, const uint8_t *key,
                         uint32_t keylen, const struct pd_kv_entry *e)
{
    for (size_t i = 0; i < s->nconns; i++) {
        struct pd_store_conn *c = s->conns[i];
        if (c->dead || !c->parked || c->parked_keylen != keylen ||
            memcmp(c->parked_key, key, keylen) != 0)
            continue;
        unpark(c);
        if (conn_queue(c, PD_STORE_OP_VALUE, e->value, e->vallen) == 0)
            conn_flush(c);
    }
}

/* Why kv_set refused, to the client and (once) to the log. */
static void refuse_set(struct pd_store_server *s, struct pd_store_conn *c,
                       int rc)
{
    if (rc == -1) {
        conn_queue_errf(c, "store out of memory");
        return;
    }
    const struct pd_kv_table *t = &s->table;
    char who[PD_PEER_LEN + 32];
    conn_describe(c, who, sizeof who);
    if (!s->full_logged)
        server_log("store full (%zu keys, %zu bytes; a job may keep %zu "
                   "keys, %zu bytes): refusing writes, first from %s",
                   t->count, t->bytes, t->max_keys, t->max_bytes, who);
    s->full_logged = 1;
    conn_queue_errf(c, "store full: it holds %zu keys and %zu bytes, the most "
                    "a job may keep is %zu keys and %zu bytes", t->count,
                    t->bytes, t->max_keys, t->max_bytes);
}

static void handle_set(struct pd_store_server *s, struct pd_store_conn *c,
                       const uint8_t *key, uint32_t keylen,
                       const uint8_t *value, uint32_t vallen)
{
    int rc = kv_set(&s->table, key, keylen, value, vallen);
    if (rc < 0) {
        refuse_set(s, c, rc);
        return;
    }
    conn_queue(c, PD_STORE_OP_OK, NULL, 0);
    wake_waiters(s, key, keylen, kv_find(&s->table, key, keylen));
}

static void handle_get(struct pd_store_server *s, struct pd_store_conn *c,
                       const uint8_t *key, uint32_t keylen,
                       const uint8_t *value)
{
    uint32_t timeout_ms = pd_store_get_u32(value);
    const struct pd_kv_entry *e = kv_find(&s->table, key, keylen);
    if (e != NULL) {
        conn_queue(c, PD_STORE_OP_VALUE, e->value, e->vallen);
        return;
    }
    if (timeout_ms == 0) {
        char shown[128];
        pd_store_describe_key(key, keylen, shown, sizeof shown);
        conn_queue_errf(c, "timed out after 0 ms waiting for key %s", shown);
        return;
    }
    c->parked_key = malloc(keylen ? keylen : 1);
    if (c->parked_key == NULL) {
        conn_queue_errf(c, "store out of memory");
        return;
    }
    memcpy(c->parked_key, key, keylen);
    c->parked_keylen = keylen;
    c->parked_timeout_ms = timeout_ms;
    c->parked_deadline = pd_net_now_ms() + timeout_ms;
    c->parked = 1;
}

static void handle_add(struct pd_store_server *s, struct pd_store_conn *c,
                       const uint8_t *key, uint32_t keylen,
                       const uint8_t *value)
{
    int64_t delta = pd_store_get_i64(value);
    int64_t total = 0;
    char shown[128];
    const struct pd_kv_entry *e = kv_find(&s->table, key, keylen);
    if (e != NULL && pd_store_parse_counter(e->value, e->vallen, &total) < 0) {
        pd_store_describe_key(key, keylen, shown, sizeof shown);
        conn_queue_errf(c, "key %s holds a value that is not a counter",
                        shown);
        return;
    }
    if (__builtin_add_overflow(total, delta, &total)) {
        pd_store_describe_key(key, keylen, shown, sizeof shown);
        conn_queue_errf(c, "counter %s would overflow", shown);
        return;
    }
    char text[32];
    int len = snprintf(text, sizeof text, "%" PRId64, total);
    int rc = kv_set(&s->table, key, keylen, (const uint8_t *)text,
                    (size_t)len);
    if (rc < 0) {
        refuse_set(s, c, rc);
        return;
    }
    uint8_t reply[8];
    pd_store_put_i64(reply, total);
    conn_queue(c, PD_STORE_OP_VALUE, reply, sizeof reply);
    wake_waiters(s, key, keylen, kv_find(&s->table, key, keylen));
}

static void handle_frame(struct pd_store_server *s, struct pd_store_conn *c)
{
    struct pd_buffer *in = &c->in;
    struct pd_store_frame f;
    /* conn_has_frame said the whole frame is in. */
    pd_store_frame_split(in->data + in->off, in->len - in->off, &f);

    switch (f.head.op) {
    case PD_STORE_OP_HELLO:
        handle_hello(s, c, f.value, f.head.vallen);
        break;
    case PD_STORE_OP_SET:
        handle_set(s, c, f.key, f.head.keylen, f.value, f.head.vallen);
        break;
    case PD_STORE_OP_GET:
        handle_get(s, c, f.key, f.head.keylen, f.value);
        break;
    case PD_STORE_OP_ADD:
        handle_add(s, c, f.key, f.head.keylen, f.value);
        break;
    case PD_STORE_OP_ALIVE:
        handle_alive(s, c, f.value);
        break;
    }
    consume_frame(c, f.size);
}

/*
 * A connection serves one request at a time: while a GET is parked or a
 * reply is still unsent, later frames wait in the input buffer. That keeps
 * replies in order and bounds what one client can make the server hold.
 */
static int conn_can_process(const struct pd_store_conn *c)
{
    return !c->dead && !c->parked && c->out.len == c->out.off &&
           conn_has_frame(c);
}

static void conn_process(struct pd_store_server *s, struct pd_store_conn *c)
{
    while (conn_can_process(c)) {
        handle_frame(s, c);
        conn_flush(c);
        conn_check_head(c);
    }
}

static void expire_parked_gets(struct pd_store_server *s, int64_t now)
{
    for (size_t i = 0; i < s->nconns; i++) {
        struct pd_store_conn *c = s->conns[i];
        if (c->dead || !c->parked || c->parked_deadline > now)
            continue;
        char shown[128];
        pd_store_describe_key(c->parked_key, c->parked_keylen, shown,
                              sizeof shown);
        uint32_t waited = c->parked_timeout_ms;
        unpark(c);
        conn_queue_errf(c, "timed out after %" PRIu32 " ms waiting for key %s",
                        waited, shown);
        conn_flush(c);
    }
}

/* ------------------------------------------------------------ the loop */

/* Close c now (its descriptor is needed), free it with the dead ones. */
static void conn_close_now(struct pd_store_conn *c)
{
    c->dead = 1;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

/* Room for one more unauthenticated connection: true when fewer than
 * the cap wait (and !short_of_fds), or when the oldest has waited
 * PD_STRANGER_MIN_MS -- it is closed; false otherwise: their HELLOs are
 * read before more are accepted. */
static bool room_for_stranger(struct pd_store_server *s, int64_t now,
                              bool short_of_fds)
{
    size_t open = 0, oldest = 0;
    for (size_t i = 0; i < s->nconns; i++) {
        const struct pd_store_conn *c = s->conns[i];
        if (c->dead || c->greeted)
            continue;
        if (open++ == 0 || c->accepted_ms < s->conns[oldest]->accepted_ms)
            oldest = i;
    }
    if (open < s->ungreeted_cap && !short_of_fds)
        return true;
    if (open == 0 || now - s->conns[oldest]->accepted_ms < PD_STRANGER_MIN_MS)
        return false;
    conn_close_now(s->conns[oldest]);
    s->strangers_closed++;
    return true;
}

/* Close connections that did not authenticate in time; one log line for
 * these and the ones room_for_stranger closed since the last. */
static void close_strangers(struct pd_store_server *s, int64_t now)
{
    for (size_t i = 0; i < s->nconns; i++) {
        struct pd_store_conn *c = s->conns[i];
        if (!c->dead && !c->greeted &&
            now - c->accepted_ms >= PD_HELLO_GRACE_MS) {
            conn_close_now(c);
            s->strangers_closed++;
        }
    }
    if (s->strangers_closed > 0) {
        server_log("closed %lu connection%s that had not said HELLO (each "
                   "may wait %d ms, at most %zu at once)",
                   s->strangers_closed, s->strangers_closed == 1 ? "" : "s",
                   PD_HELLO_GRACE_MS, s->ungreeted_cap);
        s->strangers_closed = 0;
    }
}

static void accept_clients(struct pd_store_server *s)
{
    for (;;) {
        int64_t now = pd_net_now_ms();
        if (!room_for_stranger(s, now, false)) {
            s->accept_paused_until = now + PD_STRANGER_PAUSE_MS;
            return;
        }
        struct sockaddr_storage ss;
        socklen_t sslen = sizeof ss;
        int fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &sslen,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if ((errno == EMFILE || errno == ENFILE) &&
                room_for_stranger(s, pd_net_now_ms(), true))
                continue;       /* a stranger made room */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                errno == ENOMEM) {
                server_log("cannot accept a connection: %s; pausing %d ms",
                           strerror(errno), PD_ACCEPT_PAUSE_MS);
                s->accept_paused_until = pd_net_now_ms() + PD_ACCEPT_PAUSE_MS;
            }
            return; /* EAGAIN, or a connection that died in the backlog */
        }
        if (s->nconns == s->conns_cap) {
            size_t cap = s->conns_cap ? s->conns_cap * 2 : 16;
            struct pd_store_conn **conns = realloc(s->conns,
                                                   cap * sizeof *conns);
            if (conns == NULL) {
                close(fd);
                return;
            }
            s->conns = conns;
            s->conns_cap = cap;
        }
        struct pd_store_conn *c = calloc(1, sizeof *c);
        if (c == NULL) {
            close(fd);
            return;
        }
        c->fd = fd;
        c->rank = -1;
        c->accepted_ms = now;
        pd_net_set_nodelay(fd);
        /* The challenge goes out at once: the client's HELLO answers it. */
        if (pd_store_nonce(c->nonce) != 0 ||
            conn_queue(c, PD_STORE_OP_CHALLENGE, c->nonce,
                       sizeof c->nonce) != 0) {
            conn_free(c);
            continue;
        }
        conn_flush(c);
        pd_net_format_sockaddr((struct sockaddr *)&ss, sslen, c->peer,
                               sizeof c->peer);
        s->conns[s->nconns++] = c;
    }
}

static void remove_dead_conns(struct pd_store_server *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->nconns; i++) {
        if (s->conns[i]->dead) {
            if (s->conns[i]->greeted)
                alive_note(s, s->conns[i]->rank, -1);
            conn_free(s->conns[i]);
        } else {
            s->conns[kept++] = s->conns[i];
        }
    }
    s->nconns = kept;
}

static int poll_timeout(const struct pd_store_server *s, int64_t now)
{
    int64_t next = -1;
    for (size_t i = 0; i < s->nconns; i++) {
        const struct pd_store_conn *c = s->conns[i];
        if (conn_can_process(c))
            return 0;
        if (c->parked && (next < 0 || c->parked_deadline < next))
            next = c->parked_deadline;
        int64_t grace_ends = c->accepted_ms + PD_HELLO_GRACE_MS;
        if (!c->greeted && !c->dead && (next < 0 || grace_ends < next))
            next = grace_ends;
    }
    if (s->accept_paused_until > now &&
        (next < 0 || s->accept_paused_until < next))
        next = s->accept_paused_until;
    if (next < 0)
        return -1;
    return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

/* Returns the number of pollfds filled. */
static size_t build_pollfds(struct pd_store_server *s, int64_t now)
{
    size_t need = s->nconns + 2;
    if (need > s->pfds_cap) {
        struct pollfd *pfds = realloc(s->pfds, need * sizeof *pfds);
        if (pfds == NULL)
            need = s->pfds_cap; /* poll the ones we can; retry next time */
        else {
            s->pfds = pfds;
            s->pfds_cap = need;
        }
    }
    s->pfds[0] = (struct pollfd){ .fd = s->wake_pipe[0], .events = POLLIN };
    s->pfds[1] = (struct pollfd){
        .fd = s->accept_paused_until > now ? -1 : s->listen_fd,
        .events = POLLIN,
    };
    size_t n = 2;
    for (size_t i = 0; i < s->nconns && n < need; i++, n++) {
        const struct pd_store_conn *c = s->conns[i];
        short events = 0;
        if (!conn_has_frame(c))
            events |= POLLIN;
        if (c->out.off < c->out.len)
            events |= POLLOUT;
        s->pfds[n] = (struct pollfd){ .fd = c->fd, .events = events };
    }
    return n;
}

static void *server_main(void *arg)
{
    struct pd_store_server *s = arg;
    for (;;) {
        int64_t now = pd_net_now_ms();
        size_t npfds = build_pollfds(s, now);
        int n = poll(s->pfds, npfds, poll_timeout(s, now));
        if (n < 0 && errno != EINTR) {
            server_log("poll failed: %s; retrying", strerror(errno));
            usleep(10000);
            continue;
        }
        if (n > 0 && s->pfds[0].revents)
            break;

        size_t polled = npfds - 2; /* conns[0..polled) match pfds[2..] */
        for (size_t i = 0; n > 0 && i < polled; i++) {
            struct pd_store_conn *c = s->conns[i];
            short rev = s->pfds[i + 2].revents;
            if (rev & (POLLHUP | POLLERR)) {
                /* Reset or fully closed: no one is left to answer, and a
                 * buffered frame would keep poll reporting this forever. */
                c->dead = 1;
                continue;
            }
            if (rev & POLLIN)
                conn_read(c);
            if (rev & POLLOUT)
                conn_flush(c);
        }
        if (n > 0 && s->pfds[1].revents)
            accept_clients(s);

        for (size_t i = 0; i < s->nconns; i++)
            conn_process(s, s->conns[i]);
        expire_parked_gets(s, pd_net_now_ms());
        close_strangers(s, pd_net_now_ms());
        remove_dead_conns(s);
    }
    return NULL;
}

/* --------------------------------------------------------- start / stop */

static int open_listener(const char *bind_host, int *port, char *err,
                         size_t errlen)
{
    struct addrinfo hints = { 0 };
    struct addrinfo *res = NULL;
    hints.ai_family = (bind_host == NULL || *bind_host == '\0') ? AF_INET
                                                                : AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    const char *node = (bind_host && *bind_host) ? bind_host : NULL;
    const char *shown = node ? node : "0.0.0.0";

    char service[16];
    snprintf(service, sizeof service, "%d", *port);
    int rc = getaddrinfo(node, service, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve store bind address '%s': %s",
                 shown, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    int last_errno = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
                                       SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
            listen(fd, PD_LISTEN_BACKLOG) < 0) {
            last_errno = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (*port != 0)
            snprintf(err, errlen, "cannot listen on %s port %d: %s%s", shown,
                     *port, strerror(last_errno),
                     last_errno == EADDRINUSE
                         ? " (another job, or a process of an earlier run, "
                           "holds it)"
                         : "");
        else
            snprintf(err, errlen, "cannot listen on %s (port chosen by the "
                     "kernel): %s", shown, strerror(last_errno));
        return -1;
    }

    struct sockaddr_storage ss;
    socklen_t sslen = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sslen) < 0) {
        snprintf(err, errlen, "getsockname on the store socket: %s",
                 strerror(errno));
        close(fd);
        return -1;
    }
    if (ss.ss_family == AF_INET6)
        *port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    else
        *port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

/* Start the thread with every signal blocked: signals belong to the host. */
static int start_thread(struct pd_store_server *s)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->thread, NULL, server_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int pd_store_server_start(const char *bind_host, const char *job_key,
                          struct pd_store_server **out, int *port,
                          char *err, size_t errlen)
{
    *out = NULL;
    size_t key_len = job_key ? strlen(job_key) : 0;
    if (key_len == 0 || key_len > PD_STORE_MAX_JOBKEY) {
        snprintf(err, errlen, "store job key must be 1-%d bytes, got %zu",
                 PD_STORE_MAX_JOBKEY, key_len);
        return -1;
    }
    struct pd_store_server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, errlen, "out of memory starting the store");
        return -1;
    }
    memcpy(s->job_key, job_key, key_len);
    s->job_key_len = key_len;
    s->table.max_bytes = PD_STORE_MAX_JOB_BYTES;
    s->table.max_keys = PD_STORE_MAX_JOB_KEYS;
    struct rlimit rl;
    s->ungreeted_cap = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
                               rl.rlim_cur != RLIM_INFINITY &&
                               rl.rlim_cur / 2 < (rlim_t)SIZE_MAX
                           ? (size_t)(rl.rlim_cur / 2) : (size_t)1 << 20;
    if (s->ungreeted_cap < PD_MIN_UNGREETED)
        s->ungreeted_cap = PD_MIN_UNGREETED;
    s->wake_pipe[0] = s->wake_pipe[1] = -1;
    s->pfds_cap = 64;
    s->pfds = calloc(s->pfds_cap, sizeof *s->pfds);
    if (s->pfds == NULL) {
        snprintf(err, errlen, "out of memory starting the store");
        free(s);
        return -1;
    }

    s->listen_fd = open_listener(bind_host, port, err, errlen);
    if (s->listen_fd < 0)
        goto fail;
    if (pipe2(s->wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "cannot create the store wake pipe: %s",
                 strerror(errno));
        goto fail;
    }
    int rc = start_thread(s);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the store thread: %s",
                 strerror(rc));
        goto fail;
    }
    *out = s;
    return 0;

fail:
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->wake_pipe[0] >= 0) {
        close(s->wake_pipe[0]);
        close(s->wake_pipe[1]);
    }
    free(s->pfds);
    free(s);
    return -1;
}

void pd_store_server_limit(struct pd_store_server *s, size_t max_bytes,
                           size_t max_keys)
{
    s->table.max_bytes = max_bytes;
    s->table.max_keys = max_keys;
}

void pd_store_server_stop(struct pd_store_server *s)
{
    if (s == NULL)
        return;
    char byte = 1;
    while (write(s->wake_pipe[1], &byte, 1) < 0 && errno == EINTR)
        ;
    pthread_join(s->thread, NULL);

    for (size_t i = 0; i < s->nconns; i++)
        conn_free(s->conns[i]);
    free(s->conns);
    free(s->pfds);
    free(s->alive);
    kv_free(&s->table);
    close(s->listen_fd);
    close(s->wake_pipe[0]);
    close(s->wake_pipe[1]);
    free(s);
}
