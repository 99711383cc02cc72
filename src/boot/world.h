/*
 * World formation: who launched this process, which rank it is, how many
 * ranks there are, and where the rendezvous store lives.
 *
 * Launchers are tried innermost first (DESIGN.md section 3); the first
 * whose variables are present decides. A launcher that is detected but
 * whose variables are inconsistent is an error, never a silent singleton.
 */
#ifndef PD_BOOT_WORLD_H
#define PD_BOOT_WORLD_H

#include <stddef.h>

#include "boot/store.h"

struct pd_world {
    const char *launcher;           /* "pdmpirun", "singleton", ... */
    int rank;
    int size;
    int local_rank;
    int local_size;
    char store_addr[PD_STORE_ADDR_LEN];  /* "host:port"; "" for size 1 */
    char job_key[PD_STORE_MAX_JOBKEY + 1];
    char backend_hint[16];          /* launcher's backend request, or "" */
};

/*
 * Fill *world from the environment. forced names one launcher (the value
 * of PDMPI_LAUNCHER; NULL or "auto" = detect). Returns 0, or -1 with a
 * one-line reason in err naming the variable and value at fault.
 */
int pd_world_detect(struct pd_world *world, const char *forced, char *err,
                    size_t errlen);

#endif
