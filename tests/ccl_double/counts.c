/* Call counters of the test doubles (counts.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "counts.h"

#define LINE 56                     /* "%-35s %19ld\n" */

/* Caller holds c->lock. */
static void map_file(struct ccl_counts *c)
{
    const char *path = getenv("NCCL_DOUBLE_COUNTS");
    char name[4096];
    size_t bytes = (size_t)c->n * LINE;

    c->state = -1;
    if (!path || !*path)
        return;
    snprintf(name, sizeof name, "%s.%s.%d", path, c->library, (int)getpid());
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (ftruncate(fd, (off_t)bytes) == 0) {
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       0);
        if (m != MAP_FAILED) {
            c->map = m;
            c->state = 1;
            for (int e = 0; e < c->n; e++) {
                char line[LINE + 1];
                snprintf(line, sizeof line, "%-35.35s %19ld\n", c->names[e],
                         atomic_load(&c->calls[e]));
                memcpy(c->map + (size_t)e * LINE, line, LINE);
            }
        }
    }
    close(fd);
}

void ccl_count(struct ccl_counts *c, int e)
{
    long v = atomic_fetch_add_explicit(&c->calls[e], 1,
                                       memory_order_relaxed) + 1;
    pthread_mutex_lock(&c->lock);
    if (c->state == 0)
        map_file(c);
    if (c->state == 1) {
        char line[LINE + 1];
        /* The largest value seen wins: a thread that counted earlier but
         * writes later must not set the line back. */
        long shown = atol(c->map + (size_t)e * LINE + 36);
        snprintf(line, sizeof line, "%-35.35s %19ld\n", c->names[e],
                 v > shown ? v : shown);
        memcpy(c->map + (size_t)e * LINE, line, LINE);
    }
    pthread_mutex_unlock(&c->lock);
}

long ccl_count_of(struct ccl_counts *c, const char *name)
{
    for (int e = 0; name && e < c->n; e++)
        if (strcmp(name, c->names[e]) == 0)
            return atomic_load_explicit(&c->calls[e], memory_order_relaxed);
    return -1;
}
