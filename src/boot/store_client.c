/*
 * The store client. One connection per client, one request in flight at a
 * time (a mutex serialises callers from several threads), and a deadline
 * on every read and write. If a request fails half-way the byte stream is
 * out of step with the server, so the client marks itself broken and every
 * later call fails at once with the original reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* POSIX and Linux calls under -std=c11 */
#endif
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/hex.h"
#include "net.h"
#include "store_auth.h"
#include "store_proto.h"

#define PD_CONNECT_BACKOFF_START_MS 10
#define PD_CONNECT_BACKOFF_CAP_MS 1000
/* One attempt (connect and HELLO) may take this long, doubling from the
 * first up to the cap: a store too busy to accept, or one whose listen
 * backlog overflowed and dropped the handshake, is asked again instead
 * of spending the whole deadline on one attempt. */
#define PD_CONNECT_ATTEMPT_START_MS 2000
#define PD_CONNECT_ATTEMPT_CAP_MS 16000
#define PD_MIN_REQUEST_TIMEOUT_MS 5000
#define PD_SERVER_MESSAGE_LEN 512
#define PD_SMALL_FRAME 2048

struct pd_store_client {
    int fd;
    pthread_mutex_t lock;
    int broken;
    char broken_reason[256];
    int request_timeout_ms;  /* for SET and ADD */
    char addr[PD_STORE_ADDR_LEN];
};

/* ----------------------------------------------------------- connecting */

static int connect_errno_is_retryable(int e)
{
    return e == ECONNREFUSED || e == ETIMEDOUT || e == EHOSTUNREACH ||
           e == ENETUNREACH || e == ECONNRESET || e == EAGAIN;
}

/* Jittered exponential backoff; jitter spreads ranks that start together. */
static int64_t next_backoff_ms(int attempt, unsigned *seed)
{
    int64_t delay = PD_CONNECT_BACKOFF_START_MS;
    for (int i = 0; i < attempt && delay < PD_CONNECT_BACKOFF_CAP_MS; i++)
        delay *= 2;
    if (delay > PD_CONNECT_BACKOFF_CAP_MS)
        delay = PD_CONNECT_BACKOFF_CAP_MS;
    return delay / 2 + rand_r(seed) % (delay / 2 + 1);
}

static void sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = { .tv_sec = ms / 1000,
                           .tv_nsec = (long)(ms % 1000) * 1000000 };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* What one connection attempt learned, for the final error message. */
struct attempt {
    int last_errno;
    char resolved[PD_NET_HOST_LEN];
    char unresolved[128];                 /* getaddrinfo's complaint */
    char refusal[PD_SERVER_MESSAGE_LEN];  /* server said no: do not retry */
    int foreign;                          /* peer is not a pdmpi store */
    int closed_in_hello;                  /* accepted, then closed on us */
    int impostor;                         /* answered without proving the key */
};

static int send_frame(int fd, uint16_t op, const void *key, uint32_t keylen,
                      const void *value, uint32_t vallen, int64_t deadline)
{
    uint8_t small[PD_SMALL_FRAME];
    size_t total = PD_STORE_HEADER_LEN + (size_t)keylen + vallen;
    if (total <= sizeof small) {
        /* One send, so a small request travels as one segment. */
        pd_store_encode_header(small, op, keylen, vallen);
        memcpy(small + PD_STORE_HEADER_LEN, key, keylen);
        memcpy(small + PD_STORE_HEADER_LEN + keylen, value, vallen);
        return pd_net_write_all(fd, small, total, deadline);
    }
    uint8_t head[PD_STORE_HEADER_LEN];
    pd_store_encode_header(head, op, keylen, vallen);
    if (pd_net_write_all(fd, head, sizeof head, deadline) < 0)
        return -1;
    if (keylen && pd_net_write_all(fd, key, keylen, deadline) < 0)
        return -1;
    if (vallen && pd_net_write_all(fd, value, vallen, deadline) < 0)
        return -1;
    return 0;
}

/*
 * Read one reply frame. Its value is returned malloc'ed in *value (NUL
 * terminated for convenience). A malformed reply sets errno to EPROTO.
 */
