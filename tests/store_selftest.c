/*
 * Self-test of the rendezvous store: a server, well-behaved clients on
 * several threads, and misbehaving raw sockets (wrong job key, garbage,
 * oversized frames, stalled writers, non-readers) that must be refused or
 * tolerated without disturbing anyone else. Prints TAP ("ok N - ...").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* POSIX and Linux calls under -std=c11 */
#endif
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot/net.h"
#include "boot/sha256.h"
#include "boot/store_auth.h"
#include "boot/store.h"
#include "boot/store_proto.h"

#define WATCHDOG_SECONDS 60
#define NUM_OWN_CLIENTS 6
#define NUM_SHARED_THREADS 4
#define ADDS_PER_THREAD 50

static int tests_run;
static int tests_failed;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void check(int ok, const char *name, const char *fmt, ...)
{
    pthread_mutex_lock(&report_lock);
    tests_run++;
    if (ok) {
        printf("ok %d - %s\n", tests_run, name);
    } else {
        tests_failed++;
        printf("not ok %d - %s", tests_run, name);
        if (fmt != NULL) {
            va_list ap;
            va_start(ap, fmt);
            printf(": ");
            vprintf(fmt, ap);
            va_end(ap);
        }
        printf("\n");
    }
    fflush(stdout);
    pthread_mutex_unlock(&report_lock);
}

static char job_key[64];
static char store_addr[PD_STORE_ADDR_LEN];
static int store_port;

static struct pd_store_client *connect_or_die(const char *key, int rank)
{
    struct pd_store_client *c = NULL;
    char err[512];
    if (pd_store_connect(store_addr, key, rank, 5000, &c, err, sizeof err)) {
        printf("Bail out! cannot connect rank %d: %s\n", rank, err);
        exit(1);
    }
    return c;
}

/* A working client can still set and get: the server is not disturbed. */
static int store_still_works(const char *tag)
{
    struct pd_store_client *c = connect_or_die(job_key, 99);
    char err[512], key[64];
    void *value = NULL;
    size_t len = 0;
    snprintf(key, sizeof key, "alive/%s", tag);
    int ok = pd_store_set(c, key, tag, strlen(tag), err, sizeof err) == 0 &&
             pd_store_get(c, key, &value, &len, 1000, err, sizeof err) == 0 &&
             len == strlen(tag) && memcmp(value, tag, len) == 0;
    free(value);
    pd_store_close(c);
    return ok;
}

/* ------------------------------------------------------- raw sockets */

/* The challenge each raw connection got, by descriptor. */
static uint8_t raw_nonce[1024][PD_STORE_NONCE_LEN];

/* Connect and take the store's challenge (the first frame it sends). */
static int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)store_port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct timeval tv = { .tv_sec = 3 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        printf("Bail out! raw connect: %s\n", strerror(errno));
        exit(1);
    }
    uint8_t head[PD_STORE_HEADER_LEN];
    struct pd_store_header h;
    if (fd >= 1024 ||
        pd_net_read_all(fd, head, sizeof head, pd_net_now_ms() + 3000) < 0 ||
        (pd_store_decode_header(head, &h), h.op != PD_STORE_OP_CHALLENGE) ||
        h.vallen != PD_STORE_NONCE_LEN ||
        pd_net_read_all(fd, raw_nonce[fd], PD_STORE_NONCE_LEN,
                        pd_net_now_ms() + 3000) < 0) {
        printf("Bail out! no challenge from the store\n");
        exit(1);
    }
    return fd;
}

static void raw_send(int fd, const void *buf, size_t len)
{
    if (pd_net_write_all(fd, buf, len, pd_net_now_ms() + 3000) < 0)
        printf("# raw send failed: %s\n", strerror(errno));
}

static void raw_frame(int fd, uint16_t op, const char *key, const void *value,
                      uint32_t vallen)
{
    uint8_t frame[PD_STORE_HEADER_LEN + 256];
    size_t keylen = strlen(key);
    pd_store_encode_header(frame, op, (uint32_t)keylen, vallen);
    memcpy(frame + PD_STORE_HEADER_LEN, key, keylen);
    memcpy(frame + PD_STORE_HEADER_LEN + keylen, value, vallen);
    raw_send(fd, frame, PD_STORE_HEADER_LEN + keylen + vallen);
}

/* Read one reply header; returns its op or -1. Skips the body. */
static int raw_reply_op(int fd)
{
    uint8_t head[PD_STORE_HEADER_LEN];
    if (pd_net_read_all(fd, head, sizeof head, pd_net_now_ms() + 3000) < 0)
        return -1;
    struct pd_store_header h;
    pd_store_decode_header(head, &h);
    char sink[4096];
    for (uint32_t left = h.vallen; left > 0;) {
        uint32_t n = left < sizeof sink ? left : sizeof sink;
        if (pd_net_read_all(fd, sink, n, pd_net_now_ms() + 3000) < 0)
            return -1;
        left -= n;
    }
    return h.op;
}

