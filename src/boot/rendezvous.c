/*
 * World formation, second half: every rank meets at the store.
 *
 * Rank 0 hosts the store where the launcher gives no other host (at the
 * launcher's master address, or anywhere and then published through PMIx
 * or PMI-1). Every rank then connects and joins: it records its node id
 * and claims its rank; the last rank to join checks the claims and
 * numbers the nodes, and everyone reads that verdict. So a rank id given
 * twice, or a multi-host world meeting over loopback, fails here with a
 * message rather than as a hang later.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/hex.h"
#include "boot/env.h"
#include "boot/net.h"
#include "boot/world.h"

#define PD_PM_STORE_KEY "pdmpi-store"
#define PD_JOIN_PREFIX "pdmpi/boot/"
#define PD_NODE_ID_LEN 384

static int pd_ms_left(int64_t deadline_ms)
{
    int64_t left = deadline_ms - pd_net_now_ms();
    return left < 1 ? 1 : (int)left;
}

/* The address rank 0 publishes: the chosen interface's, loopback when
 * every rank is on this host, else the first interface that is up. */
static int pd_store_host(const struct pd_world *w, char *host, size_t hostlen,
                         char *err, size_t errlen)
{
    const char *var;
    const char *ifname = pd_env_socket_ifname(&var);
    char why[256];
    if (ifname != NULL) {
        if (pd_world_iface_addr(ifname, host, hostlen, why, sizeof(why)) == 0)
            return 0;
        snprintf(err, errlen, "%s=%s: %s", var, ifname, why);
        return -1;
    }
    if (w->local_size == w->size) {
        snprintf(host, hostlen, "127.0.0.1");
        return 0;
    }
    if (pd_world_iface_addr(NULL, host, hostlen, why, sizeof(why)) == 0)
        return 0;
    if (w->local_size < 0) {   /* maybe one host after all */
        snprintf(host, hostlen, "127.0.0.1");
        return 0;
    }
    snprintf(err, errlen, "%s: the world spans hosts but %s", w->launcher_desc,
             why);
    return -1;
}

/* Rank 0 hosts the store anywhere and tells the others through the
 * process manager: put, fence, get. */
static int pd_publish_store(struct pd_world *w, int64_t deadline_ms, char *err,
                            size_t errlen)
{
    struct pd_pm *pm = w->pm;
    char why[512];
    if (w->rank == 0) {
        char host[64];
        int port = 0;
        if (pd_store_host(w, host, sizeof(host), err, errlen) != 0)
            return -1;
        pd_store_make_job_key(w->job_key, sizeof(w->job_key));
        if (pd_store_server_start(host, w->job_key, &w->server, &port, why,
                                  sizeof(why)) != 0) {
            snprintf(err, errlen, "%s: rank 0 cannot host the store: %s",
                     w->launcher_desc, why);
            return -1;
        }
        snprintf(w->store_addr, sizeof(w->store_addr), "%s:%d", host, port);
        char plain[PD_STORE_ADDR_LEN + PD_STORE_MAX_JOBKEY + 2];
        char hex[2 * sizeof(plain) + 1];
        snprintf(plain, sizeof(plain), "%s|%s", w->store_addr, w->job_key);
        pd_hex_encode(plain, strlen(plain), hex);
        if (pm->ops->put(pm, PD_PM_STORE_KEY, hex, err, errlen) != 0)
            return -1;
    }
    if (pm->ops->fence(pm, deadline_ms, err, errlen) != 0)
        return -1;
    if (w->rank == 0)
        return 0;
    char hex[PD_PM_MAX_VALUE + 1];
    char plain[PD_PM_MAX_VALUE / 2 + 1] = ""; /* zeroed: decoded text ends */
    if (pm->ops->get(pm, 0, PD_PM_STORE_KEY, hex, sizeof(hex), deadline_ms,
                     err, errlen) != 0)
        return -1;
    size_t n = strlen(hex) / 2;
    char *bar = NULL;
    if (n >= sizeof(plain) || pd_hex_decode(hex, strlen(hex), plain, n) != 0 ||
        strlen(plain) != n /* a NUL inside */ ||
        (bar = strchr(plain, '|')) == NULL ||
        (size_t)(bar - plain) >= sizeof(w->store_addr) ||
        strlen(bar + 1) == 0 || strlen(bar + 1) >= sizeof(w->job_key)) {
        snprintf(err, errlen, "%s: rank 0 published a malformed store "
                 "address '%.80s'", w->launcher_desc, hex);
        return -1;
    }
    *bar = '\0';
    memcpy(w->store_addr, plain, (size_t)(bar - plain) + 1);
    memcpy(w->job_key, bar + 1, strlen(bar + 1) + 1);
    return 0;
}

