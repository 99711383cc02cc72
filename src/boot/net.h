/*
 * Small socket helpers shared by the store server and client.
 *
 * Time is measured in milliseconds on CLOCK_MONOTONIC; a "deadline" is an
 * absolute value of pd_net_now_ms(). Functions that fail return -1 and
 * leave the reason in errno (ETIMEDOUT when a deadline passed,
 * ECONNRESET when the peer closed the connection early).
 */
#ifndef PD_BOOT_NET_H
#define PD_BOOT_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/clock.h"

#define PD_NET_HOST_LEN 256
#define PD_NET_PORT_LEN 16

/* The boot layer's name for the clock its deadlines are set on. */
static inline int64_t pd_net_now_ms(void) { return pd_clock_ms(); }

/*
 * Split "host:port" or "[v6addr]:port" into its parts. A bare IPv6 address
 * without brackets is ambiguous and refused.
 */
int pd_net_split_addr(const char *addr, char *host, size_t hostlen,
                      char *port, size_t portlen, char *err, size_t errlen);

int pd_net_set_nonblocking(int fd);
int pd_net_set_cloexec(int fd);
int pd_net_set_nodelay(int fd);

/*
 * Connect a fresh non-blocking socket to sa, waiting at most until
 * deadline_ms. Returns the connected fd (still non-blocking) or -1.
 */
int pd_net_connect(const struct sockaddr *sa, socklen_t salen,
                   int64_t deadline_ms);

/* Move exactly len bytes, polling until deadline_ms. */
int pd_net_write_all(int fd, const void *buf, size_t len, int64_t deadline_ms);
int pd_net_read_all(int fd, void *buf, size_t len, int64_t deadline_ms);

/* "host:port" (v6 in brackets) of a socket address; numeric. */
void pd_net_format_sockaddr(const struct sockaddr *sa, socklen_t salen,
                            char *buf, size_t buflen);

/* Numeric host only, without port or brackets. */
int pd_net_numeric_host(const struct sockaddr *sa, socklen_t salen,
                        char *buf, size_t buflen);

/*
 * Where a store that serves clients at master_host should listen, into
 * out: the numeric address master_host names when it is an address of
 * this host (the master's interface, loopback included); "" -- every
 * interface -- when it names none here, or names loopback here without
 * being a loopback address itself (other hosts reach this one under that
 * name at another address). *why says which, for the log.
 */
void pd_net_store_bind(const char *master_host, char *out, size_t outlen,
                       const char **why);

#endif
