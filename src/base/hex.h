/*
 * Hex codec: bytes as lowercase hex digits and back, for values that
 * travel through text-only channels (process-manager keys, the store)
 * or must read as names (job keys).
 */
#ifndef PD_BASE_HEX_H
#define PD_BASE_HEX_H

#include <stddef.h>

/* Write the 2 * n digits of bytes and a NUL: out holds 2 * n + 1. */
void pd_hex_encode(const void *bytes, size_t n, char *out);

/* Read exactly n bytes from hexlen digits (no NUL needed); -1 when hexlen
 * is not 2 * n or a character is not a digit pd_hex_encode writes. */
int pd_hex_decode(const char *hex, size_t hexlen, void *bytes, size_t n);

#endif