/* Rank 0 hosts the store at the launcher's master address. */
static int pd_host_at_master(struct pd_world *w, char *err, size_t errlen)
{
    snprintf(w->store_addr, sizeof(w->store_addr), "%s", w->master);
    if (w->rank != 0)
        return 0;
    char host[PD_NET_HOST_LEN], port_text[PD_NET_PORT_LEN], why[512];
    long port = 0;
    if (pd_net_split_addr(w->master, host, sizeof(host), port_text,
                          sizeof(port_text), why, sizeof(why)) != 0 ||
        !pd_parse_int(port_text, 1, 65535, &port)) {
        snprintf(err, errlen, "%s: master address %s (from %s) does not parse",
                 w->launcher_desc, w->master, w->master_var);
        return -1;
    }
    /* The master address's interface where it is one of this host's;
     * every interface where the name means loopback here but another
     * address elsewhere (127.0.1.1 in /etc/hosts) or names no address
     * of this host. */
    char bind[64];
    const char *where;
    pd_net_store_bind(host, bind, sizeof(bind), &where);
    pd_log(PD_LOG_INFO, "the store listens on %s (%s)",
           bind[0] ? bind : "every interface", where);
    int bound = (int)port;
    if (pd_store_server_start(bind, w->job_key, &w->server, &bound, why,
                              sizeof(why)) != 0) {
        snprintf(err, errlen,
                 "%s: rank 0 cannot host the store at %s (from %s): %s",
                 w->launcher_desc, w->master, w->master_var, why);
        return -1;
    }
    return 0;
}

static int pd_join_fail_timeout(struct pd_world *w,
                                struct pd_store_client *store, int timeout_ms,
                                const char *why, char *err, size_t errlen)
{
    int64_t joined = -1;
    char ignored[256];
    if (pd_store_add(store, PD_JOIN_PREFIX "joined", 0, &joined, ignored,
                     sizeof(ignored)) != 0) {
        snprintf(err, errlen, "%s: world formation failed: %s",
                 w->launcher_desc, why);
        return -1;
    }
    snprintf(err, errlen,
             "%s: world formation did not complete within %d s: %" PRId64
             " of %d ranks reached the store at %s",
             w->launcher_desc, timeout_ms / 1000, joined, w->size,
             w->store_addr);
    return -1;
}

/* How long the rank hosting the store waits, when the world fails to
 * form, for the others to read why before its exit takes the store. */
#define PD_JOIN_LINGER_MS 3000

/* Count this rank as having read the verdict; the rank hosting the store
 * waits for every rank to have read it when the world failed. */
static void pd_join_linger(struct pd_world *w, struct pd_store_client *store,
                           int rc)
{
    int64_t read = 0;
    char why[256];
    if (pd_store_add(store, PD_JOIN_PREFIX "read", 1, &read, why,
                     sizeof(why)) != 0 || rc == 0 || w->server == NULL)
        return;
    int64_t until = pd_net_now_ms() + PD_JOIN_LINGER_MS;
    while (read < w->size && pd_net_now_ms() < until) {
        struct timespec pause = { 0, 10 * 1000 * 1000 };
        nanosleep(&pause, NULL);
        if (pd_store_add(store, PD_JOIN_PREFIX "read", 0, &read, why,
                         sizeof(why)) != 0)
            return;
    }
}

/* Number the nodes in order of their lowest rank. ids[r] is rank r's
 * "pid node-id", as it joined. */
static void pd_number_nodes(char **ids, int size, int *node_of)
{
    for (int r = 0; r < size; r++) {
        char *space = strchr(ids[r], ' ');
        ids[r] = space != NULL ? space + 1 : ids[r];
    }
    int nodes = 0;
    for (int r = 0; r < size; r++) {
        node_of[r] = -1;
        for (int q = 0; q < r && node_of[r] < 0; q++)
            if (strcmp(ids[q], ids[r]) == 0)
                node_of[r] = node_of[q];
        if (node_of[r] < 0)
            node_of[r] = nodes++;
    }
}

