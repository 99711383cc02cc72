/*
 * Reading launcher variables: every failure names the variable and its
 * value, because that is what the user has to fix.
 */
#ifndef PD_BOOT_ENV_H
#define PD_BOOT_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* Non-empty value of name, or NULL. */
const char *pd_env_get(const char *name);

/* Integer in [min, max] from variable name; -1 with a message naming
 * source (e.g. "PaddlePaddle launcher") if absent, malformed or out of
 * range. */
int pd_env_int(const char *source, const char *name, int min, int max,
               int *out, char *err, size_t errlen);

/* Like pd_env_int, but an absent variable leaves *out = fallback. */
int pd_env_int_or(const char *source, const char *name, int min, int max,
                  int fallback, int *out, char *err, size_t errlen);

/* Copy a string variable; -1 if absent or longer than dstlen - 1. */
int pd_env_copy(const char *source, const char *name, char *dst,
                size_t dstlen, char *err, size_t errlen);

/* The network interface the user chose: PDMPI_SOCKET_IFNAME, else gloo's
 * GLOO_SOCKET_IFNAME (what jobs written for gloo already set); NULL if
 * neither is set. *var names the one read, for messages. */
const char *pd_env_socket_ifname(const char **var);

/* Integer parse of text in [min, max]; true on success. */
bool pd_parse_int(const char *text, long min, long max, long *out);

/*
 * A job key every rank derives alike from the launcher's variables
 * (for launchers that hand out no secret): "<tag>-<16 hex digits>", and
 * when PDMPI_JOB_SECRET is set "-<32 hex digits>" of an HMAC of the
 * variables keyed with it, which only holders of the secret can make.
 */
void pd_derive_job_key(const char *tag, const char *material, char *key,
                       size_t keylen);

#endif