/* A HELLO proving key against fd's challenge. */
static void raw_hello(int fd, const char *key)
{
    uint8_t hello[PD_STORE_HELLO_LEN], client_nonce[PD_STORE_NONCE_LEN];
    memset(client_nonce, 0x5a, sizeof client_nonce);
    pd_store_hello_make(key, raw_nonce[fd], client_nonce, 7, hello);
    raw_frame(fd, PD_STORE_OP_HELLO, "", hello, sizeof hello);
}

/* 1 when the server closed the connection (after any pending bytes). */
static int raw_sees_eof(int fd)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0)
            return 1;
        if (n < 0)
            return errno == ECONNRESET;
    }
}

/* ---------------------------------------------------------- the tests */

/*
 * 1 100 connections from another process that never say HELLO,
 * against a server whose process may hold 1 024 descriptors: the job's
 * clients keep working all along, and the server closes every stranger
 * within its grace of a few seconds (the oldest at once beyond a cap).
 */
#define STRANGERS 1100
static void test_idle_strangers(void)
{
    struct rlimit old;
    getrlimit(RLIMIT_NOFILE, &old);
    struct rlimit low = { old.rlim_max < 1024 ? old.rlim_max : 1024,
                          old.rlim_max };
    setrlimit(RLIMIT_NOFILE, &low);
    /* A server of its own, started under that limit as pdmpirun's is. */
    struct pd_store_server *server = NULL;
    char saved_addr[sizeof store_addr], err[512];
    int saved_port = store_port;
    memcpy(saved_addr, store_addr, sizeof store_addr);
    store_port = 0;             /* the kernel picks */
    if (pd_store_server_start("127.0.0.1", job_key, &server, &store_port, err,
                              sizeof err)) {
        check(0, "strangers: a server under 1024 descriptors", "%s", err);
        store_port = saved_port;
        setrlimit(RLIMIT_NOFILE, &old);
        return;
    }
    snprintf(store_addr, sizeof store_addr, "127.0.0.1:%d", store_port);
    int to_parent[2], to_child[2];
    if (pipe(to_parent) != 0 || pipe(to_child) != 0) {
        check(0, "strangers: pipes", "%s", strerror(errno));
        return;
    }
    struct pd_store_client *early = connect_or_die(job_key, 98);
    pid_t child = fork();
    if (child == 0) {
        close(to_child[1]);     /* a parent that dies ends the wait */
        close(to_parent[0]);
        struct rlimit big = { old.rlim_max, old.rlim_max };
        setrlimit(RLIMIT_NOFILE, &big);
        static int fds[STRANGERS];
        int n = 0;
        for (; n < STRANGERS; n++) {
            fds[n] = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in sa = { .sin_family = AF_INET,
                                      .sin_port = htons((uint16_t)store_port),
                                      .sin_addr.s_addr =
                                          htonl(INADDR_LOOPBACK) };
            if (fds[n] < 0 ||
                connect(fds[n], (struct sockaddr *)&sa, sizeof sa) < 0)
                break;
            struct timeval tv = { .tv_sec = 10 };
            setsockopt(fds[n], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        }
        int counts[2] = { n, 0 };
        if (write(to_parent[1], counts, sizeof(int)) < 0)
            _exit(1);
        char go;
        if (read(to_child[0], &go, 1) != 1)
            _exit(1);
        for (int i = 0; i < n && raw_sees_eof(fds[i]); i++)
            counts[1]++;     /* stops at the first left open past 10 s */
        if (write(to_parent[1], &counts[1], sizeof(int)) < 0)
            _exit(1);
        _exit(0);
    }
    close(to_child[0]);
    close(to_parent[1]);
    int opened = 0, closed = 0;
    if (read(to_parent[0], &opened, sizeof opened) != sizeof opened)
        opened = -1;
    check(opened >= STRANGERS * 9 / 10,
          "strangers: about 1100 idle connections opened", "%d", opened);
    /* A client connected before them works at once; a new one waits
     * behind the strangers in the kernel's listen queue while the server
     * closes them PD_MAX_UNGREETED at a time. */
    int64_t start = pd_net_now_ms();
    char e[512], key[] = "strangers/early";
    void *value = NULL;
    size_t len = 0;
    int early_works = pd_store_set(early, key, "x", 1, e, sizeof e) == 0 &&
                      pd_store_get(early, key, &value, &len, 1000, e,
                                   sizeof e) == 0 && len == 1;
    free(value);
    int64_t took = pd_net_now_ms() - start;
    check(early_works && took < 500,
          "strangers: a connected client of the job works at once",
          "%s after %" PRId64 " ms", early_works ? "worked" : e, took);
    start = pd_net_now_ms();
    int works = store_still_works("strangers");
    took = pd_net_now_ms() - start;
    check(works && took < 3000,
          "strangers: a new client of the job connects within 3 s",
          "%s after %" PRId64 " ms", works ? "worked" : "failed", took);
    printf("# a new client worked after %" PRId64 " ms\n", took);
    if (write(to_child[1], "g", 1) != 1 ||
        read(to_parent[0], &closed, sizeof closed) != sizeof closed)
        closed = -1;
    took = pd_net_now_ms() - start;
    check(closed == opened && took < 8000,
          "strangers: the server closed every one within its grace",
          "%d of %d closed after %" PRId64 " ms", closed, opened, took);
    printf("# %d strangers closed within %" PRId64 " ms\n", closed, took);
    close(to_child[1]);
    waitpid(child, NULL, 0);
    pd_store_close(early);
    close(to_parent[0]);
    check(store_still_works("after-strangers"),
          "strangers: the store works after them", NULL);
    pd_store_server_stop(server);
    store_port = saved_port;
    memcpy(store_addr, saved_addr, sizeof store_addr);
    setrlimit(RLIMIT_NOFILE, &old);
}

/* SHA-256 and HMAC-SHA256 against published answers: FIPS 180-4's
 * examples and RFC 4231's test cases 1, 2 and 6 (a key longer than a
 * block). */
static void check_digest(const uint8_t *got, const char *want_hex,
                         const char *name)
{
    char hex[2 * PD_SHA256_LEN + 1];
    for (int i = 0; i < PD_SHA256_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", got[i]);
    check(strcmp(hex, want_hex) == 0, name, "%s", hex);
}

static void test_sha256(void)
{
    uint8_t out[PD_SHA256_LEN];
    pd_sha256("abc", 3, out);
    check_digest(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                 "SHA-256 of \"abc\"");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    pd_sha256(two, strlen(two), out);
    check_digest(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
                 "SHA-256 of the two-block example");
    uint8_t key1[20];
    memset(key1, 0x0b, sizeof key1);
    pd_hmac_sha256(key1, sizeof key1, "Hi There", 8, out);
    check_digest(out, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
                 "HMAC-SHA256, RFC 4231 case 1");
    const char *msg2 = "what do ya want for nothing?";
    pd_hmac_sha256("Jefe", 4, msg2, strlen(msg2), out);
    check_digest(out, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
                 "HMAC-SHA256, RFC 4231 case 2");
    uint8_t key6[131];
    memset(key6, 0xaa, sizeof key6);
    const char *msg6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    pd_hmac_sha256(key6, sizeof key6, msg6, strlen(msg6), out);
    check_digest(out, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
                 "HMAC-SHA256, RFC 4231 case 6");
}

static void test_job_key(void)
{
    char a[64], b[64];
    pd_store_make_job_key(a, sizeof a);
    pd_store_make_job_key(b, sizeof b);
    int hex = strspn(a, "0123456789abcdef") == 32 && strlen(a) == 32;
    check(hex, "job key is 32 hex chars", "got '%s'", a);
    check(strcmp(a, b) != 0, "two job keys differ", "both '%s'", a);
}

static void test_bad_addresses(void)
{
    struct pd_store_client *c = NULL;
    char err[512];
    int rc = pd_store_connect("nocolon", job_key, 0, 1000, &c, err,
                              sizeof err);
    check(rc < 0 && strstr(err, "nocolon"), "address without port refused",
          "%s", err);
    rc = pd_store_connect("::1:5", job_key, 0, 1000, &c, err, sizeof err);
    check(rc < 0 && strstr(err, "[addr]:port"), "bare IPv6 refused", "%s",
          err);
}

static void test_set_get_basics(void)
{
    struct pd_store_client *c = connect_or_die(job_key, 0);
    char err[512];
    char host[64];
    void *value = NULL;
    size_t len = 0;

    check(pd_store_local_host(c, host, sizeof host) == 0 &&
              strcmp(host, "127.0.0.1") == 0,
          "local host is the loopback address", "got '%s'", host);

    int rc = pd_store_set(c, "k", "hello", 5, err, sizeof err);
    rc = rc ? rc : pd_store_get(c, "k", &value, &len, 1000, err, sizeof err);
    check(rc == 0 && len == 5 && memcmp(value, "hello", 5) == 0,
          "set then get", "%s", rc ? err : "wrong value");
    free(value);

    rc = pd_store_set(c, "k", "", 0, err, sizeof err);
    rc = rc ? rc : pd_store_get(c, "k", &value, &len, 1000, err, sizeof err);
    check(rc == 0 && len == 0, "overwrite with an empty value", "%s", err);
    free(value);

    size_t big_len = 3u << 20;
    char *big = malloc(big_len);
    for (size_t i = 0; i < big_len; i++)
        big[i] = (char)(i * 7);
    rc = pd_store_set(c, "big", big, big_len, err, sizeof err);
    rc = rc ? rc : pd_store_get(c, "big", &value, &len, 1000, err, sizeof err);
    check(rc == 0 && len == big_len && memcmp(value, big, big_len) == 0,
          "3 MiB value round trip", "%s", err);
    free(value);
    free(big);

    int64_t total = 0;
    rc = pd_store_add(c, "ctr", 5, &total, err, sizeof err);
    rc = rc ? rc : pd_store_add(c, "ctr", -2, &total, err, sizeof err);
    check(rc == 0 && total == 3, "add creates and adds", "%s total=%" PRId64,
          err, total);
    rc = pd_store_get(c, "ctr", &value, &len, 0, err, sizeof err);
    check(rc == 0 && len == 1 && memcmp(value, "3", 1) == 0,
          "a counter reads as decimal text", "%s", err);
    free(value);

    rc = pd_store_add(c, "big", 1, &total, err, sizeof err);
    check(rc < 0 && strstr(err, "not a counter") != NULL,
          "add to a non-counter is an error", "%s", err);
    rc = pd_store_set(c, "k", "x", 1, err, sizeof err);
    check(rc == 0, "client usable after a refused add", "%s", err);

    char long_key[PD_STORE_MAX_KEY + 2];
    memset(long_key, 'a', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    rc = pd_store_set(c, long_key, "v", 1, err, sizeof err);
    check(rc < 0 && strstr(err, "limit"), "over-long key refused", "%s", err);

    int64_t start = pd_net_now_ms();
    rc = pd_store_get(c, "missing", &value, &len, 200, err, sizeof err);
    int64_t waited = pd_net_now_ms() - start;
    check(rc < 0 && strstr(err, "timed out after 200 ms waiting for key "
                                "missing") && waited >= 190 && waited < 4000,
          "get of a missing key times out", "rc=%d after %" PRId64 " ms: %s",
          rc, waited, err);
    rc = pd_store_set(c, "after-timeout", "1", 1, err, sizeof err);
    check(rc == 0, "client usable after a get timed out", "%s", err);
    pd_store_close(c);
}

struct waiter {
    const char *key;
    int timeout_ms;
    int rc;
    int64_t waited_ms;
    char value[64];
    char err[512];
};

static void *wait_for_key(void *arg)
{
    struct waiter *w = arg;
    struct pd_store_client *c = connect_or_die(job_key, 1);
    void *value = NULL;
    size_t len = 0;
    int64_t start = pd_net_now_ms();
    w->rc = pd_store_get(c, w->key, &value, &len, w->timeout_ms, w->err,
                         sizeof w->err);
    w->waited_ms = pd_net_now_ms() - start;
    if (w->rc == 0)
        snprintf(w->value, sizeof w->value, "%.*s", (int)len, (char *)value);
    free(value);
    pd_store_close(c);
    return NULL;
}

static void test_parked_get_is_woken(void)
{
    struct waiter w = { .key = "late", .timeout_ms = 5000 };
    pthread_t t;
    pthread_create(&t, NULL, wait_for_key, &w);
    usleep(150 * 1000);
    struct pd_store_client *c = connect_or_die(job_key, 2);
    char err[512];
    pd_store_set(c, "late", "arrived", 7, err, sizeof err);
    pthread_join(t, NULL);
    check(w.rc == 0 && strcmp(w.value, "arrived") == 0 && w.waited_ms < 4000,
          "a waiting get is answered by a later set",
          "rc=%d value='%s' after %" PRId64 " ms: %s", w.rc, w.value,
          w.waited_ms, w.err);

    /* Several waiters on one key, woken by an add. */
    struct waiter ws[3];
    pthread_t ts[3];
    for (int i = 0; i < 3; i++) {
        ws[i] = (struct waiter){ .key = "go", .timeout_ms = 5000 };
        pthread_create(&ts[i], NULL, wait_for_key, &ws[i]);
    }
    usleep(150 * 1000);
    int64_t total;
    pd_store_add(c, "go", 1, &total, err, sizeof err);
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        pthread_join(ts[i], NULL);
        ok &= ws[i].rc == 0 && strcmp(ws[i].value, "1") == 0;
    }
    check(ok, "three waiters on one key are all woken", NULL);
    pd_store_close(c);
}

/*
 * Every worker publishes before anyone reads: threads that share a client
 * also share its one-request-at-a-time lock, so a GET waiting for a key
 * that a sibling on the same client has yet to SET would wait it out.
 */
static pthread_barrier_t published;

struct worker {
    int rank;
    struct pd_store_client *shared;  /* NULL: connect our own */
    int failures;
    char err[512];
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct pd_store_client *c = w->shared ? w->shared
                                          : connect_or_die(job_key, w->rank);
    int nworkers = NUM_OWN_CLIENTS + NUM_SHARED_THREADS;
    char key[64], want[64];
    snprintf(key, sizeof key, "addr/%d", w->rank);
    snprintf(want, sizeof want, "rank-%d-value", w->rank);
    if (pd_store_set(c, key, want, strlen(want), w->err, sizeof w->err))
        w->failures++;
    for (int i = 0; i < ADDS_PER_THREAD; i++) {
        int64_t total;
        if (pd_store_add(c, "barrier", 1, &total, w->err, sizeof w->err))
            w->failures++;
    }
    pthread_barrier_wait(&published);
    for (int peer = 0; peer < nworkers; peer++) {
        void *value = NULL;
        size_t len = 0;
        snprintf(key, sizeof key, "addr/%d", peer);
        snprintf(want, sizeof want, "rank-%d-value", peer);
        if (pd_store_get(c, key, &value, &len, 5000, w->err, sizeof w->err) ||
            len != strlen(want) || memcmp(value, want, len) != 0)
            w->failures++;
        free(value);
    }
    if (!w->shared)
        pd_store_close(c);
    return NULL;
}

static void test_many_threads(void)
{
    enum { N = NUM_OWN_CLIENTS + NUM_SHARED_THREADS };
    struct worker workers[N];
    pthread_t threads[N];
    struct pd_store_client *shared = connect_or_die(job_key, 50);
    pthread_barrier_init(&published, NULL, N);
    for (int i = 0; i < N; i++) {
        workers[i] = (struct worker){
            .rank = i, .shared = i >= NUM_OWN_CLIENTS ? shared : NULL,
        };
        pthread_create(&threads[i], NULL, worker_main, &workers[i]);
    }
    int failures = 0;
    const char *first_err = "";
    for (int i = 0; i < N; i++) {
        pthread_join(threads[i], NULL);
        failures += workers[i].failures;
        if (workers[i].failures && !*first_err)
            first_err = workers[i].err;
    }
    pthread_barrier_destroy(&published);
    check(failures == 0, "threads exchange keys (own and shared clients)",
          "%d failures, e.g. %s", failures, first_err);

    char err[512];
    int64_t total = 0;
    pd_store_add(shared, "barrier", 0, &total, err, sizeof err);
    check(total == (int64_t)N * ADDS_PER_THREAD, "concurrent adds all count",
          "total %" PRId64, total);
    pd_store_close(shared);
}

static void test_wrong_job_key(void)
{
    struct pd_store_client *c = NULL;
    char err[512];
    int64_t start = pd_net_now_ms();
    int rc = pd_store_connect(store_addr, "not-this-job", 3, 5000, &c, err,
                              sizeof err);
    int64_t took = pd_net_now_ms() - start;
    check(rc < 0 && strstr(err, "wrong job key") && took < 3000,
          "wrong job key refused at once", "rc=%d after %" PRId64 " ms: %s",
          rc, took, err);
    check(store_still_works("after-wrong-key"),
          "others still served after a wrong job key", NULL);
}


/* A socket listening on an ephemeral loopback port (SO_REUSEADDR, so
 * that a store can take the port over after it closes), its address in
 * *sa; -1 (errno set) when it cannot. */
static int loopback_listener(struct sockaddr_in *sa)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    *sa = (struct sockaddr_in){ .sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t salen = sizeof *sa;
    if (lfd < 0)
        return -1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)sa, sizeof *sa) != 0 ||
        listen(lfd, 4) != 0 ||
        getsockname(lfd, (struct sockaddr *)sa, &salen) != 0) {
        int e = errno;
        close(lfd);
        errno = e;
        return -1;
    }
    return lfd;
}
/* A HELLO seen on the wire proves nothing on another connection (the
 * store's challenge differs), and a store that cannot prove the key is
 * refused by the client, which never sends the key itself. */
