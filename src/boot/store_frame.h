/*
 * The store server's reading of request frames, without sockets: given
 * bytes from a client, validate the header at their front against the
 * protocol's limits and the connection's state, split a whole frame into
 * key and value, parse a counter's decimal text. The
 * server calls these on a connection's input buffer; the fuzz targets in
 * tests/fuzz/ call them on arbitrary bytes. Nothing here allocates or
 * reads beyond the length it is given.
 */
#ifndef PD_BOOT_STORE_FRAME_H
#define PD_BOOT_STORE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "store_proto.h"

/* What pd_store_frame_check_head makes of the bytes at hand. */
#define PD_STORE_FRAME_ACCEPTED 1   /* header valid: read on to its end */
#define PD_STORE_FRAME_INCOMPLETE 0 /* fewer bytes than a header */
#define PD_STORE_FRAME_REFUSED (-1) /* close the connection */

struct pd_store_frame {
    struct pd_store_header head;
    const uint8_t *key;   /* head.keylen bytes */
    const uint8_t *value; /* head.vallen bytes */
    size_t size;          /* header, key and value */
};

/* Bytes a frame with this header occupies on the wire. */
size_t pd_store_frame_size(const struct pd_store_header *h);

/*
 * Check the header at the front of buf[0..len) the way the server does
 * before it buffers the body: magic, version, the key and value limits,
 * HELLO first on a connection not yet greeted and never again after,
 * and the value size each op needs. On PD_STORE_FRAME_ACCEPTED *h holds
 * the header. On PD_STORE_FRAME_REFUSED, reason (for the server's log)
 * says what was wrong and *peer_message is what the client should be
 * told, or NULL when it gets no reply.
 */
int pd_store_frame_check_head(const uint8_t *buf, size_t len, int greeted,
                              struct pd_store_header *h, char *reason,
                              size_t reasonlen, const char **peer_message);

/*
 * 1 when buf[0..len) holds the whole frame whose header (already
 * accepted) is at its front, with *f pointing into buf; 0 when more
 * bytes are needed.
 */
int pd_store_frame_split(const uint8_t *buf, size_t len,
                         struct pd_store_frame *f);

/*
 * The value of a counter key: decimal text (as strtoll reads it) that
 * fits in 64 bits and takes all vallen bytes. 0 and *out, or -1 when it
 * is not a counter.
 */
int pd_store_parse_counter(const uint8_t *value, size_t vallen,
                           int64_t *out);

/* A printable rendering of a (possibly binary) key for messages: bytes
 * outside ASCII's printable range become '?', a long key ends in "...". */
void pd_store_describe_key(const uint8_t *key, uint32_t keylen, char *buf,
                           size_t buflen);

#endif
