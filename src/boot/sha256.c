/* SHA-256 and HMAC-SHA256 (sha256.h). */
#include "sha256.h"

#include <string.h>

struct pd_sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;             /* message bytes so far */
    uint8_t block[64];
    size_t used;                /* bytes in block */
};

static const uint32_t pd_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t pd_ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void pd_sha256_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = pd_ror(w[i - 15], 7) ^ pd_ror(w[i - 15], 18) ^
                      (w[i - 15] >> 3);
        uint32_t s1 = pd_ror(w[i - 2], 17) ^ pd_ror(w[i - 2], 19) ^
                      (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5],
             g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (pd_ror(e, 6) ^ pd_ror(e, 11) ^ pd_ror(e, 25)) +
                      ((e & f) ^ (~e & g)) + pd_k[i] + w[i];
        uint32_t t2 = (pd_ror(a, 2) ^ pd_ror(a, 13) ^ pd_ror(a, 22)) +
                      ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

static void pd_sha256_init(struct pd_sha256_ctx *c)
{
    static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                    0xa54ff53a, 0x510e527f, 0x9b05688c,
                                    0x1f83d9ab, 0x5be0cd19 };
    memcpy(c->h, h0, sizeof h0);
    c->bytes = 0;
    c->used = 0;
}

static void pd_sha256_update(struct pd_sha256_ctx *c, const void *data,
                             size_t len)
{
    const uint8_t *p = data;
    c->bytes += len;
    while (len > 0) {
        size_t n = 64 - c->used < len ? 64 - c->used : len;
        memcpy(c->block + c->used, p, n);
        c->used += n;
        p += n;
        len -= n;
        if (c->used == 64) {
            pd_sha256_block(c->h, c->block);
            c->used = 0;
        }
    }
}

static void pd_sha256_final(struct pd_sha256_ctx *c, uint8_t out[32])
{
    uint64_t bits = c->bytes * 8;
    uint8_t pad = 0x80;
    pd_sha256_update(c, &pad, 1);
    pad = 0;
    while (c->used != 56)
        pd_sha256_update(c, &pad, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    pd_sha256_update(c, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->h[i];
    }
}

void pd_sha256(const void *data, size_t len, uint8_t out[PD_SHA256_LEN])
{
    struct pd_sha256_ctx c;
    pd_sha256_init(&c);
    pd_sha256_update(&c, data, len);
    pd_sha256_final(&c, out);
}

void pd_hmac_sha256(const void *key, size_t keylen, const void *msg,
                    size_t len, uint8_t out[PD_SHA256_LEN])
{
    uint8_t k[64] = { 0 }, pad[64], inner[PD_SHA256_LEN];
    if (keylen > 64)
        pd_sha256(key, keylen, k);
    else if (keylen > 0)
        memcpy(k, key, keylen);
    struct pd_sha256_ctx c;
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    pd_sha256_init(&c);
    pd_sha256_update(&c, pad, 64);
    pd_sha256_update(&c, msg, len);
    pd_sha256_final(&c, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    pd_sha256_init(&c);
    pd_sha256_update(&c, pad, 64);
    pd_sha256_update(&c, inner, sizeof inner);
    pd_sha256_final(&c, out);
}
