/*
 * World formation: who launched this process, which rank it is, how many
 * ranks there are, and where the rendezvous store lives.
 *
 * Launchers are tried innermost first (DESIGN.md section 3); the first
 * whose variables are present decides. A launcher that is detected but
 * whose variables are inconsistent, or whose handshake fails, is an
 * error, never a silent singleton.
 */
#ifndef PD_BOOT_WORLD_H
#define PD_BOOT_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "boot/pm.h"
#include "boot/store.h"

/* How the ranks find the store. */
enum pd_rendezvous {
    PD_RDV_NONE,        /* size 1: no store */
    PD_RDV_GIVEN,       /* the launcher hosts it: store_addr, job_key set */
    PD_RDV_AT_MASTER,   /* rank 0 hosts it at master; job_key derived */
    PD_RDV_PUBLISH,     /* rank 0 hosts it anywhere and publishes it
                           through the process manager (pm) */
};

struct pd_world {
    const char *launcher;           /* "pdmpirun", "paddle", "pmix", ... */
    const char *launcher_desc;      /* for messages: "PaddlePaddle launcher" */
    int rank;
    int size;
    int local_rank;                 /* -1: not told; found from node ids */
    int local_size;                 /* -1: not told; found from node ids */
    enum pd_rendezvous rendezvous;
    char master[PD_STORE_ADDR_LEN];     /* PD_RDV_AT_MASTER: "host:port" */
    const char *master_var;             /* the variable master came from */
    char store_addr[PD_STORE_ADDR_LEN]; /* "host:port"; "" for size 1 */
    char job_key[PD_STORE_MAX_JOBKEY + 1];
    char backend_hint[16];          /* launcher's backend request, or "" */
    char device_hint[64];           /* launcher's device ids, or "" */
    const char *rank_var;           /* the variable that gave the rank */
    struct pd_pm *pm;               /* PMIx / PMI-1 channel, or NULL */
    struct pd_store_server *server; /* the store this rank hosts, or NULL */
    int *node_of;                   /* node index of every rank (after
                                       pd_world_connect) */
    int num_nodes;
    int *pid_of;                    /* process id of every rank (ditto;
                                       meaningful on its own node) */
    int64_t formed_ms;              /* world formation time, for the log */
};

/* Detector results: present (world filled), absent, or an error. */
#define PD_DETECT_PRESENT 1
#define PD_DETECT_ABSENT 0
#define PD_DETECT_ERROR (-1)

/* Detectors, one per launcher; deadline_ms bounds any handshake. */
int pd_detect_paddle(struct pd_world *w, int64_t deadline_ms, char *err,
                     size_t errlen);
int pd_detect_slurm(struct pd_world *w, int64_t deadline_ms, char *err,
                    size_t errlen);

/* The first host of a Slurm hostlist ("node[001-004],gpu2" -> "node001");
 * -1 if it does not parse. Exposed for the tests and fuzzers. */
int pd_slurm_first_host(const char *list, char *host, size_t hostlen);

/* The task count of node index node in a Slurm tasks-per-node list
 * ("2(x3),1" -> node 3 has 1); -1 if it does not parse. */
int pd_slurm_tasks_on_node(const char *list, int node);

/*
 * Fill *world from the environment. forced names one launcher (the value
 * of PDMPI_LAUNCHER; NULL or "auto" = detect). Process-manager handshakes
 * happen here, bounded by timeout_ms. Returns 0, or -1 with a one-line
 * reason in err naming the launcher and the variable and value at fault.
 */
int pd_world_detect(struct pd_world *world, const char *forced,
                    int timeout_ms, char *err, size_t errlen);

/*
 * Meet the other ranks: host the store if this rank is its host, learn
 * its address (from the process manager where there is one), connect,
 * and check that no rank id is claimed twice and that a multi-host world
 * does not rendezvous over loopback. *store is NULL for a world of 1.
 */
int pd_world_connect(struct pd_world *world, int timeout_ms,
                     struct pd_store_client **store, char *err,
                     size_t errlen);

/* After the last barrier: let go of the process manager, stop the store
 * this rank hosts. */
void pd_world_release(struct pd_world *world);

/* Ask the launcher to end the whole job (process managers only). */
void pd_world_abort(struct pd_world *world, int code, const char *msg);

/* An id equal on ranks that share a host (and its memory), different
 * otherwise: host name, boot id and network namespace. */
void pd_world_node_id(char *id, size_t idlen);

/* IPv4 address of interface ifname, or of the first interface that is
 * up and not loopback (ifname NULL). 0, or -1 with a reason. */
int pd_world_iface_addr(const char *ifname, char *addr, size_t addrlen,
                        char *err, size_t errlen);

#endif
