#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/algo.h"
#include "core/config.h"
#include "core/scratch.h"
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

/* ---- one loader per variable: value is set and non-empty ------------- */

#define PD_LOADER(fn) \
    static int fn(const char *name, const char *v, struct pd_config *c, \
                  char *err, size_t errlen)

/* "0" or "1" into the int at offset. */
static int pd_load_switch(const char *name, const char *v, int *out,
                          char *err, size_t errlen)
{
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        snprintf(err, errlen, "%s=%s is not 0 or 1", name, v);
        return -1;
    }
    *out = v[0] == '1';
    return 0;
}

PD_LOADER(pd_load_debug)
{
    (void)name;
    if (pd_parse_debug(v, &c->debug_level) == 0)
        return 0;
    snprintf(err, errlen, "PDMPI_DEBUG=%s is not one of none, warn, info, "
             "trace", v);
    return -1;
}

PD_LOADER(pd_load_timeout)
{
    (void)name;
    errno = 0;
    char *end = NULL;
    double seconds = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(seconds > 0) ||
        seconds > 86400.0 * 7) {
        snprintf(err, errlen, "PDMPI_TIMEOUT=%s is not a number of seconds "
                 "in (0, 604800]", v);
        return -1;
    }
    c->timeout_ms = (int)(seconds * 1000.0);
    if (c->timeout_ms < 1)
        c->timeout_ms = 1;
    return 0;
}

PD_LOADER(pd_load_backend)
{
    (void)name;
    if (strcmp(v, "gloo") != 0 && strcmp(v, "nccl") != 0 &&
        strcmp(v, "bkcl") != 0 && strcmp(v, "auto") != 0) {
        snprintf(err, errlen,
                 "PDMPI_BACKEND=%s is not one of gloo, nccl, bkcl, auto", v);
        return -1;
    }
    strcpy(c->backend, v);
    return 0;
}

PD_LOADER(pd_load_ifname)
{
    return pd_copy_bounded(name, v, c->socket_ifname,
                           sizeof(c->socket_ifname), err, errlen);
}

PD_LOADER(pd_load_launcher)
{
    return pd_copy_bounded(name, v, c->launcher, sizeof(c->launcher), err,
                           errlen);
}

PD_LOADER(pd_load_stats)
{
    return pd_load_switch(name, v, &c->stats, err, errlen);
}

PD_LOADER(pd_load_check)
{
    return pd_load_switch(name, v, &c->check, err, errlen);
}

PD_LOADER(pd_load_algo)
{
    (void)name;
    if (pd_algo_parse(v, &c->algo_allreduce) == 0)
        return 0;
    snprintf(err, errlen, "PDMPI_ALGO_ALLREDUCE=%s is not one of auto, "
             "pipelined, ring, bcube", v);
    return -1;
}

PD_LOADER(pd_load_fallback)
{
    (void)name;
    if (strcmp(v, "stage") != 0 && strcmp(v, "error") != 0) {
        snprintf(err, errlen,
                 "PDMPI_DEVICE_FALLBACK=%s is not one of stage, error", v);
        return -1;
    }
    c->device_fallback_error = strcmp(v, "error") == 0;
    return 0;
}

PD_LOADER(pd_load_shm)
{
    return pd_load_switch(name, v, &c->shm, err, errlen);
}

PD_LOADER(pd_load_shm_spin)
{
    (void)name;
    if (pd_parse_long(v, 0, 1000000000L, &c->shm_spin) == 0)
        return 0;
    snprintf(err, errlen, "PDMPI_SHM_SPIN=%s is not a number of "
             "microseconds in [0, 1000000000]", v);
    return -1;
}

PD_LOADER(pd_load_shm_chunk)
{
    (void)name;
    long chunk;
    if (pd_parse_long(v, (long)PD_MIN_SHM_CHUNK, (long)PD_MAX_SHM_CHUNK,
                      &chunk) != 0 || chunk % 64 != 0) {
        snprintf(err, errlen, "PDMPI_SHM_CHUNK=%s is not a number of bytes "
                 "in [%zu, %zu] divisible by 64", v, PD_MIN_SHM_CHUNK,
                 PD_MAX_SHM_CHUNK);
        return -1;
    }
    c->shm_chunk = (size_t)chunk;
    c->shm_chunk_set = 1;
    return 0;
}

