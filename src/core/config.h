/*
 * Run-time configuration, read once from PDMPI_* variables at MPI_Init.
 * Every variable is documented in docs/configuration.md with its default.
 */
#ifndef PD_CORE_CONFIG_H
#define PD_CORE_CONFIG_H

#include <stddef.h>

#include "backend/backend.h"
#include "backend/shm/shm.h"

#define PD_DEFAULT_TIMEOUT_S 300
#define PD_DEFAULT_SHM_CHUNK ((size_t)256 << 10)
#define PD_MIN_SHM_CHUNK PD_SHM_MIN_CHUNK
#define PD_MAX_SHM_CHUNK ((size_t)64 << 20)
#define PD_DEFAULT_SHM_STREAM ((size_t)128 << 10)
#define PD_MAX_SCRATCH_KEEP ((size_t)1 << 40)

/* Point-to-point between the ranks of one host (PDMPI_SHM_P2P). */
enum pd_shm_p2p {
    PD_SHM_P2P_OFF = 0,         /* over the host backend (gloo) */
    PD_SHM_P2P_ON = 1,          /* shared-memory queues; large messages
                                   read from the sender where permitted */
    PD_SHM_P2P_COPY = 2,        /* ... always through a shared file */
};

struct pd_config {
    int debug_level;            /* PDMPI_DEBUG: none|warn|info|trace */
    int timeout_ms;             /* PDMPI_TIMEOUT, seconds */
    char backend[16];           /* PDMPI_BACKEND: gloo|nccl|bkcl|auto */
    char socket_ifname[64];     /* PDMPI_SOCKET_IFNAME or GLOO_SOCKET_IFNAME */
    char launcher[32];          /* PDMPI_LAUNCHER: auto or a launcher name */
    int stats;                  /* PDMPI_STATS: 0 | 1 */
    enum pd_algo algo_allreduce;  /* PDMPI_ALGO_ALLREDUCE; DEFAULT = table */
    int device_fallback_error;  /* PDMPI_DEVICE_FALLBACK: stage (0) | error */
    int shm;                    /* PDMPI_SHM: 1 (default) | 0 */
    int check;                  /* PDMPI_CHECK: 0 (default) | 1 */
    long shm_spin;              /* PDMPI_SHM_SPIN; -1 = automatic */
    size_t shm_chunk;           /* PDMPI_SHM_CHUNK, bytes */
    int shm_chunk_set;          /* PDMPI_SHM_CHUNK was given */
    size_t shm_stream;          /* PDMPI_SHM_STREAM, bytes; 0 = never */
    int shm_p2p;                /* PDMPI_SHM_P2P: enum pd_shm_p2p */
    int p2p_sockets;            /* PDMPI_P2P_SOCKETS: 1 (default) | 0 */
    size_t scratch_keep;        /* PDMPI_SCRATCH_KEEP, bytes */
    /* Library overrides; "" = the usual soname. */
    char nccl_lib[512];         /* PDMPI_NCCL_LIB */
    char cudart_lib[512];       /* PDMPI_CUDART_LIB */
    char bkcl_lib[512];         /* PDMPI_BKCL_LIB */
    char xpurt_lib[512];        /* PDMPI_XPURT_LIB */
};

/* One PDMPI_* variable: its default as the documentation gives it ("":
 * unset), one line of meaning, and how MPI_Init reads a set value (NULL:
 * another part of pdmpi reads it -- a launcher, pdmpirun, the compiler
 * wrappers). */
struct pd_config;
struct pd_config_var {
    const char *name;
    const char *default_text;
    const char *meaning;
    int (*load)(const char *name, const char *value, struct pd_config *c,
                char *err, size_t errlen);
};

/* Every variable pdmpi reads, in the order MPI_Init reads them. */
const struct pd_config_var *pd_config_vars(size_t *count);

/* Read the environment; -1 with a message naming the variable if a value
 * is malformed. */
int pd_config_load(struct pd_config *config, char *err, size_t errlen);

/* The path c holds for a library variable (PDMPI_NCCL_LIB ...), or NULL
 * for a variable that is not one. */
const char *pd_config_lib_path(const struct pd_config *c, const char *var);

#endif
