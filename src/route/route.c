#include <stdio.h>
#include <string.h>

#include "route/route.h"

int pd_route_check_policy(const char *policy, char *err, size_t errlen)
{
    if (strcmp(policy, "gloo") == 0 || strcmp(policy, "auto") == 0)
        return 0;
    /* Device backends need their generic device-CCL module, which this
     * build does not contain yet: say so rather than silently staging
     * everything through gloo. */
    if (strcmp(policy, "nccl") == 0 || strcmp(policy, "bkcl") == 0) {
        snprintf(err, errlen,
                 "backend %s requested, but this pdmpi build has no %s "
                 "device backend; use gloo or auto",
                 policy, strcmp(policy, "nccl") == 0 ? "NCCL" : "BKCL");
        return -1;
    }
    snprintf(err, errlen, "unknown backend '%s' (gloo, nccl, bkcl, auto)",
             policy);
    return -1;
}

int pd_route_host_backend(int size, const struct pd_backend_ops **ops,
                          char *err, size_t errlen)
{
    if (size == 1) {
        *ops = &pd_backend_self;
        return 0;
    }
#ifdef PD_HAVE_GLOO
    (void)err;
    (void)errlen;
    *ops = &pd_backend_gloo;
    return 0;
#else
    snprintf(err, errlen,
             "this pdmpi was built without gloo, so host collectives "
             "among %d processes are impossible (rebuild --with-gloo)",
             size);
    return -1;
#endif
}

void pd_route_describe(const char *policy, int world_size, char *buf,
                       size_t len)
{
    const struct pd_backend_ops *host = NULL;
    char ignored[8];
    if (pd_route_host_backend(world_size, &host, ignored, sizeof(ignored)) != 0)
        host = NULL;
    snprintf(buf, len, "policy %s; host memory -> %s; cuda memory -> %s; "
             "xpu memory -> %s", policy, host != NULL ? host->name : "none",
             "not accepted (no NCCL backend in this build)",
             "not accepted (no BKCL backend in this build)");
}
