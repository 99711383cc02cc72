/* What identifies this host, and which address other hosts reach it at. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot/world.h"

static void pd_read_first_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) == NULL)
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

/* Device and inode of path, as "dev:ino" ("0:0" if unknown). */
static void pd_file_identity(const char *path, char *buf, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        memset(&st, 0, sizeof(st));
    snprintf(buf, len, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
}

/*
 * Ranks on one host share its memory: same host name and boot. The
 * network namespace is part of the id too, so that two namespaces on one
 * machine (how multi-host runs are tested) count as two hosts, as they
 * do for every address-based decision; so are the pid namespace (whose
 * pids the shared-memory path watches) and the file system behind
 * /dev/shm, so that containers that share a network but not those never
 * try to meet in shared memory.
 */
void pd_world_node_id(char *id, size_t idlen)
{
    char host[256] = "localhost";
    char boot[64];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    pd_read_first_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
    char net[48], pid[48], shm[48];
    pd_file_identity("/proc/self/ns/net", net, sizeof(net));
    pd_file_identity("/proc/self/ns/pid", pid, sizeof(pid));
    pd_file_identity("/dev/shm", shm, sizeof(shm));
    snprintf(id, idlen, "%s/%s/%s/%s/%s", host, boot, net, pid, shm);
}

int pd_world_iface_addr(const char *ifname, char *addr, size_t addrlen,
                        char *err, size_t errlen)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0) {
        snprintf(err, errlen, "cannot list network interfaces: %m");
        return -1;
    }
    int found = -1;
    for (struct ifaddrs *ifa = list; ifa != NULL && found != 0;
         ifa = ifa->ifa_next) {
        if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET ||
            !(ifa->ifa_flags & IFF_UP))
            continue;
        if (ifname != NULL ? strcmp(ifa->ifa_name, ifname) != 0
                           : (ifa->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;
        if (inet_ntop(AF_INET, &sin->sin_addr, addr, (socklen_t)addrlen))
            found = 0;
    }
    freeifaddrs(list);
    if (found != 0) {
        if (ifname != NULL)
            snprintf(err, errlen, "interface %s has no IPv4 address that is up",
                     ifname);
        else
            snprintf(err, errlen, "no network interface other than loopback "
                     "is up");
    }
    return found;
}
