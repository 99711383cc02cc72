/*
 * The descriptor limit. Every live communicator that spans processes
 * holds sockets (its host backend connects each pair of ranks), its
 * set-up briefly holds a store connection, and pdmpirun's store serves
 * every rank's: 1 000 communicators need more than the soft limit of
 * 1 024 most systems start a process with. The hard limit is what the
 * administrator allows; the soft one is raised to it, as other MPI
 * libraries do.
 */
#ifndef PD_BOOT_FD_LIMIT_H
#define PD_BOOT_FD_LIMIT_H

/* Raise the soft RLIMIT_NOFILE to the hard one; the new soft limit (or
 * the old one if it cannot be raised). */
long pd_fd_limit_raise(void);

#endif
