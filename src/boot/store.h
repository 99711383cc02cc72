/*
 * pdmpi's rendezvous key-value store.
 *
 * One server per job (hosted by pdmpirun, or by rank 0 under other
 * launchers); every rank is a client. The wire protocol is framed binary
 * (see store_proto.h): every frame carries a magic number and a version,
 * and the first frame on a connection names the job key, so a process from
 * another job, or a stale one from an earlier run that reuses the port, is
 * refused instead of corrupting this job's keys.
 *
 * Every call that waits takes a deadline; nothing here blocks forever.
 * Errors are reported as 0 / -1 plus a message written into err[errlen].
 */
#ifndef PD_BOOT_STORE_H
#define PD_BOOT_STORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PD_STORE_MAX_KEY 1024              /* bytes, key */
#define PD_STORE_MAX_VALUE (4u << 20)      /* bytes, one value */
#define PD_STORE_MAX_JOBKEY 64             /* bytes, job key */
/* What one job's store keeps at most: far above a job's needs (a few
 * keys of some dozen bytes per rank per communicator), far below what
 * would take the store's host down. A write past them is refused. */
#define PD_STORE_MAX_JOB_BYTES ((size_t)1 << 30)
#define PD_STORE_MAX_JOB_KEYS ((size_t)1 << 22)
#define PD_STORE_ADDR_LEN 300              /* "host:port" buffers */

struct pd_store_server;
struct pd_store_client;

/*
 * Bind a listening socket on bind_host (NULL or "" = all IPv4 interfaces)
 * at port *port (0: an ephemeral port chosen by the kernel), and serve
 * requests on a background thread. Only clients presenting job_key are
 * accepted. The bound port is returned in *port.
 */
int pd_store_server_start(const char *bind_host, const char *job_key,
                          struct pd_store_server **out, int *port,
                          char *err, size_t errlen);
void pd_store_server_stop(struct pd_store_server *server);
/* Other limits than PD_STORE_MAX_JOB_BYTES and _KEYS (tests); call
 * before any client connects. */
void pd_store_server_limit(struct pd_store_server *server, size_t max_bytes,
                           size_t max_keys);

/*
 * Connect to "host:port", present job_key and rank. Retries refused or
 * unreachable connects with backoff until timeout_ms has passed.
 */
int pd_store_connect(const char *addr, const char *job_key, int rank,
                     int timeout_ms, struct pd_store_client **out,
                     char *err, size_t errlen);

/*
 * As pd_store_connect, to a store this process has reached before (every
 * connection after world formation): a refused connect means the store
 * is gone, and fails at once rather than being retried until timeout_ms.
 */
int pd_store_reconnect(const char *addr, const char *job_key, int rank,
                       int timeout_ms, struct pd_store_client **out,
                       char *err, size_t errlen);
void pd_store_close(struct pd_store_client *client);

int pd_store_set(struct pd_store_client *client, const char *key,
                 const void *value, size_t len, char *err, size_t errlen);

/*
 * Wait until key exists (or timeout_ms passes), then return a malloc'ed
 * copy of its value in *value (caller frees) and its length in *len: 0.
 * -2 when the store answered without it (timed out, or refused), -1 when
 * the store did not answer; err says which.
 */
int pd_store_get(struct pd_store_client *client, const char *key,
                 void **value, size_t *len, int timeout_ms,
                 char *err, size_t errlen);

/* Atomically add delta to the 64-bit counter at key (created as 0). */
/* How many connections the process of rank holds to the store: 0 once
 * it is gone (every rank holds one from MPI_Init to MPI_Finalize). */
int pd_store_alive(struct pd_store_client *client, int rank,
                   int64_t *connections, char *err, size_t errlen);
int pd_store_add(struct pd_store_client *client, const char *key,
                 int64_t delta, int64_t *result, char *err, size_t errlen);

/*
 * The local address (numeric host) of the connection to the store: the
 * interface that reaches the rendezvous point, used as the default
 * address for data connections.
 */
int pd_store_local_host(struct pd_store_client *client, char *host,
                        size_t hostlen);

/* Generate a fresh random job key (hex) into buf. */
void pd_store_make_job_key(char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif

#endif
