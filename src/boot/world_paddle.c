/*
 * PaddlePaddle's launchers (python -m paddle.distributed.launch, the
 * legacy fleet launcher, paddle.distributed.spawn): rank and size from
 * PADDLE_TRAINER_ID / PADDLE_TRAINERS_NUM; rank 0 hosts the store where
 * Paddle's own TCPStore would be: PADDLE_MASTER, else the first of
 * PADDLE_TRAINER_ENDPOINTS.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/env.h"
#include "boot/net.h"
#include "boot/world.h"

static const char pd_paddle_src[] = "PaddlePaddle launcher";

/* "host:port" that splits; err names var and value otherwise. */
static int pd_paddle_check_endpoint(const char *var, const char *endpoint,
                                    char *err, size_t errlen)
{
    char host[PD_NET_HOST_LEN], port[PD_NET_PORT_LEN], why[256];
    if (pd_net_split_addr(endpoint, host, sizeof(host), port, sizeof(port),
                          why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: %s has endpoint '%s' that does not parse: %s",
                 pd_paddle_src, var, endpoint, why);
        return -1;
    }
    return 0;
}

/*
 * Walk PADDLE_TRAINER_ENDPOINTS: every entry must parse, there must be
 * one per rank, entry 0 becomes the master and the entry of this rank
 * must be PADDLE_CURRENT_ENDPOINT when that is set.
 */
static int pd_paddle_endpoints(struct pd_world *w, const char *list,
                               char *err, size_t errlen)
{
    static const char var[] = "PADDLE_TRAINER_ENDPOINTS";
    const char *current = pd_env_get("PADDLE_CURRENT_ENDPOINT");
    if (current != NULL &&
        pd_paddle_check_endpoint("PADDLE_CURRENT_ENDPOINT", current, err,
                                 errlen) != 0)
        return -1;
    int count = 0;
    const char *p = list;
    while (*p != '\0') {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char endpoint[PD_STORE_ADDR_LEN];
        if (len == 0 || len >= sizeof(endpoint)) {
            snprintf(err, errlen, "%s: %s has an empty or overlong entry "
                     "at position %d", pd_paddle_src, var, count);
            return -1;
        }
        memcpy(endpoint, p, len);
        endpoint[len] = '\0';
        if (pd_paddle_check_endpoint(var, endpoint, err, errlen) != 0)
            return -1;
        if (count == 0)
            memcpy(w->master, endpoint, len + 1);
        if (count == w->rank && current != NULL &&
            strcmp(current, endpoint) != 0) {
            snprintf(err, errlen,
                     "%s: PADDLE_CURRENT_ENDPOINT=%s but entry %d of %s is %s",
                     pd_paddle_src, current, w->rank, var, endpoint);
            return -1;
        }
        count++;
        p = comma ? comma + 1 : p + len;
    }
    if (count != w->size) {
        snprintf(err, errlen,
                 "%s: %s lists %d endpoints but PADDLE_TRAINERS_NUM=%d",
                 pd_paddle_src, var, count, w->size);
        return -1;
    }
    return 0;
}

static void pd_paddle_hints(struct pd_world *w)
{
    const char *backend = pd_env_get("PADDLE_DISTRI_BACKEND");
    if (backend != NULL)
        snprintf(w->backend_hint, sizeof(w->backend_hint), "%s", backend);
    const char *devices = pd_env_get("FLAGS_selected_gpus");
    if (devices == NULL)
        devices = pd_env_get("FLAGS_selected_xpus");
    if (devices != NULL)
        snprintf(w->device_hint, sizeof(w->device_hint), "%s", devices);
}

int pd_detect_paddle(struct pd_world *w, int64_t deadline_ms, char *err,
                     size_t errlen)
{
    (void)deadline_ms;
    if (getenv("PADDLE_TRAINER_ID") == NULL &&
        getenv("PADDLE_TRAINERS_NUM") == NULL)
        return PD_DETECT_ABSENT;
    w->launcher = "paddle";
    w->launcher_desc = pd_paddle_src;
    w->rank_var = "PADDLE_TRAINER_ID";
    if (pd_env_int(pd_paddle_src, "PADDLE_TRAINERS_NUM", 1, INT_MAX, &w->size,
                   err, errlen) != 0 ||
        pd_env_int(pd_paddle_src, "PADDLE_TRAINER_ID", 0, w->size - 1,
                   &w->rank, err, errlen) != 0)
        return PD_DETECT_ERROR;

    const char *local_rank_var = pd_env_get("PADDLE_LOCAL_RANK")
                                     ? "PADDLE_LOCAL_RANK"
                                     : "PADDLE_RANK_IN_NODE";
    if (pd_env_int_or(pd_paddle_src, "PADDLE_LOCAL_SIZE", 1, w->size, -1,
                      &w->local_size, err, errlen) != 0 ||
        pd_env_int_or(pd_paddle_src, local_rank_var, 0,
                      w->local_size > 0 ? w->local_size - 1 : w->size - 1,
                      -1, &w->local_rank, err, errlen) != 0)
        return PD_DETECT_ERROR;
    pd_paddle_hints(w);

    const char *master = pd_env_get("PADDLE_MASTER");
    const char *endpoints = pd_env_get("PADDLE_TRAINER_ENDPOINTS");
    if (endpoints != NULL && pd_paddle_endpoints(w, endpoints, err, errlen) != 0)
        return PD_DETECT_ERROR;
    if (master != NULL) {
        if (pd_paddle_check_endpoint("PADDLE_MASTER", master, err, errlen) != 0)
            return PD_DETECT_ERROR;
        snprintf(w->master, sizeof(w->master), "%s", master);
        w->master_var = "PADDLE_MASTER";
    } else {
        w->master_var = "PADDLE_TRAINER_ENDPOINTS";
    }
    if (w->size == 1)
        return PD_DETECT_PRESENT;
    if (w->master[0] == '\0') {
        snprintf(err, errlen,
                 "%s: PADDLE_TRAINERS_NUM=%d but neither PADDLE_MASTER nor "
                 "PADDLE_TRAINER_ENDPOINTS is set", pd_paddle_src, w->size);
        return PD_DETECT_ERROR;
    }
    w->rendezvous = PD_RDV_AT_MASTER;
    char material[PD_STORE_ADDR_LEN + 128];
    const char *job = pd_env_get("PADDLE_JOB_ID");
    /* Not the size: a rank told another PADDLE_TRAINERS_NUM must reach
     * the store to be told so (boot/rendezvous.c compares the sizes). */
    snprintf(material, sizeof(material), "%s|%s", job ? job : "", w->master);
    pd_derive_job_key("paddle", material, w->job_key, sizeof(w->job_key));
    return PD_DETECT_PRESENT;
}