static int recv_frame(int fd, uint16_t *op, uint8_t **value, size_t *len,
                      int64_t deadline)
{
    uint8_t head[PD_STORE_HEADER_LEN];
    struct pd_store_header h;
    *value = NULL;
    if (pd_net_read_all(fd, head, sizeof head, deadline) < 0)
        return -1;
    pd_store_decode_header(head, &h);
    if (pd_store_check_header(&h) != NULL || h.keylen != 0) {
        errno = EPROTO;
        return -1;
    }
    uint8_t *buf = malloc((size_t)h.vallen + 1);
    if (buf == NULL) {
        errno = ENOMEM;
        return -1;
    }
    if (pd_net_read_all(fd, buf, h.vallen, deadline) < 0) {
        int saved = errno;
        free(buf);
        errno = saved;
        return -1;
    }
    buf[h.vallen] = '\0';
    *op = h.op;
    *value = buf;
    *len = h.vallen;
    return 0;
}

/* Read the store's CHALLENGE, prove the job key in HELLO, check the
 * store's own proof in its OK (store_auth.h). */
static int say_hello(int fd, const char *job_key, int rank, int64_t deadline,
                     struct attempt *at)
{
    uint16_t op;
    uint8_t *reply;
    size_t len;
    if (recv_frame(fd, &op, &reply, &len, deadline) < 0) {
        if (errno == EPROTO) {
            at->foreign = 1;
            snprintf(at->refusal, sizeof at->refusal, "malformed challenge");
        }
        return -1;
    }
    if (op != PD_STORE_OP_CHALLENGE || len != PD_STORE_NONCE_LEN) {
        at->foreign = 1;
        snprintf(at->refusal, sizeof at->refusal,
                 "op %u of %zu bytes where a challenge belongs",
                 (unsigned)op, len);
        free(reply);
        errno = EPROTO;
        return -1;
    }
    uint8_t server_nonce[PD_STORE_NONCE_LEN], client_nonce[PD_STORE_NONCE_LEN];
    uint8_t hello[PD_STORE_HELLO_LEN];
    memcpy(server_nonce, reply, sizeof server_nonce);
    free(reply);
    if (pd_store_nonce(client_nonce) != 0)
        return -1;
    pd_store_hello_make(job_key, server_nonce, client_nonce, rank, hello);
    if (send_frame(fd, PD_STORE_OP_HELLO, "", 0, hello, sizeof hello,
                   deadline) < 0)
        return -1;

    if (recv_frame(fd, &op, &reply, &len, deadline) < 0) {
        if (errno == EPROTO) {
            at->foreign = 1;
            snprintf(at->refusal, sizeof at->refusal, "malformed reply");
        }
        return -1;
    }
    if (op == PD_STORE_OP_OK) {
        uint8_t want[PD_STORE_PROOF_LEN];
        pd_store_server_proof(job_key, strlen(job_key), client_nonce,
                              server_nonce, want);
        int genuine = len == PD_STORE_PROOF_LEN &&
                      pd_store_proof_equal(want, reply);
        free(reply);
        if (genuine)
            return 0;
        at->impostor = 1;
        snprintf(at->refusal, sizeof at->refusal, "no proof of the job key");
        errno = EPROTO;
        return -1;
    }
    if (op == PD_STORE_OP_ERR)
        snprintf(at->refusal, sizeof at->refusal, "%s", (char *)reply);
    else
        snprintf(at->refusal, sizeof at->refusal,
                 "unexpected reply op %u to HELLO", (unsigned)op);
    free(reply);
    errno = EPROTO;
    return -1;
}

