/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the store's
 * challenge and response. Self-contained: no global state, nothing to
 * initialise or tear down, safe from any thread at any time (a library
 * such as libcrypto frees its tables at exit while another thread of the
 * process may still be using them). Checked against the test vectors of
 * FIPS 180-4 and RFC 4231 in tests/store_selftest.c.
 */
#ifndef PD_BOOT_SHA256_H
#define PD_BOOT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define PD_SHA256_LEN 32

void pd_sha256(const void *data, size_t len, uint8_t out[PD_SHA256_LEN]);

void pd_hmac_sha256(const void *key, size_t keylen, const void *msg,
                    size_t len, uint8_t out[PD_SHA256_LEN]);

#endif
