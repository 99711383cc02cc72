/*
 * PMI-1 client: the line protocol of MPICH's Hydra (FD and -pmi-port modes)
 * and of Slurm's srun --mpi=pmi2, spoken directly over the manager's socket
 * so that pdmpi needs no libpmi.
 *
 * One request line, one response line, in step; a request that fails
 * half-way (timeout, garbage, closed socket) leaves the stream out of step,
 * so the connection is marked broken and later calls fail at once with the
 * original reason. Calls are serialised by the caller; abort only writes,
 * so it may interrupt another thread waiting in fence.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* POSIX and Linux calls under -std=c11 */
#endif
#include "pm.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net.h"
#include "pmi1_parse.h"

/* put has no deadline of its own; the manager answers it from a local
 * cache, so a long silence means it is gone. */
#define PD_PMI1_PUT_TIMEOUT_MS 30000
#define PD_PMI1_FINALIZE_TIMEOUT_MS 5000
#define PD_PMI1_ABORT_WAIT_MS 1000
#define PD_PMI1_ABORT_MSG_LEN 512
#define PD_PMI1_REASON_LEN 256
/* Keys longer than this are refused whatever keylen_max says, so that a
 * request line (kvsname, key, value) always fits in PD_PMI1_MAX_LINE. */
#define PD_PMI1_MAX_KEY 256

struct pmi1 {
    struct pd_pm base;              /* first, so a pd_pm * is a pmi1 * */
    int fd;
    const char *launcher;           /* for messages: who we think we talk to */
    int broken;
    int io_errno;                   /* of the last failed read or write */
    char broken_reason[PD_PMI1_REASON_LEN];
    int keylen_max;                 /* as the server said, '\0' included */
    int vallen_max;
    char kvsname[1024];
    size_t buffered;
    char buf[PD_PMI1_MAX_LINE + 1]; /* one full line and its '\n' */
    char line[PD_PMI1_MAX_LINE + 1];
    struct pd_pmi1_reply reply;
};

static const struct pd_pm_ops pmi1_ops;

/* ------------------------------------------------------------- helpers */

