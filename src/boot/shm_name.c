/* Segment names and the sweep of dead creators' segments (shm_name.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot/shm_name.h"

bool pd_process_gone(pid_t pid)
{
    if (pid <= 0)
        return false;
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');  /* the name may hold spaces */
    return paren != NULL && paren[1] == ' ' &&
           (paren[2] == 'Z' || paren[2] == 'X');
}

/* This process's pid namespace, by inode: pids mean something only
 * within it (0: unknown). */
static unsigned long long pd_pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0
               ? (unsigned long long)st.st_ino : 0;
}

void pd_shm_name_make(uint64_t key_hash, char *name, size_t len)
{
    static _Atomic unsigned serial;
    snprintf(name, len, "/pdmpi-%016llx-%llu-%d-%u",
             (unsigned long long)key_hash, pd_pid_namespace(), (int)getpid(),
             atomic_fetch_add(&serial, 1));
}

static bool pd_pid_listed(pid_t pid, const pid_t *pids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pids[i] == pid)
            return true;
    return false;
}

int pd_shm_name_sweep(const pid_t *pids, size_t n)
{
    unsigned long long ns = pd_pid_namespace();
    DIR *d = opendir("/dev/shm");
    if (d == NULL || ns == 0) {
        if (d != NULL)
            closedir(d);
        return 0;
    }
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long hash, their_ns;
        int pid, end = 0;
        unsigned serial;
        if (sscanf(e->d_name, "pdmpi-%16llx-%llu-%d-%u%n", &hash, &their_ns,
                   &pid, &serial, &end) != 4 || e->d_name[end] != '\0' ||
            their_ns != ns)
            continue;
        if ((pids != NULL && !pd_pid_listed((pid_t)pid, pids, n)) ||
            !pd_process_gone((pid_t)pid))
            continue;
        char name[300];
        snprintf(name, sizeof(name), "/%s", e->d_name);
        if (shm_unlink(name) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}
