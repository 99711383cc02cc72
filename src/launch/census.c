/*
 * The world forming, as a person watching sees it (pdmpirun --verbose):
 * at 0.2 s and then once a second until every rank has reached the job's
 * store, which ranks have, per host, so that a job stuck on a host that never started says
 * which within a second instead of waiting out the timeout in silence.
 *
 * Only the pdmpirun that serves the store (host 0) counts: it asks its
 * own store, as a client of it, how many connections each rank holds. A
 * rank counts once it has been seen (one that has already finished and
 * let go of its connection stays counted).
 */
#include "pdmpirun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/net.h"
#include "boot/store.h"

#define PD_CENSUS_FIRST_MS 200      /* most jobs have formed by then */
#define PD_CENSUS_EVERY_MS 1000
/* Round trips to the store per look: a look stays within milliseconds. */
#define PD_CENSUS_QUERIES 4096

struct pd_census {
    struct pd_store_client *store;
    int size;                   /* ranks in the job */
    int per_host;               /* ranks per host (host i: i*per_host..) */
    int hosts;
    unsigned char *seen;        /* rank -> reached the store */
    int nseen;
    int next_query;             /* where the last look stopped */
    int64_t started_ms, next_ms;
    int done;
};

struct pd_census *pd_census_start(const struct pd_job *job)
{
    if (!job->opt.verbose || job->opt.node_rank != 0)
        return NULL;
    struct pd_census *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->per_host = job->opt.nranks;
    c->hosts = job->opt.nnodes;
    c->size = c->per_host * c->hosts;
    c->seen = calloc((size_t)c->size, 1);
    char err[256];
    /* Rank -1: the store counts no rank's connection for this one. */
    if (c->seen == NULL ||
        pd_store_connect(job->store_addr, job->job_key, -1, 5000, &c->store,
                         err, sizeof(err)) != 0) {
        pd_say("--verbose: cannot watch the world form: %s",
               c->seen == NULL ? "out of memory" : err);
        free(c->seen);
        free(c);
        return NULL;
    }
    c->started_ms = pd_net_now_ms();
    c->next_ms = c->started_ms + PD_CENSUS_FIRST_MS;
    return c;
}

int64_t pd_census_next_ms(const struct pd_census *c)
{
    return c == NULL || c->done ? 0 : c->next_ms;
}

/* Ask the store about ranks not seen yet, a bounded number a look. */
static void pd_census_look(struct pd_census *c)
{
    char err[256];
    for (int q = 0; q < PD_CENSUS_QUERIES && c->nseen < c->size; q++) {
        int r = c->next_query;
        c->next_query = (r + 1) % c->size;
        if (c->seen[r])
            continue;
        int64_t connections = 0;
        if (pd_store_alive(c->store, r, &connections, err, sizeof(err)) != 0)
            return;
        if (connections > 0) {
            c->seen[r] = 1;
            c->nseen++;
        }
    }
}

/* "ranks 4-7 of host 1: 2 (ranks 6, 7 not yet)" for each host. */
static void pd_census_say(const struct pd_census *c, double seconds)
{
    char line[1024];
    int at = snprintf(line, sizeof(line), "world forming, %.1f s: %d of %d "
                      "ranks reached the store", seconds, c->nseen, c->size);
    for (int h = 0; h < c->hosts && at < (int)sizeof(line); h++) {
        int first = h * c->per_host, n = 0;
        for (int r = first; r < first + c->per_host; r++)
            n += c->seen[r];
        at += snprintf(line + at, sizeof(line) - (size_t)at, "%s host %d: "
                       "%d of %d", h == 0 ? ";" : ",", h, n, c->per_host);
        if (n == c->per_host || at >= (int)sizeof(line))
            continue;
        /* The first few missing ranks: where to look. */
        int listed = 0;
        for (int r = first; r < first + c->per_host && listed < 4; r++) {
            if (c->seen[r] || at >= (int)sizeof(line))
                continue;
            at += snprintf(line + at, sizeof(line) - (size_t)at, "%s%d",
                           listed++ == 0 ? " (waiting for rank " : ", ", r);
        }
        if (at < (int)sizeof(line))
            at += snprintf(line + at, sizeof(line) - (size_t)at, "%s)",
                           c->per_host - n > listed ? ", ..." : "");
    }
    pd_say("%s", line);
}

void pd_census_tick(struct pd_census *c, int64_t now)
{
    if (c == NULL || c->done || now < c->next_ms)
        return;
    pd_census_look(c);
    double seconds = (double)(now - c->started_ms) / 1000.0;
    if (c->nseen == c->size) {
        pd_say("world formed: all %d rank%s reached the store on %d host%s "
               "within %.1f s", c->size, c->size == 1 ? "" : "s", c->hosts,
               c->hosts == 1 ? "" : "s", seconds);
        c->done = 1;
        return;
    }
    pd_census_say(c, seconds);
    c->next_ms = now + PD_CENSUS_EVERY_MS;
}

void pd_census_stop(struct pd_census *c)
{
    if (c == NULL)
        return;
    pd_store_close(c->store);
    free(c->seen);
    free(c);
}