/* The last rank to join: check the claims, number the nodes, and post
 * the verdict "dup R" or "ok N0 P0 N1 P1 ..." (the node and the process
 * id of every rank). */
static int pd_join_judge(struct pd_world *w, struct pd_store_client *store,
                         int64_t deadline_ms, char *err, size_t errlen)
{
    size_t cap = 16 + (size_t)w->size * 24;
    char *verdict = malloc(cap);
    char **ids = calloc((size_t)w->size, sizeof(char *));
    char **names = calloc((size_t)w->size, sizeof(char *));
    int *node_of = malloc((size_t)w->size * sizeof(int));
    int *pid_of = malloc((size_t)w->size * sizeof(int));
    int rc = -1;
    if (verdict == NULL || ids == NULL || names == NULL || node_of == NULL ||
        pid_of == NULL) {
        snprintf(err, errlen, "out of memory joining the world");
        goto out;
    }
    int duplicate = -1;
    char key[64];
    for (int r = 0; r < w->size && duplicate < 0; r++) {
        int64_t claims = 0;
        snprintf(key, sizeof(key), PD_JOIN_PREFIX "claim/%d", r);
        if (pd_store_add(store, key, 0, &claims, err, errlen) != 0)
            goto out;
        if (claims != 1)
            duplicate = r;
    }
    if (duplicate >= 0) {
        snprintf(verdict, cap, "dup %d", duplicate);
    } else {
        for (int r = 0; r < w->size; r++) {
            size_t idlen = 0;
            snprintf(key, sizeof(key), PD_JOIN_PREFIX "node/%d", r);
            if (pd_store_get(store, key, (void **)&ids[r], &idlen,
                             pd_ms_left(deadline_ms), err, errlen) != 0)
                goto out;
        }
        for (int r = 0; r < w->size; r++) {
            pid_of[r] = (int)strtol(ids[r], NULL, 10);
            names[r] = ids[r];
        }
        pd_number_nodes(names, w->size, node_of);
        size_t len = (size_t)snprintf(verdict, cap, "ok");
        for (int r = 0; r < w->size; r++)
            len += (size_t)snprintf(verdict + len, cap - len, " %d %d",
                                    node_of[r], pid_of[r]);
    }
    rc = pd_store_set(store, PD_JOIN_PREFIX "verdict", verdict,
                      strlen(verdict) + 1, err, errlen);
out:
    if (ids != NULL)
        for (int r = 0; r < w->size; r++)
            free(ids[r]);
    free(ids);
    free(names);
    free(node_of);
    free(pid_of);
    free(verdict);
    return rc;
}

/* Read "ok N0 P0 N1 P1 ..." into w->node_of and w->pid_of; fill local
 * rank and size where the launcher did not say them. */
static int pd_join_apply(struct pd_world *w, char *verdict, char *err,
                         size_t errlen)
{
    int dup, rank, size, first_rank, first_size;
    if (sscanf(verdict, "size %d %d %d %d", &rank, &size, &first_rank,
               &first_size) == 4) {
        snprintf(err, errlen,
                 "%s: the ranks were started for worlds of different sizes: "
                 "rank %d for %d ranks, rank %d for %d (another -np or "
                 "--nnodes on some host, or another PADDLE_TRAINERS_NUM)",
                 w->launcher_desc, rank, size, first_rank, first_size);
        return -1;
    }
    if (sscanf(verdict, "dup %d", &dup) == 1) {
        snprintf(err, errlen,
                 "%s: rank %d is claimed by more than one process (check %s "
                 "on every process)", w->launcher_desc, dup, w->rank_var);
        return -1;
    }
    w->node_of = malloc((size_t)w->size * sizeof(int));
    w->pid_of = malloc((size_t)w->size * sizeof(int));
    if (w->node_of == NULL || w->pid_of == NULL ||
        strncmp(verdict, "ok", 2) != 0) {
        snprintf(err, errlen, "%s: malformed world verdict from the store",
                 w->launcher_desc);
        return -1;
    }
    char *p = verdict + 2;
    w->num_nodes = 0;
    for (int r = 0; r < w->size; r++) {
        char *end = NULL;
        long node = strtol(p, &end, 10);
        if (end == p || node < 0 || node >= w->size) {
            snprintf(err, errlen, "%s: malformed world verdict from the store",
                     w->launcher_desc);
            return -1;
        }
        p = end;
        long pid = strtol(p, &end, 10);
        if (end == p || pid < 0 || pid > INT32_MAX) {
            snprintf(err, errlen, "%s: malformed world verdict from the store",
                     w->launcher_desc);
            return -1;
        }
        w->node_of[r] = (int)node;
        w->pid_of[r] = (int)pid;
        if (node + 1 > w->num_nodes)
            w->num_nodes = (int)node + 1;
        p = end;
    }
    int local_rank = 0, local_size = 0;
    for (int r = 0; r < w->size; r++) {
        if (w->node_of[r] != w->node_of[w->rank])
            continue;
        if (r < w->rank)
            local_rank++;
        local_size++;
    }
    if (w->local_rank < 0 || w->local_size < 0) {
        w->local_rank = local_rank;
        w->local_size = local_size;
    }
    return 0;
}

