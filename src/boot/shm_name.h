/*
 * Names of the shared-memory segments in /dev/shm, and reclaiming those
 * a killed process left there.
 *
 * A segment's name lives from its creation until every local rank has
 * mapped it (backend/shm/segment.c); a creator killed in between leaves
 * it behind, holding RAM. The name carries the creator's pid namespace
 * and pid, so that the next set-up on the host, and pdmpirun when its job
 * ends, can tell a dead creator's segment from a live one at any age.
 */
#ifndef PD_BOOT_SHM_NAME_H
#define PD_BOOT_SHM_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A process of this pid namespace that no longer runs: gone, or a
 * zombie not yet reaped. */
bool pd_process_gone(pid_t pid);

/* "/pdmpi-<key hash>-<pid namespace>-<pid>-<serial>" for a new segment
 * of this process. */
void pd_shm_name_make(uint64_t key_hash, char *name, size_t len);

/* Remove the segments whose creator ran in this pid namespace and is
 * gone: all of them (pids NULL), or those created by one of pids (n of
 * them; a launcher's ranks after the job). Returns how many it removed. */
int pd_shm_name_sweep(const pid_t *pids, size_t n);

#endif
