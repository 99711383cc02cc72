/*
 * How a client and the store prove to each other that they know the job
 * key, without sending it: challenge and response.
 *
 *   store -> client  CHALLENGE  value = 32 random bytes (server nonce)
 *   client -> store  HELLO      value = i32 rank | 32 random bytes
 *                               (client nonce) | HMAC-SHA256(job key,
 *                               "pdmpi-hello" | server nonce | client
 *                               nonce | rank)
 *   store -> client  OK         value = HMAC-SHA256(job key,
 *                               "pdmpi-store" | client nonce | server
 *                               nonce)
 *
 * Someone who sees the exchange learns neither the key nor a reply it can
 * use again (the other side's nonce is new each time); a process that
 * does not know the key can neither join nor pose as the store. The key
 * is a random secret where the launcher has a channel to hand it out
 * (pdmpirun on one host, PMI/PMIx, Slurm) and a hash of public facts plus
 * PDMPI_JOB_SECRET, when set, elsewhere (see docs/security.md).
 * Pure functions, no sockets: the server, the client and the fuzz target
 * call them.
 */
#ifndef PD_BOOT_STORE_AUTH_H
#define PD_BOOT_STORE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define PD_STORE_NONCE_LEN 32
#define PD_STORE_PROOF_LEN 32
/* A HELLO's value: rank, client nonce, proof. */
#define PD_STORE_HELLO_LEN (4 + PD_STORE_NONCE_LEN + PD_STORE_PROOF_LEN)

/* Fill nonce with random bytes from the kernel; 0, or -1 (errno). */
int pd_store_nonce(uint8_t nonce[PD_STORE_NONCE_LEN]);

/* The client's HELLO value for rank, into hello[PD_STORE_HELLO_LEN]. */
void pd_store_hello_make(const char *job_key,
                         const uint8_t server_nonce[PD_STORE_NONCE_LEN],
                         const uint8_t client_nonce[PD_STORE_NONCE_LEN],
                         int32_t rank, uint8_t *hello);

/* 1 when value (vallen bytes) is a HELLO proving job_key against
 * server_nonce, with *rank and client_nonce filled; else 0. The time it
 * takes does not depend on where a wrong proof differs. */
int pd_store_hello_check(const char *job_key, size_t job_key_len,
                         const uint8_t server_nonce[PD_STORE_NONCE_LEN],
                         const uint8_t *value, size_t vallen, int32_t *rank,
                         uint8_t client_nonce[PD_STORE_NONCE_LEN]);

/* The store's proof, sent with its OK to a HELLO. */
void pd_store_server_proof(const char *job_key, size_t job_key_len,
                           const uint8_t client_nonce[PD_STORE_NONCE_LEN],
                           const uint8_t server_nonce[PD_STORE_NONCE_LEN],
                           uint8_t proof[PD_STORE_PROOF_LEN]);

/* Bytes of pd_store_secret_digest's digest (hex: twice as many). */
#define PD_STORE_SECRET_DIGEST_LEN 16

/* hex of HMAC-SHA256(secret, material), its first
 * PD_STORE_SECRET_DIGEST_LEN bytes, NUL-terminated: the part of a derived
 * job key only holders of the job's secret can make. */
void pd_store_secret_digest(const char *secret, const char *material,
                            char hex[2 * PD_STORE_SECRET_DIGEST_LEN + 1]);

/* 1 when the two proofs are equal, in constant time. */
int pd_store_proof_equal(const uint8_t *a, const uint8_t *b);

#endif