/* Strict decimal int: PMI_RANK=1x must not read as 1. */
static int parse_int(const char *s, int *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* Seconds for a message, to a tenth: "300", "0.5". */
static double seconds(int64_t ms)
{
    return (double)((ms + 50) / 100) / 10.0;
}

/* Who set the variables, so the user knows which launcher misbehaved. */
static const char *fd_launcher(void)
{
    if (getenv("SLURM_MPI_TYPE") != NULL || getenv("PMI_JOBID") != NULL)
        return "Slurm srun --mpi=pmi2";
    if (getenv("MPI_LOCALRANKID") != NULL)
        return "MPICH Hydra";
    return "MPICH Hydra or Slurm";
}

static void set_local_rank(struct pd_pm *pm)
{
    int rank, size;
    pm->local_rank = -1;
    pm->local_size = -1;
    if (parse_int(getenv("MPI_LOCALRANKID"), &rank) == 0 &&
        parse_int(getenv("MPI_LOCALNRANKS"), &size) == 0 && rank >= 0 &&
        rank < size) {
        pm->local_rank = rank;
        pm->local_size = size;
        return;
    }
    if (parse_int(getenv("SLURM_LOCALID"), &rank) == 0 && rank >= 0)
        pm->local_rank = rank;
}

static void mark_broken(struct pmi1 *p, const char *why)
{
    p->broken = 1;
    snprintf(p->broken_reason, sizeof p->broken_reason, "%s", why);
}

/* Describe an I/O failure from errno in words a user can act on. */
static const char *io_reason(int e)
{
    switch (e) {
    case ETIMEDOUT:
        return "no reply in time";
    case ECONNRESET:
    case EPIPE:
        return "the process manager closed the connection";
    case EMSGSIZE:
        return "reply line longer than 4096 bytes";
    default:
        return strerror(e);
    }
}

/* ------------------------------------------------------------- lines */

static int wait_readable(int fd, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - pd_net_now_ms();
        int timeout = left <= 0 ? 0 : left > 1000000 ? 1000000 : (int)left;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int n = poll(&pfd, 1, timeout);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
        if (n == 0 && timeout == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
    }
}

/* Take one complete line out of the buffer into p->line, if there is one. */
static int take_line(struct pmi1 *p, size_t *len)
{
    char *nl = memchr(p->buf, '\n', p->buffered);
    if (nl == NULL)
        return 0;
    size_t n = (size_t)(nl - p->buf);
    memcpy(p->line, p->buf, n);
    p->line[n] = '\0';
    p->buffered -= n + 1;
    memmove(p->buf, nl + 1, p->buffered);
    *len = n;
    return 1;
}

/* Read one '\n'-terminated line; -1 with errno (EMSGSIZE: too long). */
static int read_line(struct pmi1 *p, size_t *len, int64_t deadline_ms)
{
    for (;;) {
        if (take_line(p, len))
            return 0;
        if (p->buffered == sizeof p->buf) {
            errno = EMSGSIZE;
            return -1;
        }
        ssize_t n = recv(p->fd, p->buf + p->buffered,
                         sizeof p->buf - p->buffered, 0);
        if (n > 0) {
            p->buffered += (size_t)n;
            continue;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (wait_readable(p->fd, deadline_ms) < 0)
            return -1;
    }
}

static int send_line(struct pmi1 *p, int64_t deadline_ms, const char *fmt,
                     ...) __attribute__((format(printf, 3, 4)));

/* Format and send one request line; -1 with errno. */
static int send_line(struct pmi1 *p, int64_t deadline_ms, const char *fmt,
                     ...)
{
    char out[PD_PMI1_MAX_LINE + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, sizeof out, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof out) {
        errno = EMSGSIZE;
        return -1;
    }
    /* One send per line: a manager that reads lines in pieces still sees
     * them whole, and abort from another thread cannot split a request. */
    return pd_net_write_all(p->fd, out, (size_t)n, deadline_ms);
}

/*
 * Read the reply to `what` into p->reply and check its cmd. Anything but a
 * well-formed line with cmd=expect breaks the connection.
 */
static int recv_reply(struct pmi1 *p, const char *what, const char *expect,
                      int64_t deadline_ms, char *err, size_t errlen)
{
    char why[PD_PMI1_REASON_LEN];
    size_t len;
    if (read_line(p, &len, deadline_ms) < 0) {
        p->io_errno = errno;
        snprintf(why, sizeof why, "%s: %s", what, io_reason(errno));
        goto broken;
    }
    char perr[160];
    if (pd_pmi1_parse_reply(p->line, len, &p->reply, perr,
                            sizeof perr) < 0) {
        snprintf(why, sizeof why, "%s: malformed reply: %s", what, perr);
        goto broken;
    }
    const char *cmd = pd_pmi1_reply_get(&p->reply, "cmd");
    if (strcmp(cmd, expect) != 0) {
        snprintf(why, sizeof why, "%s: expected cmd=%s, got cmd=%.40s", what,
                 expect, cmd);
        goto broken;
    }
    return 0;

broken:
    mark_broken(p, why);
    snprintf(err, errlen, "PMI-1 (%s): %s", p->launcher, why);
    return -1;
}

/* Send a request line and read its reply (see recv_reply). */
static int request(struct pmi1 *p, const char *what, const char *expect,
                   int64_t deadline_ms, char *err, size_t errlen,
                   const char *line)
{
    p->io_errno = 0;
    if (p->broken) {
        snprintf(err, errlen, "PMI-1 (%s): %s: connection unusable after "
                 "an earlier error: %s", p->launcher, what, p->broken_reason);
        return -1;
    }
    if (send_line(p, deadline_ms, "%s\n", line) < 0) {
        char why[PD_PMI1_REASON_LEN];
        p->io_errno = errno;
        snprintf(why, sizeof why, "%s: cannot send: %s", what,
                 io_reason(errno));
        mark_broken(p, why);
        snprintf(err, errlen, "PMI-1 (%s): %s", p->launcher, why);
        return -1;
    }
    return recv_reply(p, what, expect, deadline_ms, err, errlen);
}

/* rc absent (Hydra leaves it out of some replies) or "0" is success. */
static int reply_ok(const struct pmi1 *p)
{
    const char *rc = pd_pmi1_reply_get(&p->reply, "rc");
    return rc == NULL || strcmp(rc, "0") == 0;
}

/* "rc=-1 msg=..." as a short explanation for an error message. */
static void reply_failure(const struct pmi1 *p, char *buf, size_t buflen)
{
    const char *rc = pd_pmi1_reply_get(&p->reply, "rc");
    const char *msg = pd_pmi1_reply_get(&p->reply, "msg");
    snprintf(buf, buflen, "rc=%.20s%s%.120s", rc ? rc : "?",
             msg ? " msg=" : "", msg ? msg : "");
}

/* ------------------------------------------------------------- ops */

static int pmi1_put(struct pd_pm *pm, const char *key, const char *value,
                    char *err, size_t errlen)
{
    struct pmi1 *p = (struct pmi1 *)pm;
    size_t keylen = strlen(key);
    size_t vallen = strlen(value);
    size_t valmax = (size_t)p->vallen_max - 1;
    if (valmax > PD_PM_MAX_VALUE)
        valmax = PD_PM_MAX_VALUE;

    /* The server splits on spaces and lines on '\n': such a key or value
     * would be cut short or desynchronise the stream. */
    if (keylen == 0 || keylen > (size_t)p->keylen_max - 1 ||
        strpbrk(key, " \n") != NULL) {
        snprintf(err, errlen, "PMI-1 put: key '%.80s' must be 1-%d bytes "
                 "without spaces or newlines", key, p->keylen_max - 1);
        return -1;
    }
    if (vallen > valmax || strpbrk(value, " \n") != NULL) {
        snprintf(err, errlen, "PMI-1 put of key %s: value (%zu bytes) must "
                 "be at most %zu bytes without spaces or newlines", key,
                 vallen, valmax);
        return -1;
    }

    char line[PD_PMI1_MAX_LINE];
    snprintf(line, sizeof line, "cmd=put kvsname=%s key=%s value=%s",
             p->kvsname, key, value);
    int64_t deadline = pd_net_now_ms() + PD_PMI1_PUT_TIMEOUT_MS;
    if (request(p, "put", "put_result", deadline, err, errlen, line) < 0)
        return -1;
    if (!reply_ok(p)) {
        char why[160];
        reply_failure(p, why, sizeof why);
        snprintf(err, errlen, "PMI-1 put of key %s refused: %s", key, why);
        return -1;
    }
    return 0;
}

static int pmi1_fence(struct pd_pm *pm, int64_t deadline_ms, char *err,
                      size_t errlen)
{
    struct pmi1 *p = (struct pmi1 *)pm;
    int64_t start = pd_net_now_ms();
    if (request(p, "barrier", "barrier_out", deadline_ms, err, errlen,
                "cmd=barrier_in") < 0) {
        /* Say what a stuck or dead barrier means rather than "no reply". */
        if (p->io_errno == ETIMEDOUT)
            snprintf(err, errlen, "PMI-1 barrier did not complete within %g "
                     "s (a rank has not reached it, or is stuck before it)",
                     seconds(deadline_ms - start));
        else if (p->io_errno == ECONNRESET)
            snprintf(err, errlen, "PMI-1 barrier failed: the process manager "
                     "closed the connection (another rank may have failed)");
        return -1;
    }
    if (!reply_ok(p)) {
        char why[160];
        reply_failure(p, why, sizeof why);
        snprintf(err, errlen, "PMI-1 barrier failed: %s", why);
        return -1;
    }
    return 0;
}

static int pmi1_get(struct pd_pm *pm, int rank, const char *key, char *value,
                    size_t valuelen, int64_t deadline_ms, char *err,
                    size_t errlen)
{
    struct pmi1 *p = (struct pmi1 *)pm;
    (void)rank; /* PMI-1 keys are per job; the caller puts the rank in key */
    if (key[0] == '\0' || strlen(key) > PD_PMI1_MAX_KEY ||
        strpbrk(key, " \n") != NULL) {
        snprintf(err, errlen, "PMI-1 get: bad key '%.80s'", key);
        return -1;
    }
    char line[PD_PMI1_MAX_LINE];
    snprintf(line, sizeof line, "cmd=get kvsname=%s key=%s", p->kvsname,
             key);
    if (request(p, "get", "get_result", deadline_ms, err, errlen, line) < 0)
        return -1;

    const char *v = pd_pmi1_reply_get(&p->reply, "value");
    if (!reply_ok(p) || v == NULL) {
        char why[160];
        reply_failure(p, why, sizeof why);
        snprintf(err, errlen, "PMI-1 get of key %s: key not found (%s)", key,
                 why);
        return -1;
    }
    if (strlen(v) >= valuelen) {
        snprintf(err, errlen, "PMI-1 get of key %s: value of %zu bytes does "
                 "not fit in %zu", key, strlen(v), valuelen);
        return -1;
    }
    snprintf(value, valuelen, "%s", v);
    return 0;
}

/* Hydra and Slurm split on spaces: make the message one token. */
static void message_token(char *dst, size_t dstlen, const char *msg)
{
    size_t i = 0;
    for (; msg != NULL && msg[i] != '\0' && i + 1 < dstlen; i++) {
        unsigned char c = (unsigned char)msg[i];
        dst[i] = (c <= ' ' || c >= 0x7f) ? '_' : (char)c;
    }
    dst[i] = '\0';
}

static void pmi1_abort(struct pd_pm *pm, int code, const char *msg)
{
    struct pmi1 *p = (struct pmi1 *)pm;
    char token[PD_PMI1_ABORT_MSG_LEN];
    message_token(token, sizeof token, msg);
    int64_t deadline = pd_net_now_ms() + PD_PMI1_ABORT_WAIT_MS;
    int rc = token[0] != '\0'
                 ? send_line(p, deadline, "cmd=abort exitcode=%d message=%s\n",
                             code, token)
                 : send_line(p, deadline, "cmd=abort exitcode=%d\n", code);
    if (rc < 0)
        return;
    /* No reply comes (Hydra tears the job down, Slurm kills the step). A
     * short wait lets that start before the caller exits on its own; it
     * only polls, so a thread reading in fence keeps its data. */
    struct pollfd pfd = { .fd = p->fd, .events = POLLRDHUP };
    while (poll(&pfd, 1, PD_PMI1_ABORT_WAIT_MS) < 0 && errno == EINTR)
        ;
}

static void pmi1_finalize(struct pd_pm *pm)
{
    struct pmi1 *p = (struct pmi1 *)pm;
    if (p == NULL)
        return;
    /* A broken stream cannot tell finalize_ack from a late reply, and the
     * job is failing anyway: just close. */
    if (!p->broken) {
        char err[PD_PMI1_REASON_LEN];
        int64_t deadline = pd_net_now_ms() + PD_PMI1_FINALIZE_TIMEOUT_MS;
        request(p, "finalize", "finalize_ack", deadline, err, sizeof err,
                "cmd=finalize");
    }
    close(p->fd);
    free(p);
}

static const struct pd_pm_ops pmi1_ops = {
    .put = pmi1_put,
    .fence = pmi1_fence,
    .get = pmi1_get,
    .abort = pmi1_abort,
    .finalize = pmi1_finalize,
};

/* ------------------------------------------------------------- opening */

/* A reply attribute as a positive int, or an error naming both. */
static int reply_int(struct pmi1 *p, const char *key, int *out, char *err,
                     size_t errlen)
{
    const char *v = pd_pmi1_reply_get(&p->reply, key);
    if (parse_int(v, out) == 0 && *out > 0)
        return 0;
    snprintf(err, errlen, "PMI-1 (%s): get_maxes reply has %s=%.40s, not a "
             "positive integer", p->launcher, key, v ? v : "(missing)");
    return -1;
}

/* init, get_maxes, get_my_kvsname: common to both modes. */
static int handshake(struct pmi1 *p, int64_t deadline_ms, char *err,
                     size_t errlen)
{
    char why[160];
    if (request(p, "init", "response_to_init", deadline_ms, err, errlen,
                "cmd=init pmi_version=1 pmi_subversion=1") < 0)
        return -1;
    if (!reply_ok(p)) {
        reply_failure(p, why, sizeof why);
        snprintf(err, errlen, "PMI-1 (%s): the process manager refused PMI "
                 "version 1.1: %s", p->launcher, why);
        return -1;
    }

    int kvsname_max;
    if (request(p, "get_maxes", "maxes", deadline_ms, err, errlen,
                "cmd=get_maxes") < 0 ||
        reply_int(p, "kvsname_max", &kvsname_max, err, errlen) < 0 ||
        reply_int(p, "keylen_max", &p->keylen_max, err, errlen) < 0 ||
        reply_int(p, "vallen_max", &p->vallen_max, err, errlen) < 0)
        return -1;
    if (p->keylen_max > PD_PMI1_MAX_KEY + 1)
        p->keylen_max = PD_PMI1_MAX_KEY + 1;

    if (request(p, "get_my_kvsname", "my_kvsname", deadline_ms, err, errlen,
                "cmd=get_my_kvsname") < 0)
        return -1;
    const char *kvs = pd_pmi1_reply_get(&p->reply, "kvsname");
    if (!reply_ok(p) || kvs == NULL || kvs[0] == '\0' ||
        strlen(kvs) >= sizeof p->kvsname) {
        snprintf(err, errlen, "PMI-1 (%s): no usable kvsname in the "
                 "get_my_kvsname reply", p->launcher);
        return -1;
    }
    snprintf(p->kvsname, sizeof p->kvsname, "%s", kvs);
    return 0;
}

static int check_rank_size(const char *launcher, const char *rank_name,
                           const char *rank_str, const char *size_name,
                           const char *size_str, int *rank, int *size,
                           char *err, size_t errlen)
{
    if (parse_int(size_str, size) < 0 || *size <= 0) {
        snprintf(err, errlen, "PMI-1 (%s): %s=%.40s is not a positive "
                 "integer", launcher, size_name, size_str);
        return -1;
    }
    if (parse_int(rank_str, rank) < 0 || *rank < 0) {
        snprintf(err, errlen, "PMI-1 (%s): %s=%.40s is not a non-negative "
                 "integer", launcher, rank_name, rank_str);
        return -1;
    }
    if (*rank >= *size) {
        snprintf(err, errlen, "PMI-1 (%s): %s=%d is not below %s=%d",
                 launcher, rank_name, *rank, size_name, *size);
        return -1;
    }
    return 0;
}

/* PMI_FD must name a socket this process holds open. */
static int check_pmi_fd(const char *launcher, const char *fd_str, int *fd,
                        char *err, size_t errlen)
{
    struct stat st;
    if (parse_int(fd_str, fd) < 0 || *fd < 0) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_FD=%.40s is not a file "
                 "descriptor number", launcher, fd_str);
        return -1;
    }
    if (fstat(*fd, &st) < 0) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_FD=%d is not an open file "
                 "descriptor (%s)", launcher, *fd, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_FD=%d is not a socket",
                 launcher, *fd);
        return -1;
    }
    return 0;
}

