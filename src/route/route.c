#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route/backends.h"
#include "route/route.h"

/* The outcome of MPI_Init's policy resolution. */
static struct {
    struct pd_dccl dev;         /* loaded binding (runtime, maybe the CCL) */
    const struct pd_backend_row *row;   /* dev's row */
    bool runtime;               /* dev's runtime is loaded: buffers checked */
    bool ccl;                   /* dev's CCL takes device calls */
    bool fallback_error;
    char policy[16];
    char note[512];             /* why the policy resolved as it did */
} pd_route;

/* A library path set by row's variable, or NULL for the usual soname. */
static const char *pd_lib(const struct pd_route_setup *s, const char *var)
{
    const char *path = var != NULL ? s->lib_path(var) : NULL;
    return path != NULL && path[0] != '\0' ? path : NULL;
}

/* The launcher's device for this rank: the first id of the hint list
 * ("2" or "2,3"), else the local rank; -1 if the hint is not a list of
 * device ids. */
static int pd_route_pick_device(const struct pd_route_setup *s)
{
    if (s->device_hint == NULL || s->device_hint[0] == '\0')
        return s->local_rank > 0 ? s->local_rank : 0;
    char *end = NULL;
    long id = strtol(s->device_hint, &end, 10);
    if (end == s->device_hint || id < 0 || id > 65535 ||
        (*end != '\0' && *end != ','))
        return -1;
    return (int)id;
}

/*
 * Load row's binding (its CCL too when with_ccl), check there is a device
 * for this rank, select it. -1 with what is missing in err.
 */
