/* Challenge and response between the store and its clients
 * (store_auth.h), with HMAC-SHA256 (sha256.c). */
#include "store_auth.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>


#include "base/hex.h"
#include "sha256.h"
#include "store_proto.h"

int pd_store_nonce(uint8_t nonce[PD_STORE_NONCE_LEN])
{
    size_t got = 0;
    while (got < PD_STORE_NONCE_LEN) {
        ssize_t n = getrandom(nonce + got, PD_STORE_NONCE_LEN - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

/* HMAC-SHA256(key, label | a | b | tail) into out. */
static void pd_mac(const char *key, size_t keylen, const char *label,
                   const uint8_t *a, const uint8_t *b, const uint8_t *tail,
                   size_t taillen, uint8_t out[PD_STORE_PROOF_LEN])
{
    uint8_t msg[16 + 2 * PD_STORE_NONCE_LEN + 4];
    size_t labellen = strlen(label), n = 0;
    memcpy(msg, label, labellen);
    n += labellen;
    memcpy(msg + n, a, PD_STORE_NONCE_LEN);
    n += PD_STORE_NONCE_LEN;
    memcpy(msg + n, b, PD_STORE_NONCE_LEN);
    n += PD_STORE_NONCE_LEN;
    if (taillen > 0)
        memcpy(msg + n, tail, taillen);
    n += taillen;
    pd_hmac_sha256(key, keylen, msg, n, out);
}

void pd_store_hello_make(const char *job_key,
                         const uint8_t server_nonce[PD_STORE_NONCE_LEN],
                         const uint8_t client_nonce[PD_STORE_NONCE_LEN],
                         int32_t rank, uint8_t *hello)
{
    pd_store_put_u32(hello, (uint32_t)rank);
    memcpy(hello + 4, client_nonce, PD_STORE_NONCE_LEN);
    pd_mac(job_key, strlen(job_key), "pdmpi-hello", server_nonce,
           client_nonce, hello, 4, hello + 4 + PD_STORE_NONCE_LEN);
}

int pd_store_proof_equal(const uint8_t *a, const uint8_t *b)
{
    unsigned diff = 0;
    for (size_t i = 0; i < PD_STORE_PROOF_LEN; i++)
        diff |= (unsigned)(a[i] ^ b[i]);
    return diff == 0;
}

int pd_store_hello_check(const char *job_key, size_t job_key_len,
                         const uint8_t server_nonce[PD_STORE_NONCE_LEN],
                         const uint8_t *value, size_t vallen, int32_t *rank,
                         uint8_t client_nonce[PD_STORE_NONCE_LEN])
{
    if (vallen != PD_STORE_HELLO_LEN)
        return 0;
    uint8_t want[PD_STORE_PROOF_LEN];
    pd_mac(job_key, job_key_len, "pdmpi-hello", server_nonce, value + 4,
           value, 4, want);
    if (!pd_store_proof_equal(want, value + 4 + PD_STORE_NONCE_LEN))
        return 0;
    *rank = (int32_t)pd_store_get_u32(value);
    memcpy(client_nonce, value + 4, PD_STORE_NONCE_LEN);
    return 1;
}

void pd_store_server_proof(const char *job_key, size_t job_key_len,
                           const uint8_t client_nonce[PD_STORE_NONCE_LEN],
                           const uint8_t server_nonce[PD_STORE_NONCE_LEN],
                           uint8_t proof[PD_STORE_PROOF_LEN])
{
    pd_mac(job_key, job_key_len, "pdmpi-store", client_nonce, server_nonce,
           NULL, 0, proof);
}

void pd_store_secret_digest(const char *secret, const char *material,
                            char hex[2 * PD_STORE_SECRET_DIGEST_LEN + 1])
{
    uint8_t mac[PD_STORE_PROOF_LEN];
    pd_hmac_sha256(secret, strlen(secret), material, strlen(material), mac);
    pd_hex_encode(mac, PD_STORE_SECRET_DIGEST_LEN, hex);
}
