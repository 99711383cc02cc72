/*
 * FNV-1a: short, stable names (job keys, segment and communicator ids)
 * and hash-table buckets. Fast and simple; not for anything secret.
 */
#ifndef PD_BASE_HASH_H
#define PD_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Continue a hash h (for several pieces hashed as one) over len bytes. */
static inline uint64_t pd_fnv1a64_more(uint64_t h, const void *data,
                                       size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static inline uint64_t pd_fnv1a64(const void *data, size_t len)
{
    return pd_fnv1a64_more(0xcbf29ce484222325ull, data, len);
}

/* For tables of 32-bit hashes: the 64-bit hash cut to 32 bits would keep
 * its low word, which mixes poorly (the 64-bit prime's low word is 0x1b3). */
static inline uint32_t pd_fnv1a32(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

#endif
