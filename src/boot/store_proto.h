/*
 * Wire format of pdmpi's rendezvous store.
 *
 * Every message, in both directions, is one frame:
 *
 *   offset  size  field      (all integers in network byte order)
 *        0     4  magic      0x50444B56 ("PDKV")
 *        4     2  version    1
 *        6     2  op         enum pd_store_op
 *        8     4  keylen     <= PD_STORE_MAX_KEY (job key: PD_STORE_MAX_JOBKEY)
 *       12     4  vallen     <= PD_STORE_MAX_VALUE
 *       16     .  key bytes, then value bytes
 *
 * On a new connection the store speaks first, CHALLENGE (value: a
 * nonce); then requests and their replies (store_auth.h has the proofs):
 *   HELLO  value = i32 rank, client nonce, proof of the job key
 *                                              -> OK(store's proof) | ERR
 *   SET    key, value                          -> OK
 *   GET    key, value = u32 timeout in ms      -> VALUE(value) | ERR(message)
 *   ADD    key, value = i64 delta              -> VALUE(i64 new total)
 *   ALIVE  value = i32 rank                    -> VALUE(i64 open connections
 *                                                 of that rank)
 * The first frame from a client must be HELLO proving the job key; the
 * key itself never crosses the wire.
 * A client has at most one request outstanding; replies come in order.
 *
 * ADD keeps its counter as decimal text, so a GET of a counter key reads
 * "42", and an ADD to a key SET to decimal text continues from it.
 */
#ifndef PD_BOOT_STORE_PROTO_H
#define PD_BOOT_STORE_PROTO_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "store.h"

#define PD_STORE_MAGIC 0x50444B56u
#define PD_STORE_VERSION 2
#define PD_STORE_HEADER_LEN 16

/* Extra time a client waits beyond a GET's own timeout for the reply. */
#define PD_STORE_GET_SLACK_MS 5000

enum pd_store_op {
    PD_STORE_OP_HELLO = 1,
    PD_STORE_OP_SET = 2,
    PD_STORE_OP_GET = 3,
    PD_STORE_OP_ADD = 4,
    PD_STORE_OP_ALIVE = 5,
    PD_STORE_OP_OK = 16,
    PD_STORE_OP_VALUE = 17,
    PD_STORE_OP_ERR = 18,
    PD_STORE_OP_CHALLENGE = 19,
};

struct pd_store_header {
    uint32_t magic;
    uint16_t version;
    uint16_t op;
    uint32_t keylen;
    uint32_t vallen;
};

static inline void pd_store_put_u16(uint8_t *p, uint16_t v)
{
    v = htons(v);
    memcpy(p, &v, sizeof v);
}

static inline void pd_store_put_u32(uint8_t *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, sizeof v);
}

static inline uint16_t pd_store_get_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return ntohs(v);
}

static inline uint32_t pd_store_get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return ntohl(v);
}

static inline void pd_store_put_i64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    pd_store_put_u32(p, (uint32_t)(u >> 32));
    pd_store_put_u32(p + 4, (uint32_t)u);
}

static inline int64_t pd_store_get_i64(const uint8_t *p)
{
    uint64_t u = ((uint64_t)pd_store_get_u32(p) << 32) | pd_store_get_u32(p + 4);
    return (int64_t)u;
}

static inline void pd_store_encode_header(uint8_t out[PD_STORE_HEADER_LEN],
                                          uint16_t op, uint32_t keylen,
                                          uint32_t vallen)
{
    pd_store_put_u32(out, PD_STORE_MAGIC);
    pd_store_put_u16(out + 4, PD_STORE_VERSION);
    pd_store_put_u16(out + 6, op);
    pd_store_put_u32(out + 8, keylen);
    pd_store_put_u32(out + 12, vallen);
}

static inline void pd_store_decode_header(const uint8_t in[PD_STORE_HEADER_LEN],
                                          struct pd_store_header *h)
{
    h->magic = pd_store_get_u32(in);
    h->version = pd_store_get_u16(in + 4);
    h->op = pd_store_get_u16(in + 6);
    h->keylen = pd_store_get_u32(in + 8);
    h->vallen = pd_store_get_u32(in + 12);
}

/*
 * NULL when the header is acceptable; otherwise a short reason. Checks
 * only what both sides share; op-specific sizes are checked by the user.
 */
static inline const char *pd_store_check_header(const struct pd_store_header *h)
{
    if (h->magic != PD_STORE_MAGIC)
        return "bad magic (not a pdmpi store client)";
    if (h->version != PD_STORE_VERSION)
        return "unsupported protocol version";
    if (h->keylen > PD_STORE_MAX_KEY)
        return "key too long";
    if (h->vallen > PD_STORE_MAX_VALUE)
        return "value too long";
    return NULL;
}

#endif