static int pd_route_try(const struct pd_backend_row *row, bool with_ccl,
                        const struct pd_route_setup *s, char *err,
                        size_t errlen)
{
    const struct pd_dccl_binding *b = row->device;
    char why[384];
    if (b == NULL) {
        snprintf(err, errlen, "%s", row->missing);
        return -1;
    }
    if (pd_dccl_open(&pd_route.dev, b, with_ccl,
                     with_ccl ? pd_lib(s, row->lib_var) : NULL,
                     pd_lib(s, row->runtime_var), why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    pd_route.row = row;
    int count = pd_route.dev.device_count;
    if (count <= 0) {
        snprintf(err, errlen, "no %s device is visible", b->memory);
        return -1;
    }
    /* Staging only copies: any device will do, none is claimed. */
    if (!with_ccl)
        return 0;
    int device = pd_route_pick_device(s);
    bool hinted = s->device_hint != NULL && s->device_hint[0] != '\0';
    if (!hinted && s->local_size > count) {
        snprintf(err, errlen,
                 "%d local ranks share %d %s device%s: %s cannot run two "
                 "ranks on one device (give each rank its own device, or use "
                 "gloo)",
                 s->local_size, count, b->memory, count == 1 ? "" : "s",
                 b->name);
        return -1;
    }
    if (device < 0) {
        snprintf(err, errlen,
                 "the device id '%s' (PDMPI_DEVICE or %s) is not a "
                 "non-negative integer", s->device_hint, row->devices_var);
        return -1;
    }
    if (pd_dccl_select_device(&pd_route.dev, device, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s%s", why,
                 hinted ? " (from the launcher's device list)" : "");
        return -1;
    }
    return 0;
}

/* auto: each device library in table order, then gloo; say why each was
 * passed over. */
static void pd_route_auto(const struct pd_route_setup *s)
{
    size_t used = 0;
    for (int i = 0; i < pd_backend_row_count; i++) {
        const struct pd_backend_row *row = &pd_backend_rows[i];
        char why[448];
        if (row->devices_var == NULL)
            continue;
        if (row->device == NULL)
            snprintf(why, sizeof(why), "not built");
        else if (pd_route_try(row, true, s, why, sizeof(why)) == 0) {
            pd_route.runtime = pd_route.ccl = true;
            snprintf(pd_route.note, sizeof(pd_route.note), "auto chose %s",
                     row->name);
            return;
        }
        used += (size_t)snprintf(pd_route.note + used,
                                 sizeof(pd_route.note) - used,
                                 "%s%s not usable: %s", used ? "; " : "auto: ",
                                 row->name, why);
        if (used >= sizeof(pd_route.note))
            used = sizeof(pd_route.note) - 1;
    }
    snprintf(pd_route.note + used, sizeof(pd_route.note) - used,
             "; host path (gloo)");
}

/* gloo: no CCL, but a device runtime that loads lets device buffers be
 * recognised and staged instead of being read as host memory. */
static void pd_route_staging_runtime(const struct pd_route_setup *s)
{
    for (int i = 0; i < pd_backend_row_count && !pd_route.runtime; i++) {
        char why[448];
        if (pd_backend_rows[i].device != NULL &&
            pd_route_try(&pd_backend_rows[i], false, s, why,
                         sizeof(why)) == 0)
            pd_route.runtime = true;
    }
}

int pd_route_init(const struct pd_route_setup *s, char *err, size_t errlen)
{
    memset(&pd_route, 0, sizeof(pd_route));
    snprintf(pd_route.policy, sizeof(pd_route.policy), "%s", s->policy);
    pd_route.fallback_error = s->fallback_error;
    const struct pd_backend_row *row = pd_backend_row_named(s->policy);
    if (row != NULL && row->policy && row->devices_var != NULL) {
        char why[448];
        if (pd_route_try(row, true, s, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "backend %s requested%s but %s", s->policy,
                     row->device != NULL ? "" : ",", why);
            return -1;
        }
        pd_route.runtime = pd_route.ccl = true;
        snprintf(pd_route.note, sizeof(pd_route.note), "%s requested",
                 s->policy);
        return 0;
    }
    if (strcmp(s->policy, "auto") == 0) {
        pd_route_auto(s);
    } else if (row != NULL && row->policy) {
        snprintf(pd_route.note, sizeof(pd_route.note), "%s requested",
                 row->name);
    } else {
        snprintf(err, errlen, "unknown backend '%s' (gloo, nccl, bkcl, auto)",
                 s->policy);
        return -1;
    }
    if (!pd_route.ccl)
        pd_route_staging_runtime(s);
    return 0;
}

int pd_route_host_backend(int size, const struct pd_backend_ops **ops,
                          char *err, size_t errlen)
{
    const char *missing = NULL;
    for (int i = 0; i < pd_backend_row_count; i++) {
        const struct pd_backend_row *row = &pd_backend_rows[i];
        if (size < row->min_ranks || size > row->max_ranks)
            continue;
        if (row->host != NULL) {
            *ops = row->host;
            return 0;
        }
        missing = row->missing;
    }
    snprintf(err, errlen, "no host transport serves %d processes%s%s", size,
             missing ? ": " : "", missing ? missing : "");
    return -1;
}

void pd_route_describe(int world_size, char *buf, size_t len)
{
    const struct pd_backend_ops *host = NULL;
    char ignored[8], lib[256] = "";
    if (pd_route_host_backend(world_size, &host, ignored, sizeof(ignored)) != 0)
        host = NULL;
    const char *host_name = host != NULL ? host->name : "none";
    if (pd_route.ccl)
        pd_route.dev.b->describe(lib, sizeof(lib));
    snprintf(buf, len,
             "policy %s (%s); host memory -> %s; %s memory -> %s%s%s%s",
             pd_route.policy, pd_route.note, host_name,
             pd_route.runtime ? pd_route.dev.b->memory : "device",
             pd_route.ccl ? pd_route.dev.b->name
             : pd_route.runtime ? "staged through host memory to "
                                : "not recognised (no device runtime loaded)",
             pd_route.ccl ? "" : (pd_route.runtime ? host_name : ""),
             lib[0] ? ", " : "", lib);
}

bool pd_route_memory_aware(void)
{
    return pd_route.runtime;
}

bool pd_route_cuda_aware(void)
{
    return pd_route.runtime && pd_route.row->cuda;
}

struct pd_dccl *pd_route_device(void)
{
    return pd_route.ccl ? &pd_route.dev : NULL;
}

struct pd_dccl *pd_route_runtime(void)
{
    return pd_route.runtime ? &pd_route.dev : NULL;
}

bool pd_route_is_device(const void *buf)
{
    int device;
    return pd_route.runtime && buf != NULL &&
           pd_route.dev.b->memory_kind(buf, &device) == PD_MEM_DEVICE;
}

enum pd_route pd_route_buffers(const void *const *bufs, size_t n,
                                   bool reduction, enum pd_elem_kind kind,
                                   enum pd_op_id op, bool plain_type,
                                   char *why, size_t whylen)
{
    if (!pd_route.runtime)
        return PD_ROUTE_HOST;
    const struct pd_dccl_binding *b = pd_route.dev.b;
    size_t device_bufs = 0, used = 0;
    bool foreign = false;
    for (size_t i = 0; i < n; i++) {
        int device = -1;
        if (bufs[i] == NULL)
            continue;
        used++;
        /* Managed memory is readable from the host: no staging needed. */
        if (b->memory_kind(bufs[i], &device) != PD_MEM_DEVICE)
            continue;
        device_bufs++;
        if (device != pd_route.dev.device)
            foreign = true;
    }
    if (device_bufs == 0)
        return PD_ROUTE_HOST;
    const char *reason = NULL;
    if (!pd_route.ccl)
        reason = "the backend policy is gloo";
    else if (device_bufs != used)
        reason = "host and device buffers are mixed in one call";
    else if (foreign)
        reason = "a buffer is on another device than this rank's";
    else if (!plain_type)
        reason = "derived datatypes and user-defined ops take the host path";
    else if (reduction && !pd_dccl_supports(&pd_route.dev, kind, op))
        reason = "the library has no such datatype/op pair";
    if (reason == NULL)
        return PD_ROUTE_DEVICE;
    snprintf(why, whylen, "%s memory cannot go to %s: %s", b->memory,
             pd_route.ccl ? b->name : "a device library", reason);
    return pd_route.fallback_error ? PD_ROUTE_REFUSE : PD_ROUTE_STAGE;
}