PD_LOADER(pd_load_shm_p2p)
{
    (void)name;
    if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
        c->shm_p2p = v[0] == '1' ? PD_SHM_P2P_ON : PD_SHM_P2P_OFF;
    } else if (strcmp(v, "copy") == 0) {
        c->shm_p2p = PD_SHM_P2P_COPY;
    } else {
        snprintf(err, errlen, "PDMPI_SHM_P2P=%s is not one of 0, 1, copy",
                 v);
        return -1;
    }
    return 0;
}

PD_LOADER(pd_load_p2p_sockets)
{
    return pd_load_switch(name, v, &c->p2p_sockets, err, errlen);
}

/* A number of bytes in [0, max] into *out. */
static int pd_load_bytes(const char *name, const char *v, size_t max,
                         size_t *out, char *err, size_t errlen)
{
    long bytes;
    if (pd_parse_long(v, 0, (long)max, &bytes) != 0) {
        snprintf(err, errlen, "%s=%s is not a number of bytes in [0, %zu]",
                 name, v, max);
        return -1;
    }
    *out = (size_t)bytes;
    return 0;
}

PD_LOADER(pd_load_shm_stream)
{
    return pd_load_bytes(name, v, PD_MAX_SHM_CHUNK, &c->shm_stream, err,
                         errlen);
}