/*
 * Every rank must have been told the same world size: the first to join
 * records its rank and size, the others compare, and one told another
 * size posts a verdict that fails everyone, naming both (a host started
 * with another -np or --nnodes, another PADDLE_TRAINERS_NUM). The job key
 * leaves the size out so that such ranks reach the store at all.
 */
static int pd_join_check_size(struct pd_world *w,
                              struct pd_store_client *store,
                              int64_t deadline_ms, char *err, size_t errlen)
{
    int64_t order = 0;
    char mine[32], why[256];
    snprintf(mine, sizeof(mine), "%d %d", w->rank, w->size);
    if (pd_store_add(store, PD_JOIN_PREFIX "size-order", 1, &order, err,
                     errlen) != 0)
        return -1;
    if (order == 1)
        return pd_store_set(store, PD_JOIN_PREFIX "size", mine,
                            strlen(mine) + 1, err, errlen);
    void *first = NULL;
    size_t len = 0;
    int first_rank = -1, first_size = -1;
    if (pd_store_get(store, PD_JOIN_PREFIX "size", &first, &len,
                     pd_ms_left(deadline_ms), why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: %s", w->launcher_desc, why);
        return -1;
    }
    int parsed = len > 0 && ((char *)first)[len - 1] == '\0' &&
                 sscanf(first, "%d %d", &first_rank, &first_size) == 2;
    free(first);
    if (!parsed) {
        snprintf(err, errlen, "%s: malformed world size in the store",
                 w->launcher_desc);
        return -1;
    }
    if (first_size == w->size)
        return 0;
    char verdict[64];
    snprintf(verdict, sizeof(verdict), "size %d %d %d %d", w->rank, w->size,
             first_rank, first_size);
    pd_store_set(store, PD_JOIN_PREFIX "verdict", verdict,
                 strlen(verdict) + 1, why, sizeof(why));
    return pd_join_apply(w, verdict, err, errlen);
}

/* Join: record the node, claim the rank, count in; the last one judges;
 * everyone reads the verdict. */
static int pd_join(struct pd_world *w, struct pd_store_client *store,
                   int64_t deadline_ms, int timeout_ms, char *err,
                   size_t errlen)
{
    char key[64], id[PD_NODE_ID_LEN + 16];
    int64_t claims = 0, joined = 0;
    if (pd_join_check_size(w, store, deadline_ms, err, errlen) != 0)
        return -1;
    int at = snprintf(id, sizeof(id), "%d ", (int)getpid());
    pd_world_node_id(id + at, sizeof(id) - (size_t)at);
    snprintf(key, sizeof(key), PD_JOIN_PREFIX "node/%d", w->rank);
    if (pd_store_set(store, key, id, strlen(id) + 1, err, errlen) != 0)
        return -1;
    snprintf(key, sizeof(key), PD_JOIN_PREFIX "claim/%d", w->rank);
    if (pd_store_add(store, key, 1, &claims, err, errlen) != 0 ||
        pd_store_add(store, PD_JOIN_PREFIX "joined", 1, &joined, err,
                     errlen) != 0)
        return -1;
    /* The last to join judges even if it is itself a duplicate: the
     * others wait for that verdict. */
    if (joined == w->size &&
        pd_join_judge(w, store, deadline_ms, err, errlen) != 0)
        return -1;
    void *verdict = NULL;
    size_t len = 0;
    char why[256];
    if (pd_store_get(store, PD_JOIN_PREFIX "verdict", &verdict, &len,
                     pd_ms_left(deadline_ms), why, sizeof(why)) != 0)
        return pd_join_fail_timeout(w, store, timeout_ms, why, err, errlen);
    int rc = -1;
    if (claims > 1 || joined > w->size)
        snprintf(err, errlen,
                 "%s: %s=%d is claimed by more than one process (%" PRId64
                 " processes joined a world of %d)",
                 w->launcher_desc, w->rank_var, w->rank, joined, w->size);
    else if (len > 0 && ((char *)verdict)[len - 1] == '\0')
        rc = pd_join_apply(w, verdict, err, errlen);
    else
        snprintf(err, errlen, "%s: malformed world verdict from the store",
                 w->launcher_desc);
    free(verdict);
    pd_join_linger(w, store, rc);
    return rc;
}

static bool pd_is_loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
           strncmp(host, "::ffff:127.", 11) == 0;
}

