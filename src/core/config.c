#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/env.h"
#include "core/algo.h"
#include "core/config.h"
#include "base/log.h"

static int pd_parse_debug(const char *text, int *level)
{
    static const char *const names[] = { "none", "warn", "info", "trace" };
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, names[i]) == 0) {
            *level = i;
            return 0;
        }
    }
    return -1;
}

static int pd_copy_bounded(const char *name, const char *text, char *dst,
                           size_t dstlen, char *err, size_t errlen)
{
    if (strlen(text) >= dstlen) {
        snprintf(err, errlen, "%s=%s is too long", name, text);
        return -1;
    }
    strcpy(dst, text);
    return 0;
}

/* An on/off variable: unset or empty keeps *out; "0" or "1" sets it. */
static int pd_parse_switch(const char *name, int *out, char *err,
                           size_t errlen)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0')
        return 0;
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        snprintf(err, errlen, "%s=%s is not 0 or 1", name, v);
        return -1;
    }
    *out = v[0] == '1';
    return 0;
}

/* A whole decimal number in [min, max], or -1. */
static int pd_parse_long(const char *text, long min, long max, long *out)
{
    errno = 0;
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int pd_config_load_shm(struct pd_config *c, char *err, size_t errlen)
{
    if (pd_parse_switch("PDMPI_SHM", &c->shm, err, errlen) != 0)
        return -1;
    const char *v = getenv("PDMPI_SHM_SPIN");
    if (v != NULL && v[0] != '\0' &&
        pd_parse_long(v, 0, 1000000000L, &c->shm_spin) != 0) {
        snprintf(err, errlen, "PDMPI_SHM_SPIN=%s is not a number of "
                 "microseconds in [0, 1000000000]", v);
        return -1;
    }
    v = getenv("PDMPI_SHM_CHUNK");
    long chunk;
    if (v != NULL && v[0] != '\0') {
        if (pd_parse_long(v, (long)PD_MIN_SHM_CHUNK, (long)PD_MAX_SHM_CHUNK,
                          &chunk) != 0 || chunk % 64 != 0) {
            snprintf(err, errlen, "PDMPI_SHM_CHUNK=%s is not a number of bytes "
                     "in [%zu, %zu] divisible by 64", v, PD_MIN_SHM_CHUNK,
                     PD_MAX_SHM_CHUNK);
            return -1;
        }
        c->shm_chunk = (size_t)chunk;
        c->shm_chunk_set = 1;
    }
    v = getenv("PDMPI_SHM_P2P");
    if (v != NULL && v[0] != '\0') {
        if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
            c->shm_p2p = v[0] == '1' ? PD_SHM_P2P_ON : PD_SHM_P2P_OFF;
        } else if (strcmp(v, "copy") == 0) {
            c->shm_p2p = PD_SHM_P2P_COPY;
        } else {
            snprintf(err, errlen, "PDMPI_SHM_P2P=%s is not one of 0, 1, copy",
                     v);
            return -1;
        }
    }
    v = getenv("PDMPI_SHM_STREAM");
    long stream;
    if (v != NULL && v[0] != '\0') {
        if (pd_parse_long(v, 0, (long)PD_MAX_SHM_CHUNK, &stream) != 0) {
            snprintf(err, errlen, "PDMPI_SHM_STREAM=%s is not a number of "
                     "bytes in [0, %zu]", v, PD_MAX_SHM_CHUNK);
            return -1;
        }
        c->shm_stream = (size_t)stream;
    }
    return 0;
}

/* The variables naming device libraries (the backend table's). */
static const struct {
    const char *name;
    size_t offset;
} pd_libs[] = {
    { "PDMPI_NCCL_LIB", offsetof(struct pd_config, nccl_lib) },
    { "PDMPI_CUDART_LIB", offsetof(struct pd_config, cudart_lib) },
    { "PDMPI_BKCL_LIB", offsetof(struct pd_config, bkcl_lib) },
    { "PDMPI_XPURT_LIB", offsetof(struct pd_config, xpurt_lib) },
};

