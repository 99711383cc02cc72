/*
 * Fuzz target: the launcher detectors that read only environment
 * variables, PaddlePaddle's (src/boot/world_paddle.c: trainer id and
 * count, local rank and size, PADDLE_MASTER, PADDLE_TRAINER_ENDPOINTS,
 * PADDLE_CURRENT_ENDPOINT) and a Slurm step's (src/boot/world_slurm.c),
 * with the helpers they share: src/boot/env.c (integers) and
 * pd_net_split_addr (host:port).
 *
 * The input is an environment, one NAME=value per line. It replaces the
 * process environment for the duration of one call (no setenv, so nothing
 * accumulates across runs), and nothing here opens a socket: these
 * detectors only read variables. A detector must either find a
 * consistent world or fail with a message naming the launcher.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/env.h"
#include "boot/net.h"
#include "boot/world.h"

extern char **environ;

#define MAX_VARS 64

static void require(int cond)
{
    if (!cond)
        abort();
}

static int has_prefix(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

static int terminated(const char *buf, size_t len)
{
    return memchr(buf, '\0', len) != NULL;
}

/* What every detector promises about a world it reports (a local size
 * larger than the world is refused by the caller, pd_world_detect). */
static void check_world(const struct pd_world *w)
{
    require(w->size >= 1 && w->rank >= 0 && w->rank < w->size);
    require(w->local_size == -1 || w->local_size >= 1);
    require(w->local_rank >= -1 && w->local_rank < w->size);
    require(terminated(w->master, sizeof w->master));
    require(terminated(w->job_key, sizeof w->job_key));
    require(terminated(w->backend_hint, sizeof w->backend_hint));
    require(terminated(w->device_hint, sizeof w->device_hint));
    if (w->size > 1) {
        require(w->rendezvous == PD_RDV_AT_MASTER && w->master[0] != '\0');
        require(w->job_key[0] != '\0' && w->master_var != NULL);
    }
}

static void run_detector(int (*detect)(struct pd_world *, int64_t, char *,
                                       size_t),
                         const char *desc)
{
    struct pd_world w;
    char err[256];
    memset(&w, 0, sizeof w);
    w.local_rank = w.local_size = -1;
    err[0] = '\0';
    int found = detect(&w, 0, err, sizeof err);
    if (found == PD_DETECT_PRESENT) {
        check_world(&w);
        if (strcmp(desc, "PaddlePaddle launcher") == 0 && w.size > 1) {
            /* Rank 0 serves the store there: it must split. */
            char host[PD_NET_HOST_LEN], port[PD_NET_PORT_LEN], why[256];
            require(pd_net_split_addr(w.master, host, sizeof host, port,
                                      sizeof port, why, sizeof why) == 0);
        }
    } else if (found == PD_DETECT_ERROR) {
        /* One line naming the launcher. */
        require(has_prefix(err, desc) && strchr(err, '\n') == NULL);
    } else {
        require(found == PD_DETECT_ABSENT);
    }
}

/* The shared helpers on one value, into buffers of exact sizes. */
static void check_value(const char *value)
{
    long n;
    if (pd_parse_int(value, 0, INT_MAX, &n))
        require(n >= 0 && n <= INT_MAX);
    if (pd_parse_int(value, -5, 5, &n))
        require(n >= -5 && n <= 5);

    size_t hostlen = 1 + strlen(value) % 32, portlen = 6;
    char *host = malloc(hostlen), *port = malloc(portlen), why[64];
    require(host != NULL && port != NULL);
    if (pd_net_split_addr(value, host, hostlen, port, portlen, why,
                          sizeof why) == 0) {
        require(host[0] != '\0' && strlen(host) < hostlen);
        require(pd_parse_int(port, 1, 65535, &n));
    } else {
        require(why[0] != '\0');
    }
    free(host);
    free(port);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char *vars[MAX_VARS + 1];
    size_t nvars = 0;
    require(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    for (char *line = text; line != NULL && nvars < MAX_VARS;) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        if (strchr(line, '=') != NULL)
            vars[nvars++] = line;
        line = nl != NULL ? nl + 1 : NULL;
    }
    vars[nvars] = NULL;

    char **saved = environ;
    environ = vars;
    run_detector(pd_detect_paddle, "PaddlePaddle launcher");
    run_detector(pd_detect_slurm, "Slurm step");
    environ = saved;

    for (size_t i = 0; i < nvars; i++)
        check_value(strchr(vars[i], '=') + 1);
    free(text);
    return 0;
}