/* One pass over the resolved addresses; returns a greeted fd or -1. */
static int try_connect(const char *host, const char *port, const char *job_key,
                       int rank, int64_t deadline, struct attempt *at)
{
    struct addrinfo hints = { 0 };
    struct addrinfo *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        /* A name that does not resolve yet may resolve soon (DNS, /etc/hosts
         * being written by the scheduler): keep trying like a refusal. */
        at->last_errno = EHOSTUNREACH;
        snprintf(at->unresolved, sizeof at->unresolved, "%s",
                 gai_strerror(rc));
        return -1;
    }
    at->unresolved[0] = '\0';
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        pd_net_numeric_host(ai->ai_addr, ai->ai_addrlen, at->resolved,
                            sizeof at->resolved);
        fd = pd_net_connect(ai->ai_addr, ai->ai_addrlen, deadline);
        if (fd < 0) {
            at->last_errno = errno;
            continue;
        }
        pd_net_set_nodelay(fd);
        if (say_hello(fd, job_key, rank, deadline, at) < 0) {
            /* EOF before a reply reads as ECONNRESET: retryable, it is
             * what a listen backlog overflow looks like. */
            at->last_errno = errno;
            if (errno == ECONNRESET)
                at->closed_in_hello = 1;
            close(fd);
            fd = -1;
            if (at->refusal[0])
                break;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static void format_connect_error(char *err, size_t errlen, const char *addr,
                                 const struct attempt *at, int attempts,
                                 int64_t elapsed_ms)
{
    if (at->foreign) {
        snprintf(err, errlen, "the service at %s (%s) does not speak the "
                 "pdmpi store protocol (wrong address or port?)",
                 addr, at->resolved);
        return;
    }
    if (at->impostor) {
        snprintf(err, errlen, "the service at %s (%s) could not prove it "
                 "knows the job key: another job's store, or a process "
                 "posing as it", addr, at->resolved);
        return;
    }
    if (at->refusal[0]) {
        snprintf(err, errlen, "store at %s (%s) refused this process: %s",
                 addr, at->resolved, at->refusal);
        return;
    }
    if (at->unresolved[0]) {
        snprintf(err, errlen,
                 "cannot resolve the host of store address %s: %s "
                 "(gave up after %.1f s)",
                 addr, at->unresolved, (double)elapsed_ms / 1000.0);
        return;
    }
    const char *why = at->closed_in_hello
                          ? "the peer accepted, then closed the connection "
                            "before answering HELLO"
                          : strerror(at->last_errno);
    snprintf(err, errlen,
             "cannot connect to store at %s (resolved %s): %s "
             "(gave up after %.1f s, %d attempt%s)",
             addr, at->resolved[0] ? at->resolved : "?", why,
             (double)elapsed_ms / 1000.0, attempts, attempts == 1 ? "" : "s");
}

static int store_connect(const char *addr, const char *job_key, int rank,
                         int timeout_ms, bool refused_is_final,
                         struct pd_store_client **out, char *err,
                         size_t errlen)
{
    char host[PD_NET_HOST_LEN];
    char port[PD_NET_PORT_LEN];
    *out = NULL;
    if (pd_net_split_addr(addr, host, sizeof host, port, sizeof port, err,
                          errlen) < 0)
        return -1;
    size_t key_len = job_key ? strlen(job_key) : 0;
    if (key_len == 0 || key_len > PD_STORE_MAX_JOBKEY) {
        snprintf(err, errlen, "store job key must be 1-%d bytes, got %zu",
                 PD_STORE_MAX_JOBKEY, key_len);
        return -1;
    }

    int64_t start = pd_net_now_ms();
    int64_t deadline = start + (timeout_ms > 0 ? timeout_ms : 0);
    unsigned seed = (unsigned)start ^ ((unsigned)getpid() << 16) ^
                    (unsigned)rank;
    struct attempt at = { 0 };
    int attempts = 0;
    int fd = -1;
    int64_t attempt_ms = PD_CONNECT_ATTEMPT_START_MS;
    for (;;) {
        attempts++;
        int64_t now = pd_net_now_ms();
        int64_t attempt_deadline =
            now + attempt_ms < deadline ? now + attempt_ms : deadline;
        fd = try_connect(host, port, job_key, rank, attempt_deadline, &at);
        if (attempt_ms < PD_CONNECT_ATTEMPT_CAP_MS)
            attempt_ms *= 2;
        if (fd >= 0 || at.refusal[0] ||
            !connect_errno_is_retryable(at.last_errno) ||
            (refused_is_final && at.last_errno == ECONNREFUSED))
            break;
        int64_t left = deadline - pd_net_now_ms();
        if (left <= 0)
            break;
        int64_t pause = next_backoff_ms(attempts - 1, &seed);
        sleep_ms(pause < left ? pause : left);
    }
    if (fd < 0) {
        format_connect_error(err, errlen, addr, &at, attempts,
                             pd_net_now_ms() - start);
        return -1;
    }

    struct pd_store_client *c = calloc(1, sizeof *c);
    if (c == NULL) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->fd = fd;
    pthread_mutex_init(&c->lock, NULL);
    c->request_timeout_ms = timeout_ms > PD_MIN_REQUEST_TIMEOUT_MS
                                ? timeout_ms
                                : PD_MIN_REQUEST_TIMEOUT_MS;
    snprintf(c->addr, sizeof c->addr, "%s", addr);
    *out = c;
    return 0;
}

int pd_store_connect(const char *addr, const char *job_key, int rank,
                     int timeout_ms, struct pd_store_client **out,
                     char *err, size_t errlen)
{
    return store_connect(addr, job_key, rank, timeout_ms, false, out, err,
                         errlen);
}

int pd_store_reconnect(const char *addr, const char *job_key, int rank,
                       int timeout_ms, struct pd_store_client **out,
                       char *err, size_t errlen)
{
    return store_connect(addr, job_key, rank, timeout_ms, true, out, err,
                         errlen);
}

void pd_store_close(struct pd_store_client *c)
{
    if (c == NULL)
        return;
    close(c->fd);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ------------------------------------------------------------ requests */

static void mark_broken(struct pd_store_client *c, const char *what)
{
    c->broken = 1;
    snprintf(c->broken_reason, sizeof c->broken_reason, "%s", what);
}

/*
 * Send one request and read its reply under the client lock. On success
 * the reply's op and malloc'ed value are returned; on failure err says
 * what went wrong and the client is marked broken if the stream is lost.
 */
static int round_trip(struct pd_store_client *c, uint16_t op, const char *key,
                      const void *value, size_t vallen, int64_t timeout_ms,
                      uint16_t *reply_op, uint8_t **reply, size_t *reply_len,
                      char *err, size_t errlen)
{
    size_t keylen = strlen(key);
    if (keylen > PD_STORE_MAX_KEY) {
        snprintf(err, errlen, "store key is %zu bytes; the limit is %d",
                 keylen, PD_STORE_MAX_KEY);
        return -1;
    }
    if (vallen > PD_STORE_MAX_VALUE) {
        snprintf(err, errlen, "store value for key %s is %zu bytes; the "
                 "limit is %u", key, vallen, PD_STORE_MAX_VALUE);
        return -1;
    }

    pthread_mutex_lock(&c->lock);
    if (c->broken) {
        snprintf(err, errlen, "store connection to %s is unusable after an "
                 "earlier error: %s", c->addr, c->broken_reason);
        pthread_mutex_unlock(&c->lock);
        return -1;
    }
    int64_t deadline = pd_net_now_ms() + timeout_ms;
    int rc = send_frame(c->fd, op, key, (uint32_t)keylen, value,
                        (uint32_t)vallen, deadline);
    if (rc == 0)
        rc = recv_frame(c->fd, reply_op, reply, reply_len, deadline);
    if (rc < 0) {
        char what[200];
        snprintf(what, sizeof what, "%s (key %s)",
                 errno == ETIMEDOUT ? "no reply in time"
                 : errno == EPROTO  ? "malformed reply"
                 : errno == ECONNRESET ? "connection closed by the store"
                                       : strerror(errno),
                 key);
        mark_broken(c, what);
        snprintf(err, errlen, "store at %s: %s", c->addr, what);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* Turn an ERR or unexpected reply into err; returns -1. */
static int reply_error(struct pd_store_client *c, uint16_t op,
                       const uint8_t *reply, char *err, size_t errlen)
{
    if (op == PD_STORE_OP_ERR)
        snprintf(err, errlen, "store at %s: %s", c->addr,
                 (const char *)reply);
    else
        snprintf(err, errlen, "store at %s: unexpected reply op %u",
                 c->addr, (unsigned)op);
    return -1;
}

int pd_store_set(struct pd_store_client *c, const char *key,
                 const void *value, size_t len, char *err, size_t errlen)
{
    uint16_t op;
    uint8_t *reply;
    size_t reply_len;
    if (round_trip(c, PD_STORE_OP_SET, key, value, len, c->request_timeout_ms,
                   &op, &reply, &reply_len, err, errlen) < 0)
        return -1;
    int rc = op == PD_STORE_OP_OK ? 0 : reply_error(c, op, reply, err, errlen);
    free(reply);
    return rc;
}

int pd_store_get(struct pd_store_client *c, const char *key, void **value,
                 size_t *len, int timeout_ms, char *err, size_t errlen)
{
    uint16_t op;
    uint8_t *reply;
    size_t reply_len;
    uint8_t wire_timeout[4];
    *value = NULL;
    *len = 0;
    if (timeout_ms < 0)
        timeout_ms = 0;
    pd_store_put_u32(wire_timeout, (uint32_t)timeout_ms);
    if (round_trip(c, PD_STORE_OP_GET, key, wire_timeout, sizeof wire_timeout,
                   (int64_t)timeout_ms + PD_STORE_GET_SLACK_MS, &op, &reply,
                   &reply_len, err, errlen) < 0)
        return -1;
    if (op != PD_STORE_OP_VALUE) {
        reply_error(c, op, reply, err, errlen);
        free(reply);
        return -2;                  /* the store answered: no such value */
    }
    *value = reply;
    *len = reply_len;
    return 0;
}

/* A request whose answer is one i64 (ADD, ALIVE): 0 and *result, -1 when
 * the round trip failed, else the store's refusal in err. */
static int request_i64(struct pd_store_client *c, uint16_t req_op,
                       const char *key, const void *value, size_t vallen,
                       int64_t *result, char *err, size_t errlen)
{
    uint16_t op;
    uint8_t *reply;
    size_t reply_len;
    if (round_trip(c, req_op, key, value, vallen, c->request_timeout_ms, &op,
                   &reply, &reply_len, err, errlen) < 0)
        return -1;
    int rc = 0;
    if (op == PD_STORE_OP_VALUE && reply_len == 8)
        *result = pd_store_get_i64(reply);
    else
        rc = reply_error(c, op, reply, err, errlen);
    free(reply);
    return rc;
}

int pd_store_add(struct pd_store_client *c, const char *key, int64_t delta,
                 int64_t *result, char *err, size_t errlen)
{
    uint8_t wire_delta[8];
    pd_store_put_i64(wire_delta, delta);
    return request_i64(c, PD_STORE_OP_ADD, key, wire_delta, sizeof wire_delta,
                       result, err, errlen);
}

int pd_store_alive(struct pd_store_client *c, int rank, int64_t *connections,
                   char *err, size_t errlen)
{
    uint8_t wire_rank[4];
    pd_store_put_u32(wire_rank, (uint32_t)rank);
    return request_i64(c, PD_STORE_OP_ALIVE, "", wire_rank, sizeof wire_rank,
                       connections, err, errlen);
}

int pd_store_local_host(struct pd_store_client *c, char *host, size_t hostlen)
{
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof ss;
    if (getsockname(c->fd, (struct sockaddr *)&ss, &sslen) < 0)
        return -1;
    return pd_net_numeric_host((struct sockaddr *)&ss, sslen, host, hostlen);
}

/* ------------------------------------------------------------- job keys */

static int read_urandom(uint8_t *buf, size_t len)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    return got == len ? 0 : -1;
}

/* Last resort: unique enough to tell jobs apart, not secret. */
static void weak_random(uint8_t *buf, size_t len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                 ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)buf;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;  /* xorshift64 */
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)(x >> 24);
    }
}

static void fill_random(uint8_t *buf, size_t len)
{
    ssize_t n;
    do
        n = getrandom(buf, len, 0);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)len)
        return;
    if (read_urandom(buf, len) == 0)
        return;
    weak_random(buf, len);
}

void pd_store_make_job_key(char *buf, size_t buflen)
{
    uint8_t bytes[16];
    if (buflen == 0)
        return;
    fill_random(bytes, sizeof bytes);
    size_t fit = (buflen - 1) / 2; /* whole bytes, shorter buffers cut */
    pd_hex_encode(bytes, fit < sizeof bytes ? fit : sizeof bytes, buf);
}
