/*
 * The calls a process is in (see calls.h). Numbering is always on and
 * costs an increment; the cross-check (PDMPI_CHECK=1, like
 * TORCH_DISTRIBUTED_DEBUG=DETAIL) costs one small allgather per call.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "core/calls.h"
#include "base/log.h"
#include "core/runtime.h"
#include "boot/net.h"
#include "boot/store.h"

/* This process's last call, for the publisher. The label is copied only
 * when the communicator changes; name and seq are plain atomic stores. */
static struct {
    pthread_mutex_t lock;           /* label, comm, state */
    const struct ompi_communicator_t *comm;
    const struct pd_comm_state *state;
    char label[PD_COMM_ID_LEN + MPI_MAX_OBJECT_NAME + 8];
    const char *name;
    uint64_t seq;
    uint64_t version;
} pd_last = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void pd_note_call(struct ompi_communicator_t *comm, const char *name,
                         uint64_t seq)
{
    if (pd_last.comm != comm || pd_last.state != comm->state) {
        pthread_mutex_lock(&pd_last.lock);
        pd_last.comm = comm;
        pd_last.state = comm->state;
        if (comm->name[0] != '\0')
            snprintf(pd_last.label, sizeof(pd_last.label), "%s", comm->name);
        else
            snprintf(pd_last.label, sizeof(pd_last.label), "communicator %s",
                     comm->state->id);
        pthread_mutex_unlock(&pd_last.lock);
    }
    __atomic_store_n(&pd_last.name, name, __ATOMIC_RELAXED);
    __atomic_store_n(&pd_last.seq, seq, __ATOMIC_RELAXED);
    /* Only "changed" matters: a plain increment, no locked instruction. */
    __atomic_store_n(&pd_last.version,
                     __atomic_load_n(&pd_last.version, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELEASE);
}

uint64_t pd_calls_note(struct ompi_communicator_t *comm, const char *name)
{
    struct pd_comm_state *st = comm->state;
    /* Calls on one communicator are made one at a time (MPI's rule for
     * collectives), so a plain increment will do. */
    uint64_t seq = __atomic_load_n(&st->calls, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&st->calls, seq, __ATOMIC_RELAXED);
    pd_note_call(comm, name, seq);
    return seq;
}

/* ---- the publisher ------------------------------------------------------ */

static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool running, stopping;
    struct pd_store_client *store;
} pd_pub = { .lock = PTHREAD_MUTEX_INITIALIZER,
             .wake = PTHREAD_COND_INITIALIZER };

#define PD_PUBLISH_EVERY_MS 1000

static void pd_last_call_text(char *buf, size_t len)
{
    pthread_mutex_lock(&pd_last.lock);
    const char *name = __atomic_load_n(&pd_last.name, __ATOMIC_RELAXED);
    uint64_t seq = __atomic_load_n(&pd_last.seq, __ATOMIC_RELAXED);
    if (name == NULL)
        snprintf(buf, len, "no collective yet");
    else
        snprintf(buf, len, "%s (call %llu on %s)", name,
                 (unsigned long long)seq, pd_last.label);
    pthread_mutex_unlock(&pd_last.lock);
}

