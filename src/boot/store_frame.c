/*
 * Request frames as the store server reads them; see store_frame.h.
 * Everything a client sends is untrusted: sizes are checked against the
 * protocol's limits before anything is read past the header.
 */
#include "store_frame.h"
#include "store_auth.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t pd_store_frame_size(const struct pd_store_header *h)
{
    return PD_STORE_HEADER_LEN + (size_t)h->keylen + h->vallen;
}

/* 1 (and a reason) when a header breaks the framing rules. */
static int describe_bad_header(const struct pd_store_header *h, char *reason,
                               size_t len)
{
    if (h->magic != PD_STORE_MAGIC)
        snprintf(reason, len, "bad magic 0x%08" PRIx32
                 " (not a pdmpi store client)", h->magic);
    else if (h->version != PD_STORE_VERSION)
        snprintf(reason, len, "protocol version %u (this store speaks %d)",
                 (unsigned)h->version, PD_STORE_VERSION);
    else if (h->keylen > PD_STORE_MAX_KEY)
        snprintf(reason, len, "key of %" PRIu32 " bytes (limit %d)",
                 h->keylen, PD_STORE_MAX_KEY);
    else if (h->vallen > PD_STORE_MAX_VALUE)
        snprintf(reason, len, "value of %" PRIu32 " bytes (limit %u)",
                 h->vallen, PD_STORE_MAX_VALUE);
    else
        return 0;
    return 1;
}

int pd_store_frame_check_head(const uint8_t *buf, size_t len, int greeted,
                              struct pd_store_header *h, char *reason,
                              size_t reasonlen, const char **peer_message)
{
    *peer_message = NULL;
    if (len < PD_STORE_HEADER_LEN)
        return PD_STORE_FRAME_INCOMPLETE;

    pd_store_decode_header(buf, h);
    if (describe_bad_header(h, reason, reasonlen))
        return PD_STORE_FRAME_REFUSED;
    if (!greeted && h->op != PD_STORE_OP_HELLO) {
        snprintf(reason, reasonlen, "first message is op %u, not HELLO",
                 (unsigned)h->op);
        *peer_message = "protocol error: first message must be HELLO";
        return PD_STORE_FRAME_REFUSED;
    }

    int size_ok;
    switch (h->op) {
    case PD_STORE_OP_HELLO:
        size_ok = !greeted && h->keylen == 0 &&
                  h->vallen == PD_STORE_HELLO_LEN;
        break;
    case PD_STORE_OP_SET:
        size_ok = 1;
        break;
    case PD_STORE_OP_GET:
        size_ok = h->vallen == 4;
        break;
    case PD_STORE_OP_ADD:
        size_ok = h->vallen == 8;
        break;
    case PD_STORE_OP_ALIVE:
        size_ok = h->keylen == 0 && h->vallen == 4;
        break;
    default:
        snprintf(reason, reasonlen, "unknown op %u", (unsigned)h->op);
        *peer_message = "protocol error: unknown op";
        return PD_STORE_FRAME_REFUSED;
    }
    if (!size_ok) {
        snprintf(reason, reasonlen,
                 "malformed op %u (key %" PRIu32 " bytes, value %" PRIu32
                 " bytes)",
                 (unsigned)h->op, h->keylen, h->vallen);
        *peer_message = "protocol error: malformed message";
        return PD_STORE_FRAME_REFUSED;
    }
    return PD_STORE_FRAME_ACCEPTED;
}

int pd_store_frame_split(const uint8_t *buf, size_t len,
                         struct pd_store_frame *f)
{
    if (len < PD_STORE_HEADER_LEN)
        return 0;
    pd_store_decode_header(buf, &f->head);
    f->size = pd_store_frame_size(&f->head);
    if (len < f->size)
        return 0;
    f->key = buf + PD_STORE_HEADER_LEN;
    f->value = f->key + f->head.keylen;
    return 1;
}

int pd_store_parse_counter(const uint8_t *value, size_t vallen, int64_t *out)
{
    char text[32];
    if (vallen == 0 || vallen >= sizeof text)
        return -1;
    memcpy(text, value, vallen);
    text[vallen] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    /* end short of vallen: a NUL byte inside the value, not a counter. */
    if (errno != 0 || end != text + vallen)
        return -1;
    *out = v;
    return 0;
}

void pd_store_describe_key(const uint8_t *key, uint32_t keylen, char *buf,
                           size_t buflen)
{
    if (buflen == 0)
        return;
    size_t limit = buflen > 4 ? buflen - 4 : 0;
    size_t n = 0;
    for (uint32_t i = 0; i < keylen && n < limit; i++, n++)
        buf[n] = (key[i] >= 0x20 && key[i] < 0x7f) ? (char)key[i] : '?';
    if (keylen > limit && limit > 0) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
}