static struct pmi1 *new_pmi1(int fd, const char *launcher, char *err,
                             size_t errlen)
{
    struct pmi1 *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(err, errlen, "PMI-1 (%s): out of memory", launcher);
        return NULL;
    }
    p->fd = fd;
    p->launcher = launcher;
    p->base.ops = &pmi1_ops;
    p->base.name = "pmi1";
    set_local_rank(&p->base);
    return p;
}

static int open_fd_mode(const char *fd_str, struct pmi1 **out, char *err,
                        size_t errlen)
{
    const char *launcher = fd_launcher();
    const char *rank_str = getenv("PMI_RANK");
    const char *size_str = getenv("PMI_SIZE");
    int fd, rank, size;
    if (rank_str == NULL || size_str == NULL) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_FD=%.40s is set but %s is "
                 "not", launcher, fd_str,
                 rank_str == NULL ? "PMI_RANK" : "PMI_SIZE");
        return -1;
    }
    if (check_rank_size(launcher, "PMI_RANK", rank_str, "PMI_SIZE",
                        size_str, &rank, &size, err, errlen) < 0 ||
        check_pmi_fd(launcher, fd_str, &fd, err, errlen) < 0)
        return -1;
    /* Children (a user's system() call) must not inherit the socket. */
    if (pd_net_set_cloexec(fd) < 0 || pd_net_set_nonblocking(fd) < 0) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_FD=%d: %s", launcher, fd,
                 strerror(errno));
        return -1;
    }
    *out = new_pmi1(fd, launcher, err, errlen);
    if (*out == NULL)
        return -1;
    (*out)->base.rank = rank;
    (*out)->base.size = size;
    return 0;
}

