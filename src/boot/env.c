/* Launcher variable parsing shared by the detectors. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "boot/env.h"
#include "boot/store_auth.h"

const char *pd_env_get(const char *name)
{
    const char *text = getenv(name);
    return (text != NULL && text[0] != '\0') ? text : NULL;
}

bool pd_parse_int(const char *text, long min, long max, long *out)
{
    if (text == NULL || text[0] == '\0')
        return false;
    errno = 0;
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min ||
        value > max)
        return false;
    *out = value;
    return true;
}

int pd_env_int(const char *source, const char *name, int min, int max,
               int *out, char *err, size_t errlen)
{
    const char *text = pd_env_get(name);
    if (text == NULL) {
        snprintf(err, errlen, "%s: %s is not set", source, name);
        return -1;
    }
    long value;
    if (!pd_parse_int(text, min, max, &value)) {
        snprintf(err, errlen, "%s: %s=%s is not an integer in [%d, %d]",
                 source, name, text, min, max);
        return -1;
    }
    *out = (int)value;
    return 0;
}

int pd_env_int_or(const char *source, const char *name, int min, int max,
                  int fallback, int *out, char *err, size_t errlen)
{
    if (pd_env_get(name) == NULL) {
        *out = fallback;
        return 0;
    }
    return pd_env_int(source, name, min, max, out, err, errlen);
}

int pd_env_copy(const char *source, const char *name, char *dst,
                size_t dstlen, char *err, size_t errlen)
{
    const char *text = pd_env_get(name);
    if (text == NULL) {
        snprintf(err, errlen, "%s: %s is not set", source, name);
        return -1;
    }
    size_t len = strlen(text);
    if (len >= dstlen) {
        snprintf(err, errlen, "%s: %s is too long (%zu bytes, at most %zu)",
                 source, name, len, dstlen - 1);
        return -1;
    }
    memcpy(dst, text, len + 1);
    return 0;
}

const char *pd_env_socket_ifname(const char **var)
{
    const char *name = pd_env_get(*var = "PDMPI_SOCKET_IFNAME");
    return name != NULL ? name : pd_env_get(*var = "GLOO_SOCKET_IFNAME");
}

/* Not a secret, only a name that differs between jobs. */
void pd_derive_job_key(const char *tag, const char *material, char *key,
                       size_t keylen)
{
    uint64_t h = pd_fnv1a64(material, strlen(material));
    const char *secret = pd_env_get("PDMPI_JOB_SECRET");
    if (secret == NULL || secret[0] == '\0') {
        snprintf(key, keylen, "%s-%016" PRIx64, tag, h);
        return;
    }
    char digest[2 * PD_STORE_SECRET_DIGEST_LEN + 1];
    pd_store_secret_digest(secret, material, digest);
    snprintf(key, keylen, "%s-%016" PRIx64 "-%s", tag, h, digest);
}
