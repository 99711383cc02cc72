/* Scratch memory for data in flight, large buffers kept (core/scratch.h). */
#include <stdint.h>
#include <stdlib.h>

#include "base/spin_lock.h"
#include "core/scratch.h"

/* Before each buffer: its capacity. A cache line, so that what follows
 * is as aligned as the allocation. */
struct pd_scratch_head {
    size_t capacity;
    struct pd_scratch_head *next;   /* the kept list */
    unsigned char pad[64 - sizeof(size_t) - sizeof(void *)];
};

/* At most this many buffers kept: a short list to search. */
#define PD_SCRATCH_SLOTS 8

static struct {
    pd_spin_lock lock;
    struct pd_scratch_head *kept;   /* newest first */
    size_t kept_bytes, kept_count;
    size_t limit;
} pd_scratch = { PD_SPIN_LOCK_INIT, NULL, 0, 0, 0 };

static void *pd_scratch_data(struct pd_scratch_head *h)
{
    return h + 1;
}

/* The kept buffer at *at, taken off the list (lock held). */
static struct pd_scratch_head *pd_scratch_unlink(struct pd_scratch_head **at)
{
    struct pd_scratch_head *h = *at;
    *at = h->next;
    h->next = NULL;
    pd_scratch.kept_bytes -= h->capacity;
    pd_scratch.kept_count--;
    return h;
}

/* The kept buffer that fits bytes most closely, taken off the list;
 * NULL when none is large enough (lock held). */
static struct pd_scratch_head *pd_scratch_fit(size_t bytes)
{
    struct pd_scratch_head **best = NULL;
    for (struct pd_scratch_head **at = &pd_scratch.kept; *at != NULL;
         at = &(*at)->next) {
        if ((*at)->capacity >= bytes &&
            (best == NULL || (*at)->capacity < (*best)->capacity))
            best = at;
    }
    return best != NULL ? pd_scratch_unlink(best) : NULL;
}

void *pd_scratch_take(size_t bytes)
{
    if (bytes >= PD_SCRATCH_MIN) {
        pd_spin_lock_take(&pd_scratch.lock);
        struct pd_scratch_head *h = pd_scratch_fit(bytes);
        pd_spin_unlock(&pd_scratch.lock);
        if (h != NULL)
            return pd_scratch_data(h);
    }
    /* No packed buffer comes near this; it keeps the rounding below
     * from wrapping. */
    if (bytes > SIZE_MAX / 2)
        return NULL;
    /* Whole 64 KiB steps: a size that varies a little from call to call
     * still finds the buffer it gave back. */
    size_t capacity = bytes >= PD_SCRATCH_MIN
                          ? (bytes + PD_SCRATCH_MIN - 1) / PD_SCRATCH_MIN *
                                PD_SCRATCH_MIN
                          : bytes;
    struct pd_scratch_head *h =
        aligned_alloc(64, (sizeof(*h) + capacity + 63) / 64 * 64);
    if (h == NULL)
        return NULL;
    *h = (struct pd_scratch_head){ .capacity = capacity };
    return pd_scratch_data(h);
}

/* The oldest kept buffer off the list, or NULL (lock held). */
static struct pd_scratch_head *pd_scratch_evict(void)
{
    struct pd_scratch_head **at = &pd_scratch.kept;
    if (*at == NULL)
        return NULL;
    while ((*at)->next != NULL)
        at = &(*at)->next;
    return pd_scratch_unlink(at);
}

/* Kept buffers off the list until `fits` more bytes and one more buffer
 * are within the limits; what came off, as a list to free outside the
 * lock (lock held). */
static struct pd_scratch_head *pd_scratch_make_room(size_t fits)
{
    struct pd_scratch_head *out = NULL;
    while (pd_scratch.kept != NULL &&
           (pd_scratch.kept_bytes + fits > pd_scratch.limit ||
            pd_scratch.kept_count + (fits > 0) > PD_SCRATCH_SLOTS)) {
        struct pd_scratch_head *h = pd_scratch_evict();
        h->next = out;
        out = h;
    }
    return out;
}

static void pd_scratch_free_list(struct pd_scratch_head *h)
{
    while (h != NULL) {
        struct pd_scratch_head *next = h->next;
        free(h);
        h = next;
    }
}

void pd_scratch_give(void *p)
{
    if (p == NULL)
        return;
    struct pd_scratch_head *h = (struct pd_scratch_head *)p - 1;
    struct pd_scratch_head *drop = NULL;
    pd_spin_lock_take(&pd_scratch.lock);
    if (h->capacity >= PD_SCRATCH_MIN && h->capacity <= pd_scratch.limit) {
        drop = pd_scratch_make_room(h->capacity);
        h->next = pd_scratch.kept;
        pd_scratch.kept = h;
        pd_scratch.kept_bytes += h->capacity;
        pd_scratch.kept_count++;
        h = NULL;
    }
    pd_spin_unlock(&pd_scratch.lock);
    free(h);
    pd_scratch_free_list(drop);
}

void pd_scratch_limit(size_t bytes)
{
    pd_spin_lock_take(&pd_scratch.lock);
    pd_scratch.limit = bytes;
    struct pd_scratch_head *drop = pd_scratch_make_room(0);
    pd_spin_unlock(&pd_scratch.lock);
    pd_scratch_free_list(drop);
}

void pd_scratch_release(void)
{
    pd_spin_lock_take(&pd_scratch.lock);
    struct pd_scratch_head *drop = pd_scratch.kept;
    pd_scratch.kept = NULL;
    pd_scratch.kept_bytes = 0;
    pd_scratch.kept_count = 0;
    pd_spin_unlock(&pd_scratch.lock);
    pd_scratch_free_list(drop);
}