static void *pd_publisher_main(void *arg)
{
    (void)arg;
    uint64_t published = UINT64_MAX;
    char key[64], text[384], err[256];
    /* Connected here rather than in MPI_Init, which need not wait for
     * stall reports (a store host that stopped answering makes a connect
     * take up to PDMPI_TIMEOUT). */
    struct pd_store_client *store = NULL;
    if (pd_store_reconnect(pd_rt.world.store_addr, pd_rt.world.job_key,
                           pd_rt.world.rank, pd_rt.config.timeout_ms, &store,
                           err, sizeof(err)) != 0) {
        pd_log(PD_LOG_WARN, "no stall reports: %s", err);
        return NULL;
    }
    snprintf(key, sizeof(key), "pdmpi/last/%d", pd_rt.world.rank);
    pthread_mutex_lock(&pd_pub.lock);
    pd_pub.store = store;
    while (!pd_pub.stopping) {
        uint64_t v = __atomic_load_n(&pd_last.version, __ATOMIC_ACQUIRE);
        if (v != published) {
            pthread_mutex_unlock(&pd_pub.lock);
            /* The call, then when it was taken (wall clock, ms: a rank
             * frozen between two publications shows how old its entry
             * is), then where the rank runs, so a report names the host
             * of each rank it waits for. */
            pd_last_call_text(text, sizeof(text) / 2);
            size_t n = strlen(text) + 1;
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            n += (size_t)snprintf(text + n, sizeof(text) - n, "%lld",
                                  (long long)now.tv_sec * 1000 +
                                      now.tv_nsec / 1000000) + 1;
            n += (size_t)snprintf(text + n, sizeof(text) - n, "%.80s, pid %d",
                                  pd_rt.host, (int)getpid()) + 1;
            if (n > sizeof(text))
                n = sizeof(text);
            int rc = pd_store_set(store, key, text, n, err, sizeof(err));
            pthread_mutex_lock(&pd_pub.lock);
            if (rc != 0)
                break;          /* the store is gone: nothing to report to */
            published = v;
        }
        struct timespec until = pd_clock_realtime_after(PD_PUBLISH_EVERY_MS);
        pthread_cond_timedwait(&pd_pub.wake, &pd_pub.lock, &until);
    }
    pthread_mutex_unlock(&pd_pub.lock);
    return NULL;
}

void pd_calls_start_publisher(void)
{
    if (pd_rt.store == NULL || pd_pub.running)
        return;
    pd_pub.stopping = false;
    if (pthread_create(&pd_pub.thread, NULL, pd_publisher_main, NULL) != 0)
        return;
    pd_pub.running = true;
}

void pd_calls_stop_publisher(void)
{
    if (!pd_pub.running)
        return;
    pthread_mutex_lock(&pd_pub.lock);
    pd_pub.stopping = true;
    pthread_cond_signal(&pd_pub.wake);
    pthread_mutex_unlock(&pd_pub.lock);
    pthread_join(pd_pub.thread, NULL);
    if (pd_pub.store != NULL)
        pd_store_close(pd_pub.store);
    pd_pub.store = NULL;
    pd_pub.running = false;
}

/* " on vm, pid 812, recorded 2.4 s ago" from a publication's fields
 * after its call text (value, vlen bytes, each field NUL-ended). */
static void pd_calls_where(const char *value, size_t vlen, char *buf,
                           size_t len)
{
    const char *stamp = value + strlen(value) + 1;
    if (stamp >= value + vlen)
        return;
    const char *where = stamp + strlen(stamp) + 1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long then = atoll(stamp);
    long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 - then;
    snprintf(buf, len, "%s%.100s, recorded %.1f s ago",
             where < value + vlen ? " on " : "",
             where < value + vlen ? where : "", ms > 0 ? ms / 1000.0 : 0.0);
}

/* Rank r of comm's entry in the store (free it), or NULL: rc as
 * pd_store_get's, -1 where there is nothing to ask. */
static char *pd_calls_entry(struct ompi_communicator_t *comm, int r,
                            int timeout_ms, size_t *vlen, int *rc)
{
    char key[64], err[256];
    snprintf(key, sizeof(key), "pdmpi/last/%d", pd_comm_world_rank(comm, r));
    void *value = NULL;
    *vlen = 0;
    *rc = timeout_ms > 0 ? pd_store_get(pd_rt.store, key, &value, vlen,
                                        timeout_ms, err, sizeof(err))
                         : -1;
    if (*rc == 0 && (*vlen == 0 || ((char *)value)[*vlen - 1] != '\0')) {
        free(value);
        *rc = -1;                   /* not an entry this library wrote */
    }
    return *rc == 0 ? value : NULL;
}

static bool pd_calls_publishing(void)
{
    pthread_mutex_lock(&pd_pub.lock);
    bool publishing = pd_pub.store != NULL;
    pthread_mutex_unlock(&pd_pub.lock);
    return publishing;
}