static void test_challenge_response(void)
{
    int first = raw_connect(), second = raw_connect();
    uint8_t hello[PD_STORE_HELLO_LEN], client_nonce[PD_STORE_NONCE_LEN];
    memset(client_nonce, 0x33, sizeof client_nonce);
    pd_store_hello_make(job_key, raw_nonce[first], client_nonce, 4, hello);
    raw_frame(second, PD_STORE_OP_HELLO, "", hello, sizeof hello);
    int op = raw_reply_op(second);
    check(op == PD_STORE_OP_ERR && raw_sees_eof(second),
          "a HELLO replayed on another connection is refused", "op %d", op);
    raw_frame(first, PD_STORE_OP_HELLO, "", hello, sizeof hello);
    op = raw_reply_op(first);
    check(op == PD_STORE_OP_OK,
          "the same HELLO on its own connection is taken", "op %d", op);
    close(first);
    close(second);

    /* A listener posing as the store: it challenges, takes the HELLO and
     * answers OK with a proof it cannot have made. */
    struct sockaddr_in sa;
    int lfd = loopback_listener(&sa);
    if (lfd < 0) {
        check(0, "a posing store: listener", "%s", strerror(errno));
        return;
    }
    pid_t child = fork();
    if (child == 0) {
        int fd = accept(lfd, NULL, NULL);
        uint8_t frame[PD_STORE_HEADER_LEN + PD_STORE_HELLO_LEN];
        pd_store_encode_header(frame, PD_STORE_OP_CHALLENGE, 0,
                               PD_STORE_NONCE_LEN);
        memset(frame + PD_STORE_HEADER_LEN, 1, PD_STORE_NONCE_LEN);
        int64_t deadline = pd_net_now_ms() + 3000;
        int leaked = 1;
        if (pd_net_write_all(fd, frame, PD_STORE_HEADER_LEN +
                             PD_STORE_NONCE_LEN, deadline) == 0 &&
            pd_net_read_all(fd, frame, sizeof frame, deadline) == 0)
            leaked = memmem(frame, sizeof frame, job_key,
                            strlen(job_key)) != NULL;
        pd_store_encode_header(frame, PD_STORE_OP_OK, 0, PD_STORE_PROOF_LEN);
        memset(frame + PD_STORE_HEADER_LEN, 0, PD_STORE_PROOF_LEN);
        pd_net_write_all(fd, frame, PD_STORE_HEADER_LEN + PD_STORE_PROOF_LEN,
                         deadline);
        usleep(200 * 1000);
        _exit(leaked ? 3 : 0);
    }
    close(lfd);
    char addr[64], err[512];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(sa.sin_port));
    struct pd_store_client *c = NULL;
    int rc = pd_store_connect(addr, job_key, 5, 3000, &c, err, sizeof err);
    int status = 0;
    waitpid(child, &status, 0);
    check(rc < 0 && strstr(err, "could not prove it knows the job key"),
          "a store that cannot prove the job key is refused", "rc=%d: %s",
          rc, err);
    printf("# %s\n", err);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the job key never crosses the wire", "posing store exit %d",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (c != NULL)
        pd_store_close(c);
}

