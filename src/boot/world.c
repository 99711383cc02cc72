/* Launcher detection: each launcher is one detector in a table. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/world.h"

/* A detector returns 1 if its launcher is present and *world is filled,
 * 0 if its launcher is absent, -1 on error (err filled). */
typedef int (*pd_detect_fn)(struct pd_world *world, char *err, size_t errlen);

struct pd_launcher {
    const char *name;
    pd_detect_fn detect;
};

/* Parse the integer in variable name; -1 with a message if absent,
 * malformed or outside [min, max]. */
static int pd_env_int(const char *name, int min, int max, int *out, char *err,
                      size_t errlen)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0') {
        snprintf(err, errlen, "%s is not set", name);
        return -1;
    }
    errno = 0;
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min ||
        value > max) {
        snprintf(err, errlen, "%s=%s is not an integer in [%d, %d]", name,
                 text, min, max);
        return -1;
    }
    *out = (int)value;
    return 0;
}

static int pd_copy_env(const char *name, char *dst, size_t dstlen, char *err,
                       size_t errlen)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0') {
        snprintf(err, errlen, "%s is not set", name);
        return -1;
    }
    if (strlen(text) >= dstlen) {
        snprintf(err, errlen, "%s is too long (%zu bytes, at most %zu)", name,
                 strlen(text), dstlen - 1);
        return -1;
    }
    memcpy(dst, text, strlen(text) + 1);
    return 0;
}

static int pd_detect_pdmpirun(struct pd_world *w, char *err, size_t errlen)
{
    if (getenv("PDMPI_RANK") == NULL && getenv("PDMPI_SIZE") == NULL)
        return 0;
    w->launcher = "pdmpirun";
    if (pd_env_int("PDMPI_SIZE", 1, INT_MAX, &w->size, err, errlen) != 0 ||
        pd_env_int("PDMPI_RANK", 0, w->size - 1, &w->rank, err, errlen) != 0)
        return -1;
    w->local_rank = w->rank;
    w->local_size = w->size;
    if (getenv("PDMPI_LOCAL_SIZE") != NULL &&
        pd_env_int("PDMPI_LOCAL_SIZE", 1, w->size, &w->local_size, err,
                   errlen) != 0)
        return -1;
    if (getenv("PDMPI_LOCAL_RANK") != NULL &&
        pd_env_int("PDMPI_LOCAL_RANK", 0, w->local_size - 1, &w->local_rank,
                   err, errlen) != 0)
        return -1;
    if (w->size > 1) {
        if (pd_copy_env("PDMPI_STORE", w->store_addr, sizeof(w->store_addr),
                        err, errlen) != 0 ||
            pd_copy_env("PDMPI_JOBKEY", w->job_key, sizeof(w->job_key), err,
                        errlen) != 0)
            return -1;
    }
    const char *backend = getenv("PDMPI_BACKEND");
    if (backend != NULL)
        snprintf(w->backend_hint, sizeof(w->backend_hint), "%s", backend);
    return 1;
}

static int pd_detect_singleton(struct pd_world *w, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    w->launcher = "singleton";
    w->rank = 0;
    w->size = 1;
    w->local_rank = 0;
    w->local_size = 1;
    return 1;
}

/* Innermost first; the singleton always matches and comes last. */
static const struct pd_launcher pd_launchers[] = {
    { "pdmpirun", pd_detect_pdmpirun },
    { "singleton", pd_detect_singleton },
};

int pd_world_detect(struct pd_world *world, const char *forced, char *err,
                    size_t errlen)
{
    size_t n = sizeof(pd_launchers) / sizeof(pd_launchers[0]);
    bool auto_detect = forced == NULL || forced[0] == '\0' ||
                       strcmp(forced, "auto") == 0;
    memset(world, 0, sizeof(*world));
    for (size_t i = 0; i < n; i++) {
        if (!auto_detect && strcmp(forced, pd_launchers[i].name) != 0)
            continue;
        int found = pd_launchers[i].detect(world, err, errlen);
        if (found < 0)
            return -1;
        if (found > 0)
            return 0;
        if (!auto_detect) {
            snprintf(err, errlen,
                     "PDMPI_LAUNCHER=%s but that launcher's variables are not set",
                     forced);
            return -1;
        }
    }
    if (!auto_detect) {
        snprintf(err, errlen,
                 "PDMPI_LAUNCHER=%s is not a known launcher (known: auto, pdmpirun, singleton)",
                 forced);
        return -1;
    }
    snprintf(err, errlen, "no launcher detected");
    return -1;
}