/* What the world says of world rank w where the store has no entry for
 * it (a rank that stopped before its first publication): its pid when it
 * shares this host. */
static void pd_calls_where_known(int w, char *buf, size_t len)
{
    const struct pd_world *world = &pd_rt.world;
    if (world->node_of == NULL || world->pid_of == NULL)
        buf[0] = '\0';
    else if (world->node_of[w] == world->node_of[world->rank])
        snprintf(buf, len, " (%s, pid %d)", pd_rt.host, world->pid_of[w]);
    else
        snprintf(buf, len, " (another host)");
}

void pd_calls_where_rank(struct ompi_communicator_t *comm, int r, char *buf,
                         size_t len)
{
    pd_calls_where_known(pd_comm_world_rank(comm, r), buf, len);
    if (!pd_calls_publishing())
        return;
    size_t vlen;
    int rc;
    char *value = pd_calls_entry(comm, r, 200, &vlen, &rc);
    if (value == NULL)
        return;
    char where[160] = "";
    pd_calls_where(value, vlen, where, sizeof(where));
    /* where: " on vm, pid 812, recorded 2.4 s ago" */
    const char *at = strstr(where, ", recorded");
    if (at != NULL && where[0] == ' ')
        snprintf(buf, len, " (%.*s)", (int)(at - where - 1), where + 1);
    free(value);
}

int pd_calls_silent_rank(struct ompi_communicator_t *comm, uint32_t tag,
                         const int *ranks, int n, int window_ms)
{
    if (pd_rt.store == NULL)
        return -1;
    char key[PD_COMM_ID_LEN + 64], err[256];
    const char *prefix = "pdmpi/answer";
    snprintf(key, sizeof(key), "%s/%s/%u/%d", prefix, comm->state->id, tag,
             comm->rank);
    if (pd_store_set(pd_rt.store, key, "1", 1, err, sizeof(err)) != 0)
        return -1;
    int64_t deadline = pd_net_now_ms() + window_ms;
    for (int i = 0; i < n; i++) {
        int r = ranks != NULL ? ranks[i] : i;
        if (r == comm->rank)
            continue;
        snprintf(key, sizeof(key), "%s/%s/%u/%d", prefix, comm->state->id,
                 tag, r);
        int64_t left = deadline - pd_net_now_ms();
        void *value = NULL;
        size_t vlen;
        int rc = pd_store_get(pd_rt.store, key, &value, &vlen,
                              left > 1 ? (int)left : 1, err, sizeof(err));
        free(value);
        if (rc == -2)
            return r;
        if (rc != 0)
            return -1;              /* the store did not answer */
    }
    return -1;
}

void pd_calls_stall_table(struct ompi_communicator_t *comm, char *buf,
                          size_t len)
{
    size_t n = strlen(buf);
    if (!pd_calls_publishing() || n + 32 >= len)
        return;
    char mine[256];
    pd_last_call_text(mine, sizeof(mine));
    n += (size_t)snprintf(buf + n, len - n, "; last calls of the other ranks:");
    int64_t deadline = pd_net_now_ms() + 2000;
    int listed = 0, same = 0;
    for (int r = 0; r < comm->size && n < len; r++) {
        if (r == comm->rank)
            continue;
        size_t vlen;
        int rc;
        int64_t left = deadline - pd_net_now_ms();
        char *value = pd_calls_entry(comm, r, left > 200 ? 200 : (int)left,
                                     &vlen, &rc);
        const char *text = rc == -2 ? "unknown (nothing in the store)"
                                    : "unknown (the store did not answer)";
        char age[160] = "";
        if (value != NULL) {
            text = value;
            pd_calls_where(text, vlen, age, sizeof(age));
        }
        if (strcmp(text, mine) == 0) {
            same++;
        } else if (listed < 16) {
            n += (size_t)snprintf(buf + n, len - n, " rank %d: %s%s;", r,
                                  text, age);
            listed++;
        }
        free(value);
    }
    if (n < len)
        snprintf(buf + n, len - n, " %d in the same call as this rank "
                 "(%s)", same, mine);
}
