#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* POSIX and Linux calls under -std=c11 */
#endif
#include "net.h"

#include <errno.h>
#include <ifaddrs.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int copy_part(char *dst, size_t dstlen, const char *src, size_t len)
{
    if (len + 1 > dstlen)
        return -1;
    memcpy(dst, src, len);
    dst[len] = '\0';
    return 0;
}

static int port_is_valid(const char *port)
{
    if (*port == '\0')
        return 0;
    long value = 0;
    for (const char *p = port; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        value = value * 10 + (*p - '0');
        if (value > 65535)
            return 0;
    }
    return value > 0;
}

int pd_net_split_addr(const char *addr, char *host, size_t hostlen,
                      char *port, size_t portlen, char *err, size_t errlen)
{
    const char *host_start = addr;
    const char *host_end;
    const char *colon;

    if (addr == NULL || *addr == '\0') {
        snprintf(err, errlen, "empty address (expected host:port)");
        return -1;
    }
    if (addr[0] == '[') {
        host_start = addr + 1;
        host_end = strchr(host_start, ']');
        if (host_end == NULL || host_end[1] != ':') {
            snprintf(err, errlen, "bad address '%s' (expected [v6addr]:port)",
                     addr);
            return -1;
        }
        colon = host_end + 1;
    } else {
        colon = strrchr(addr, ':');
        if (colon == NULL) {
            snprintf(err, errlen, "bad address '%s' (expected host:port)",
                     addr);
            return -1;
        }
        if (memchr(addr, ':', (size_t)(colon - addr)) != NULL) {
            snprintf(err, errlen,
                     "bad address '%s' (write IPv6 addresses as [addr]:port)",
                     addr);
            return -1;
        }
        host_end = colon;
    }
    if (host_end == host_start) {
        snprintf(err, errlen, "bad address '%s' (empty host)", addr);
        return -1;
    }
    if (copy_part(host, hostlen, host_start, (size_t)(host_end - host_start)) ||
        copy_part(port, portlen, colon + 1, strlen(colon + 1))) {
        snprintf(err, errlen, "bad address '%s' (too long)", addr);
        return -1;
    }
    if (!port_is_valid(port)) {
        snprintf(err, errlen, "bad address '%s' (port must be 1-65535)", addr);
        return -1;
    }
    return 0;
}

int pd_net_set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0)
        return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int pd_net_set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0)
        return -1;
    return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

int pd_net_set_nodelay(int fd)
{
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int remaining_ms(int64_t deadline_ms)
{
    int64_t left = deadline_ms - pd_net_now_ms();
    if (left <= 0)
        return 0;
    return left > 1000000 ? 1000000 : (int)left;
}

/* Wait for events on fd; 0 when ready, -1 with ETIMEDOUT when not. */
static int wait_for(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        struct pollfd pfd = { .fd = fd, .events = events };
        int timeout = remaining_ms(deadline_ms);
        int n = poll(&pfd, 1, timeout);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
        if (n == 0 && timeout == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
    }
}

/* Complete a connect() that returned EINPROGRESS. */
static int finish_connect(int fd, int64_t deadline_ms)
{
    if (wait_for(fd, POLLOUT, deadline_ms) < 0)
        return -1;
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        return -1;
    if (soerr != 0) {
        errno = soerr;
        return -1;
    }
    return 0;
}

int pd_net_connect(const struct sockaddr *sa, socklen_t salen,
                   int64_t deadline_ms)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    0);
    if (fd < 0)
        return -1;
    if (connect(fd, sa, salen) == 0)
        return fd;
    if ((errno == EINPROGRESS || errno == EINTR) &&
        finish_connect(fd, deadline_ms) == 0)
        return fd;

    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int pd_net_write_all(int fd, const void *buf, size_t len, int64_t deadline_ms)
{
    const char *p = buf;
    while (len > 0) {
        /* MSG_NOSIGNAL: a vanished peer must be an error, not SIGPIPE. */
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (wait_for(fd, POLLOUT, deadline_ms) < 0)
            return -1;
    }
    return 0;
}

int pd_net_read_all(int fd, void *buf, size_t len, int64_t deadline_ms)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (wait_for(fd, POLLIN, deadline_ms) < 0)
            return -1;
    }
    return 0;
}

int pd_net_numeric_host(const struct sockaddr *sa, socklen_t salen,
                        char *buf, size_t buflen)
{
    int rc = getnameinfo(sa, salen, buf, (socklen_t)buflen, NULL, 0,
                         NI_NUMERICHOST);
    if (rc != 0) {
        snprintf(buf, buflen, "?");
        return -1;
    }
    return 0;
}

void pd_net_format_sockaddr(const struct sockaddr *sa, socklen_t salen,
                            char *buf, size_t buflen)
{
    char host[PD_NET_HOST_LEN];
    char port[PD_NET_PORT_LEN];
    if (getnameinfo(sa, salen, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, buflen, "?");
        return;
    }
    if (sa->sa_family == AF_INET6)
        snprintf(buf, buflen, "[%s]:%s", host, port);
    else
        snprintf(buf, buflen, "%s:%s", host, port);
}

/* Is sa (an IPv4 or IPv6 address) loopback? */
static int pd_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >>
                24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(
            &((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

/* Does an interface of this host carry the address sa? */
static int pd_is_local(const struct sockaddr *sa)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        return 0;
    int found = 0;
    for (struct ifaddrs *i = list; i != NULL && !found; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != sa->sa_family)
            continue;
        if (sa->sa_family == AF_INET)
            found = ((const struct sockaddr_in *)i->ifa_addr)
                        ->sin_addr.s_addr ==
                    ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
        else if (sa->sa_family == AF_INET6)
            found = memcmp(&((const struct sockaddr_in6 *)i->ifa_addr)
                                ->sin6_addr,
                           &((const struct sockaddr_in6 *)sa)->sin6_addr,
                           sizeof(struct in6_addr)) == 0;
    }
    freeifaddrs(list);
    return found;
}

void pd_net_store_bind(const char *master_host, char *out, size_t outlen,
                       const char **why)
{
    out[0] = '\0';
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo(master_host, NULL, &hints, &res) != 0) {
        *why = "the master's name does not resolve here";
        return;
    }
    struct addrinfo numeric = { .ai_flags = AI_NUMERICHOST,
                                .ai_socktype = SOCK_STREAM }, *lit = NULL;
    int literal = getaddrinfo(master_host, NULL, &numeric, &lit) == 0;
    if (lit != NULL)
        freeaddrinfo(lit);
    *why = "the master's address is not one of this host's";
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        if (pd_is_loopback(ai->ai_addr) && !literal) {
            *why = "the master's name means loopback here, another address "
                   "elsewhere";
            continue;
        }
        if (pd_is_loopback(ai->ai_addr) || pd_is_local(ai->ai_addr)) {
            pd_net_numeric_host(ai->ai_addr, ai->ai_addrlen, out, outlen);
            *why = "the master's address";
            break;
        }
    }
    freeaddrinfo(res);
}