/* Connect to PMI_PORT, trying each resolved address once: the proxy
 * listens before it starts us, so a refusal will not heal. */
static int connect_port(const char *launcher, const char *addr,
                        int64_t deadline_ms, char *err, size_t errlen)
{
    char host[PD_NET_HOST_LEN];
    char port[PD_NET_PORT_LEN];
    char why[160];
    if (pd_net_split_addr(addr, host, sizeof host, port, sizeof port, why,
                          sizeof why) < 0) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_PORT=%.80s: %s", launcher,
                 addr, why);
        return -1;
    }
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_PORT=%.80s: cannot resolve "
                 "%s: %s", launcher, addr, host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    int last_errno = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = pd_net_connect(ai->ai_addr, ai->ai_addrlen, deadline_ms);
        last_errno = errno;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "PMI-1 (%s): cannot connect to PMI_PORT=%.80s: "
                 "%s", launcher, addr, strerror(last_errno));
    return fd;
}

/* Read the "cmd=set size=N", "rank=R", "debug=D" lines after initack, in
 * whatever order they come. */
static int read_set_lines(struct pmi1 *p, int64_t deadline_ms, char *err,
                          size_t errlen)
{
    const char *size_str = NULL, *rank_str = NULL;
    char size_buf[32] = "", rank_buf[32] = "";
    int have_debug = 0;
    while (size_str == NULL || rank_str == NULL || !have_debug) {
        if (recv_reply(p, "initack", "set", deadline_ms, err, errlen) < 0)
            return -1;
        const char *v;
        if ((v = pd_pmi1_reply_get(&p->reply, "size")) != NULL) {
            snprintf(size_buf, sizeof size_buf, "%s", v);
            size_str = size_buf;
        } else if ((v = pd_pmi1_reply_get(&p->reply, "rank")) != NULL) {
            snprintf(rank_buf, sizeof rank_buf, "%s", v);
            rank_str = rank_buf;
        } else if (pd_pmi1_reply_get(&p->reply, "debug") != NULL) {
            have_debug = 1;
        }
    }
    return check_rank_size(p->launcher, "cmd=set rank", rank_str,
                           "cmd=set size", size_str,
                           &p->base.rank, &p->base.size, err, errlen);
}