PD_LOADER(pd_load_scratch_keep)
{
    return pd_load_bytes(name, v, PD_MAX_SCRATCH_KEEP, &c->scratch_keep, err,
                         errlen);
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

PD_LOADER(pd_load_lib)
{
    char *path = (char *)pd_config_lib_path(c, name);
    return pd_copy_bounded(name, v, path, sizeof(c->nccl_lib), err, errlen);
}

#undef PD_LOADER

/*
 * Every PDMPI_* variable, in the order MPI_Init reads them: the library
 * validates each through its loader, and pdmpi_info lists this table, so
 * the two cannot drift. Variables read elsewhere (pdmpirun's, the
 * compiler wrappers') have no loader here; those a launcher sets
 * for its ranks (PDMPI_RANK, PDMPI_STORE, ...) are not configuration.
 */
static const struct pd_config_var pd_vars[] = {
    { "PDMPI_DEBUG", "warn", "none, warn, info or trace: what the library "
      "logs (info: how the world formed, once; trace: every collective)",
      pd_load_debug },
    { "PDMPI_TIMEOUT", "300", "seconds that bound every wait: the store, "
      "forming connections, every collective and blocking receive",
      pd_load_timeout },
    { "PDMPI_BACKEND", "auto", "gloo, nccl, bkcl or auto: the collective "
      "backend (over the launcher's PADDLE_DISTRI_BACKEND)", pd_load_backend },
    { "PDMPI_SOCKET_IFNAME", "", "network interface for gloo's connections "
      "and a store served by rank 0 (else GLOO_SOCKET_IFNAME)",
      pd_load_ifname },
    { "GLOO_SOCKET_IFNAME", "", "read when PDMPI_SOCKET_IFNAME is unset",
      pd_load_ifname },
    { "PDMPI_LAUNCHER", "auto", "force a launcher: auto, pdmpirun, paddle, "
      "pmix, pmi1, slurm, singleton", pd_load_launcher },
    { "PDMPI_STATS", "0", "1: rank 0 prints a table of the collectives at "
      "MPI_Finalize", pd_load_stats },
    { "PDMPI_CHECK", "0", "1: the ranks compare every collective's "
      "arguments before it runs", pd_load_check },
    { "PDMPI_ALGO_ALLREDUCE", "auto", "auto, pipelined, ring or bcube: the "
      "allreduce algorithm over gloo", pd_load_algo },
    { "PDMPI_DEVICE_FALLBACK", "stage", "stage or error: device buffers the "
      "device library cannot take go through the host, or fail",
      pd_load_fallback },
    { "PDMPI_SHM", "1", "0: no shared-memory collectives (gloo alone)",
      pd_load_shm },
    { "PDMPI_SHM_SPIN", "automatic", "microseconds a waiting rank polls "
      "before yielding", pd_load_shm_spin },
    { "PDMPI_SHM_CHUNK", "262144", "bytes per rank per step of the "
      "shared-memory path (4096-67108864, a multiple of 64)",
      pd_load_shm_chunk },
    { "PDMPI_SHM_P2P", "1", "point-to-point on one host: 1 shared memory, "
      "copy through shared files, 0 over gloo", pd_load_shm_p2p },
    { "PDMPI_P2P_SOCKETS", "1", "messages over gloo: 1 on connections pdmpi "
      "reads and writes itself, 0 through gloo's asynchronous pairs",
      pd_load_p2p_sockets },
    { "PDMPI_SHM_STREAM", "131072", "bytes from which pieces go into shared "
      "memory with non-temporal stores; 0: never", pd_load_shm_stream },
    { "PDMPI_SCRATCH_KEEP", "67108864", "bytes of scratch buffers (packed "
      "non-contiguous data) kept for the next call; 0: none",
      pd_load_scratch_keep },
    { "PDMPI_NCCL_LIB", "libnccl.so.2", "the NCCL library to load",
      pd_load_lib },
    { "PDMPI_CUDART_LIB", "libcudart.so.13", "the CUDA runtime to load",
      pd_load_lib },
    { "PDMPI_BKCL_LIB", "libbkcl.so", "the BKCL library to load",
      pd_load_lib },
    { "PDMPI_XPURT_LIB", "libxpurt.so", "the XPU runtime to load",
      pd_load_lib },
    { "PDMPI_DEVICE", "", "this rank's device id (pdmpirun --devices); "
      "else FLAGS_selected_gpus/xpus, else the local rank", NULL },
    { "PDMPI_MASTER_ADDR", "", "where rank 0 serves the store in a Slurm "
      "step without PMI (with PDMPI_MASTER_PORT)", NULL },
    { "PDMPI_MASTER_PORT", "", "see PDMPI_MASTER_ADDR", NULL },
    { "PDMPI_JOB_SECRET", "", "a secret every rank shares: only its holders "
      "may join the job's store", NULL },
    { "PDMPI_KILL_GRACE", "3", "seconds pdmpirun waits after SIGTERM "
      "before SIGKILL", NULL },
    { "MPIEXEC_TIMEOUT", "", "seconds: pdmpirun's time limit where "
      "--timeout is not given (as mpirun and mpiexec read it)", NULL },
    { "PDMPI_DROPIN_DIR", "", "the folder whose libmpi.so.40 pdmpirun "
      "--dropin puts first on LD_LIBRARY_PATH", NULL },
    { "PDMPI_CC", "", "the C compiler pdmpicc runs", NULL },
    { "PDMPI_CXX", "", "the C++ compiler pdmpicxx runs", NULL },
    { "PDMPICC_LIBDIR", "", "where the compiler wrappers find libpdmpi "
      "(else the install's libdir)", NULL },
    { "PDMPICC_INCDIR", "", "where the compiler wrappers find pdmpi.h "
      "(else the install's includedir)", NULL },
};

const struct pd_config_var *pd_config_vars(size_t *count)
{
    *count = sizeof(pd_vars) / sizeof(pd_vars[0]);
    return pd_vars;
}

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
    c->p2p_sockets = 1;
    c->scratch_keep = PD_DEFAULT_SCRATCH_KEEP;
    for (size_t i = 0; i < sizeof(pd_vars) / sizeof(pd_vars[0]); i++) {
        const struct pd_config_var *var = &pd_vars[i];
        const char *v = getenv(var->name);
        if (var->load == NULL || v == NULL || v[0] == '\0')
            continue;
        /* gloo's name for the interface only when pdmpi's is unset. */
        if (strcmp(var->name, "GLOO_SOCKET_IFNAME") == 0 &&
            c->socket_ifname[0] != '\0')
            continue;
        if (var->load(var->name, v, c, err, errlen) != 0)
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
