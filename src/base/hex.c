/* The hex codec (see hex.h). */
#include <string.h>

#include "base/hex.h"

/* One table both ways, so decoding takes exactly what encoding writes. */
static const char pd_hex_digits[] = "0123456789abcdef";

void pd_hex_encode(const void *bytes, size_t n, char *out)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = pd_hex_digits[p[i] >> 4];
        out[2 * i + 1] = pd_hex_digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

int pd_hex_decode(const char *hex, size_t hexlen, void *bytes, size_t n)
{
    unsigned char *p = bytes;
    if (hexlen != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *hi = memchr(pd_hex_digits, hex[2 * i], 16);
        const char *lo = memchr(pd_hex_digits, hex[2 * i + 1], 16);
        if (hi == NULL || lo == NULL)
            return -1;
        p[i] = (unsigned char)((hi - pd_hex_digits) * 16 +
                               (lo - pd_hex_digits));
    }
    return 0;
}