/* A store holds at most so many keys and bytes for its job: a write past
 * either is refused with the numbers, and the store goes on serving. */
static void test_store_full(void)
{
    struct pd_store_server *server = NULL;
    char err[512], addr[64];
    int port = 0;
    if (pd_store_server_start("127.0.0.1", job_key, &server, &port, err,
                              sizeof err)) {
        check(0, "full: a store of its own", "%s", err);
        return;
    }
    pd_store_server_limit(server, 64 * 1024, 100);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    struct pd_store_client *c = NULL;
    if (pd_store_connect(addr, job_key, 0, 5000, &c, err, sizeof err)) {
        check(0, "full: connect", "%s", err);
        pd_store_server_stop(server);
        return;
    }
    int stored = 0;
    char key[32];
    for (int i = 0; i < 101; i++) {
        snprintf(key, sizeof key, "k%d", i);
        if (pd_store_set(c, key, "v", 1, err, sizeof err) != 0)
            break;
        stored++;
    }
    check(stored == 100 && strstr(err, "store full: it holds 100 keys"),
          "full: the 101st key of a store for 100 is refused", "%d stored: %s",
          stored, err);
    static char big[70 * 1024];
    int rc = pd_store_set(c, "k1", big, sizeof big, err, sizeof err);
    check(rc != 0 && strstr(err, "store full"),
          "full: a value past the bytes the store may keep is refused",
          "rc %d: %s", rc, err);
    void *value = NULL;
    size_t len = 0;
    rc = pd_store_set(c, "k1", "again", 5, err, sizeof err) == 0 &&
         pd_store_get(c, "k1", &value, &len, 1000, err, sizeof err) == 0 &&
         len == 5;
    free(value);
    check(rc, "full: a key within the limits can still be replaced and read",
          "%s", err);
    pd_store_close(c);
    pd_store_server_stop(server);
}