int pd_config_load(struct pd_config *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->debug_level = PD_LOG_WARN;
    c->timeout_ms = PD_DEFAULT_TIMEOUT_S * 1000;
    strcpy(c->backend, "auto");
    strcpy(c->launcher, "auto");
    c->shm = 1;
    c->shm_spin = -1;
    c->shm_chunk = PD_DEFAULT_SHM_CHUNK;
    c->shm_stream = PD_DEFAULT_SHM_STREAM;
    c->shm_p2p = PD_SHM_P2P_ON;

    const char *v = getenv("PDMPI_DEBUG");
    if (v != NULL && v[0] != '\0' && pd_parse_debug(v, &c->debug_level) != 0) {
        snprintf(err, errlen,
                 "PDMPI_DEBUG=%s is not one of none, warn, info, trace", v);
        return -1;
    }

    v = getenv("PDMPI_TIMEOUT");
    if (v != NULL && v[0] != '\0') {
        errno = 0;
        char *end = NULL;
        double seconds = strtod(v, &end);
        if (errno != 0 || end == v || *end != '\0' || !(seconds > 0) ||
            seconds > 86400.0 * 7) {
            snprintf(err, errlen,
                     "PDMPI_TIMEOUT=%s is not a number of seconds in (0, 604800]",
                     v);
            return -1;
        }
        c->timeout_ms = (int)(seconds * 1000.0);
        if (c->timeout_ms < 1)
            c->timeout_ms = 1;
    }

    v = getenv("PDMPI_BACKEND");
    if (v != NULL && v[0] != '\0') {
        if (strcmp(v, "gloo") != 0 && strcmp(v, "nccl") != 0 &&
            strcmp(v, "bkcl") != 0 && strcmp(v, "auto") != 0) {
            snprintf(err, errlen,
                     "PDMPI_BACKEND=%s is not one of gloo, nccl, bkcl, auto", v);
            return -1;
        }
        strcpy(c->backend, v);
    }

    const char *var;
    v = pd_env_socket_ifname(&var);
    if (v != NULL &&
        pd_copy_bounded(var, v, c->socket_ifname, sizeof(c->socket_ifname),
                        err, errlen) != 0)
        return -1;

    v = getenv("PDMPI_LAUNCHER");
    if (v != NULL && v[0] != '\0' &&
        pd_copy_bounded("PDMPI_LAUNCHER", v, c->launcher, sizeof(c->launcher),
                        err, errlen) != 0)
        return -1;

    if (pd_parse_switch("PDMPI_STATS", &c->stats, err, errlen) != 0)
        return -1;

    if (pd_parse_switch("PDMPI_CHECK", &c->check, err, errlen) != 0)
        return -1;

    v = getenv("PDMPI_ALGO_ALLREDUCE");
    if (v != NULL && v[0] != '\0' && pd_algo_parse(v, &c->algo_allreduce) != 0) {
        snprintf(err, errlen,
                 "PDMPI_ALGO_ALLREDUCE=%s is not one of auto, pipelined, ring, "
                 "bcube", v);
        return -1;
    }

    v = getenv("PDMPI_DEVICE_FALLBACK");
    if (v != NULL && v[0] != '\0') {
        if (strcmp(v, "stage") != 0 && strcmp(v, "error") != 0) {
            snprintf(err, errlen,
                     "PDMPI_DEVICE_FALLBACK=%s is not one of stage, error", v);
            return -1;
        }
        c->device_fallback_error = strcmp(v, "error") == 0;
    }

    if (pd_config_load_shm(c, err, errlen) != 0)
        return -1;

    for (size_t i = 0; i < sizeof(pd_libs) / sizeof(pd_libs[0]); i++) {
        v = getenv(pd_libs[i].name);
        if (v != NULL && v[0] != '\0' &&
            pd_copy_bounded(pd_libs[i].name, v, (char *)c + pd_libs[i].offset,
                            sizeof(c->nccl_lib), err, errlen) != 0)
            return -1;
    }
    return 0;
}

const char *pd_config_lib_path(const struct pd_config *c, const char *var)
{
    for (size_t i = 0; i < sizeof(pd_libs) / sizeof(pd_libs[0]); i++)
        if (strcmp(pd_libs[i].name, var) == 0)
            return (const char *)c + pd_libs[i].offset;
    return NULL;
}
