/* fd_count.h - the number of this process's open file descriptors (for
 * the tests that check nothing is left open). */
#ifndef PD_TESTS_FD_COUNT_H
#define PD_TESTS_FD_COUNT_H

#include <dirent.h>

/* Entries of /proc/self/fd, or -1 when it cannot be read. */
static inline int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

#endif