static void test_misbehaving_peers(void)
{
    int garbage = raw_connect();
    const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    raw_send(garbage, http, sizeof http - 1);
    check(raw_sees_eof(garbage), "garbage bytes: connection dropped", NULL);
    close(garbage);

    int no_hello = raw_connect();
    raw_frame(no_hello, PD_STORE_OP_SET, "k", "v", 1);
    int op = raw_reply_op(no_hello);
    check(op == PD_STORE_OP_ERR && raw_sees_eof(no_hello),
          "first frame not HELLO: error then dropped", "op %d", op);
    close(no_hello);

    int oversized = raw_connect();
    raw_hello(oversized, job_key);
    op = raw_reply_op(oversized);
    uint8_t head[PD_STORE_HEADER_LEN];
    pd_store_encode_header(head, PD_STORE_OP_SET, 1, PD_STORE_MAX_VALUE + 1);
    raw_send(oversized, head, sizeof head);
    check(op == PD_STORE_OP_OK && raw_sees_eof(oversized),
          "oversized value header: dropped before the body", "hello op %d",
          op);
    close(oversized);

    int bad_version = raw_connect();
    pd_store_encode_header(head, PD_STORE_OP_HELLO, 0, PD_STORE_HELLO_LEN);
    pd_store_put_u16(head + 4, 99);
    raw_send(bad_version, head, sizeof head);
    check(raw_sees_eof(bad_version), "unknown version: dropped", NULL);
    close(bad_version);

    /* A writer that stalls mid-header, and a client that never reads its
     * (large) replies: neither may hold up anyone else. */
    int stalled = raw_connect();
    raw_send(stalled, head, 5);
    int deaf = raw_connect();
    raw_hello(deaf, job_key);
    raw_reply_op(deaf);
    uint8_t timeout[4];
    pd_store_put_u32(timeout, 0);
    for (int i = 0; i < 4; i++)
        raw_frame(deaf, PD_STORE_OP_GET, "big", timeout, sizeof timeout);
    usleep(100 * 1000);
    check(store_still_works("beside-stalled-peers"),
          "others served beside a stalled writer and a non-reader", NULL);
    close(stalled);
    close(deaf);
    check(store_still_works("after-misbehavers"),
          "others still served after misbehaving peers", NULL);
}