static int open_port_mode(const char *addr, const char *id_str,
                          int64_t deadline_ms, struct pmi1 **out, char *err,
                          size_t errlen)
{
    const char *launcher = "MPICH Hydra -pmi-port";
    int id;
    if (parse_int(id_str, &id) < 0 || id < 0) {
        snprintf(err, errlen, "PMI-1 (%s): PMI_ID=%.40s is not a "
                 "non-negative integer", launcher, id_str);
        return -1;
    }
    int fd = connect_port(launcher, addr, deadline_ms, err, errlen);
    if (fd < 0)
        return -1;
    struct pmi1 *p = new_pmi1(fd, launcher, err, errlen);
    if (p == NULL) {
        close(fd);
        return -1;
    }
    char line[64];
    snprintf(line, sizeof line, "cmd=initack pmiid=%d", id);
    if (request(p, "initack", "initack", deadline_ms, err, errlen, line) < 0 ||
        read_set_lines(p, deadline_ms, err, errlen) < 0) {
        close(fd);
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

/* Some but not all of the variables: a launcher we half recognise, which
 * must not silently become N singletons. */
static int partial_env(char *err, size_t errlen)
{
    const char *id = getenv("PMI_ID");
    const char *port = getenv("PMI_PORT");
    const char *rank = getenv("PMI_RANK");
    const char *size = getenv("PMI_SIZE");
    const char *hydra = "MPICH Hydra -pmi-port";
    const char *either = "MPICH Hydra or Slurm";
    if (id != NULL)
        snprintf(err, errlen, "PMI-1 (%s): PMI_ID=%.40s is set but PMI_PORT "
                 "is not", hydra, id);
    else if (port != NULL)
        snprintf(err, errlen, "PMI-1 (%s): PMI_PORT=%.80s is set but PMI_ID "
                 "is not", hydra, port);
    else if (rank != NULL)
        snprintf(err, errlen, "PMI-1 (%s): PMI_RANK=%.40s is set but neither "
                 "PMI_FD nor PMI_PORT is", either, rank);
    else if (size != NULL)
        snprintf(err, errlen, "PMI-1 (%s): PMI_SIZE=%.40s is set but neither "
                 "PMI_FD nor PMI_PORT is", either, size);
    else
        return 0;
    return -1;
}

int pd_pmi1_open(struct pd_pm **out, int64_t deadline_ms, char *err,
                 size_t errlen)
{
    const char *fd_str = getenv("PMI_FD");
    const char *port = getenv("PMI_PORT");
    const char *id = getenv("PMI_ID");
    struct pmi1 *p = NULL;
    *out = NULL;

    /* PMI_FD first, as MPICH's own client does. */
    if (fd_str != NULL) {
        if (open_fd_mode(fd_str, &p, err, errlen) < 0)
            return -1;
    } else if (port != NULL && id != NULL) {
        if (open_port_mode(port, id, deadline_ms, &p, err, errlen) < 0)
            return -1;
    } else {
        return partial_env(err, errlen);
    }

    if (handshake(p, deadline_ms, err, errlen) < 0) {
        close(p->fd);
        free(p);
        return -1;
    }
    snprintf(p->base.detail, sizeof(p->base.detail), "PMI-1 (%s), kvs %.100s",
             p->launcher, p->kvsname);
    *out = &p->base;
    return 1;
}