/* A world that spans hosts cannot meet over loopback: the other hosts'
 * ranks would be talking to themselves. */
static int pd_check_not_loopback(const struct pd_world *w,
                                 struct pd_store_client *store, char *err,
                                 size_t errlen)
{
    char host[PD_NET_HOST_LEN];
    if (w->num_nodes <= 1 ||
        pd_store_local_host(store, host, sizeof(host)) != 0 ||
        !pd_is_loopback(host))
        return 0;
    snprintf(err, errlen,
             "%s: the world spans %d hosts, but this rank reaches the store "
             "at %s over loopback%s%s; use an address the other hosts reach",
             w->launcher_desc, w->num_nodes, w->store_addr,
             w->master_var ? " (from " : "",
             w->master_var ? w->master_var : "");
    if (w->master_var != NULL)
        snprintf(err + strlen(err), errlen - strlen(err), ")");
    return -1;
}

int pd_world_connect(struct pd_world *w, int timeout_ms,
                     struct pd_store_client **store, char *err, size_t errlen)
{
    *store = NULL;
    int64_t start_ms = pd_net_now_ms();
    int64_t deadline_ms = start_ms + timeout_ms;
    if (w->size == 1) {
        static int only_node = 0, only_pid;
        only_pid = (int)getpid();
        w->node_of = &only_node;
        w->pid_of = &only_pid;
        w->num_nodes = 1;
        w->local_rank = 0;
        w->local_size = 1;
        return 0;
    }
    if (w->rendezvous == PD_RDV_PUBLISH &&
        pd_publish_store(w, deadline_ms, err, errlen) != 0)
        return -1;
    if (w->rendezvous == PD_RDV_AT_MASTER &&
        pd_host_at_master(w, err, errlen) != 0)
        return -1;
    char why[512];
    if (pd_store_connect(w->store_addr, w->job_key, w->rank,
                         pd_ms_left(deadline_ms), store, why,
                         sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: cannot reach the rendezvous store at %s%s%s%s: %s",
                 w->launcher_desc, w->store_addr,
                 w->master_var ? " (from " : "",
                 w->master_var ? w->master_var : "", w->master_var ? ")" : "",
                 why);
        return -1;
    }
    if (pd_join(w, *store, deadline_ms, timeout_ms, err, errlen) != 0 ||
        pd_check_not_loopback(w, *store, err, errlen) != 0) {
        pd_store_close(*store);
        *store = NULL;
        return -1;
    }
    w->formed_ms += pd_net_now_ms() - start_ms;
    return 0;
}

void pd_world_release(struct pd_world *w)
{
    if (w->pm != NULL)
        w->pm->ops->finalize(w->pm);
    w->pm = NULL;
    if (w->server != NULL)
        pd_store_server_stop(w->server);
    w->server = NULL;
}

void pd_world_abort(struct pd_world *w, int code, const char *msg)
{
    if (w->pm != NULL)
        w->pm->ops->abort(w->pm, code, msg);
}