static int64_t cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A peer that resets while its GET is parked and more requests wait
 * behind it must be dropped, not spun on. */
static void test_reset_while_parked(void)
{
    int fd = raw_connect();
    raw_hello(fd, job_key);
    raw_reply_op(fd);
    uint8_t timeout[4];
    pd_store_put_u32(timeout, 5000);
    raw_frame(fd, PD_STORE_OP_GET, "absent", timeout, sizeof timeout);
    raw_frame(fd, PD_STORE_OP_GET, "absent", timeout, sizeof timeout);
    usleep(100 * 1000);
    struct linger reset = { .l_onoff = 1, .l_linger = 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close(fd);

    int64_t cpu_before = cpu_ms();
    usleep(300 * 1000);
    int64_t spent = cpu_ms() - cpu_before;
    check(spent < 150, "a reset peer with a parked get costs no CPU",
          "%" PRId64 " ms of CPU in 300 ms", spent);
    check(store_still_works("after-reset"), "others served after a reset",
          NULL);
}

/* Connect (reconnect: as to a store reached before) to a bound but not
 * listening port, so every attempt is refused: *rc, and the time it took
 * in ms. addr gets the port's address. */
static int64_t connect_to_dead_port(bool reconnect, int timeout_ms,
                                    char *addr, size_t addrlen, char *err,
                                    size_t errlen, int *rc)
{
    int holder = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t salen = sizeof sa;
    bind(holder, (struct sockaddr *)&sa, sizeof sa);
    getsockname(holder, (struct sockaddr *)&sa, &salen);
    snprintf(addr, addrlen, "127.0.0.1:%d", ntohs(sa.sin_port));
    struct pd_store_client *c = NULL;
    int64_t start = pd_net_now_ms();
    *rc = (reconnect ? pd_store_reconnect : pd_store_connect)(
        addr, job_key, 0, timeout_ms, &c, err, errlen);
    int64_t took = pd_net_now_ms() - start;
    pd_store_close(c);
    close(holder);
    printf("# %s\n", err);
    return took;
}

struct connector {
    char addr[64];
    int timeout_ms;
    int rc;
    int64_t took;
    char err[512];
    struct pd_store_client *client;
};

static void *connect_in_thread(void *arg)
{
    struct connector *k = arg;
    int64_t start = pd_net_now_ms();
    k->rc = pd_store_connect(k->addr, job_key, 7, k->timeout_ms, &k->client,
                             k->err, sizeof k->err);
    k->took = pd_net_now_ms() - start;
    return NULL;
}

/* A connection that is accepted but never answered -- what a store too
 * busy to serve it looks like from the client -- must cost one attempt,
 * not the whole deadline: the client tries again, and reaches the store
 * that serves the port by then. */
static void test_silent_first_attempt(void)
{
    struct sockaddr_in sa;
    int lfd = loopback_listener(&sa);
    if (lfd < 0) {
        check(0, "a silent first attempt: listener", "%s", strerror(errno));
        return;
    }
    struct connector k = { .timeout_ms = 20000 };
    snprintf(k.addr, sizeof k.addr, "127.0.0.1:%d", ntohs(sa.sin_port));
    pthread_t t;
    pthread_create(&t, NULL, connect_in_thread, &k);
    int held = accept(lfd, NULL, NULL);     /* held open, never answered */
    close(lfd);
    struct pd_store_server *later = NULL;
    int port = ntohs(sa.sin_port);
    char err[512];
    int rc = pd_store_server_start("127.0.0.1", job_key, &later, &port, err,
                                   sizeof err);
    pthread_join(t, NULL);
    check(rc == 0 && k.rc == 0 && k.took < 10000,
          "a silent first attempt costs one attempt, not the deadline",
          "store %d, client rc=%d after %" PRId64 " ms: %s", rc, k.rc,
          k.took, rc == 0 ? k.err : err);
    printf("# connected after %" PRId64 " ms of a 20000 ms deadline\n",
           k.took);
    if (k.client != NULL)
        pd_store_close(k.client);
    if (held >= 0)
        close(held);
    if (later != NULL)
        pd_store_server_stop(later);
}

static void test_connect_refused_times_out(void)
{
    char addr[64], err[512];
    int rc;
    int64_t took = connect_to_dead_port(false, 300, addr, sizeof addr, err,
                                        sizeof err, &rc);
    check(rc < 0 && took >= 290 && took < 3000 && strstr(err, addr) &&
              strstr(err, "refused") && strstr(err, "attempts"),
          "connect to a dead port gives up at its deadline",
          "rc=%d after %" PRId64 " ms: %s", rc, took, err);
}

static void test_reconnect(void)
{
    /* A store reached before: a refusal means it is gone, at once. */
    char addr[64], err[512];
    int rc;
    int64_t took = connect_to_dead_port(true, 5000, addr, sizeof addr, err,
                                        sizeof err, &rc);
    check(rc < 0 && took < 1000 && strstr(err, addr) &&
              strstr(err, "refused"),
          "reconnect to a dead port fails at the first refusal",
          "rc=%d after %" PRId64 " ms: %s", rc, took, err);

    struct pd_store_client *c = NULL;
    rc = pd_store_reconnect(store_addr, job_key, 2, 5000, &c, err,
                            sizeof err);
    check(rc == 0, "reconnect to the live store works", "%s", err);
    if (rc == 0) {
        char v[] = "again";
        rc = pd_store_set(c, "reconnected", v, sizeof v, err, sizeof err);
        check(rc == 0, "a reconnected client sets keys", "%s", err);
        pd_store_close(c);
    }
}

static void test_stop_with_waiter(struct pd_store_server *server)
{
    struct waiter w = { .key = "never", .timeout_ms = 10000 };
    pthread_t t;
    pthread_create(&t, NULL, wait_for_key, &w);
    usleep(150 * 1000);
    int64_t start = pd_net_now_ms();
    pd_store_server_stop(server);
    pthread_join(t, NULL);
    int64_t took = pd_net_now_ms() - start;
    check(w.rc < 0 && took < 2000, "stopping the server ends a waiting get",
          "rc=%d after %" PRId64 " ms: %s", w.rc, took, w.err);
    printf("# %s\n", w.err);
}

int main(void)
{
    alarm(WATCHDOG_SECONDS);
    setvbuf(stdout, NULL, _IOLBF, 0);

    test_sha256();
    test_job_key();
    pd_store_make_job_key(job_key, sizeof job_key);

    struct pd_store_server *server = NULL;
    char err[512];
    if (pd_store_server_start("127.0.0.1", job_key, &server, &store_port, err,
                              sizeof err)) {
        printf("Bail out! cannot start the store: %s\n", err);
        return 1;
    }
    snprintf(store_addr, sizeof store_addr, "127.0.0.1:%d", store_port);
    check(store_port > 0, "server listens on a kernel-chosen port", NULL);

    test_bad_addresses();
    test_set_get_basics();
    test_parked_get_is_woken();
    test_many_threads();
    test_wrong_job_key();
    test_misbehaving_peers();
    test_challenge_response();
    test_store_full();
    test_idle_strangers();
    test_reset_while_parked();
    test_connect_refused_times_out();
    test_silent_first_attempt();
    test_reconnect();
    test_stop_with_waiter(server);

    struct pd_store_server *any = NULL;
    int port = 0;
    int rc = pd_store_server_start(NULL, job_key, &any, &port, err,
                                   sizeof err);
    check(rc == 0 && port > 0, "server binds all interfaces by default", "%s",
          err);
    pd_store_server_stop(any);

    printf("1..%d\n", tests_run);
    return tests_failed ? 1 : 0;
}
