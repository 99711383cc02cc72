/*
 * Fuzz target: the rendezvous store's request frames as the server reads
 * them (src/boot/store_frame.c), the proof a HELLO carries
 * (src/boot/store_auth.c) and the header check a client applies to a
 * reply (store_proto.h).
 *
 * The input is the byte stream of one connection. It is read the way the
 * server's loop reads it: check the header at the front, wait for the
 * whole frame, split it, act on it (a HELLO's proof of the job key below is checked,
 * SET values are read as counters the way a later ADD would, key bytes
 * are rendered for messages), then the next frame. A refused frame must
 * come with a reason, and nothing may be read beyond the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/store_auth.h"
#include "boot/store_frame.h"

#define JOB_KEY "fuzz-job-key"

/* The store's challenge on this imagined connection. */
static const uint8_t server_nonce[PD_STORE_NONCE_LEN] = "0123456789abcdef0123456789abcde";

/* Touch every byte so the sanitizer sees a read out of bounds. */
static unsigned sum_bytes(const uint8_t *p, size_t n)
{
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += p[i];
    return sum;
}

static void require(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile unsigned sink = 0;

    /* What a client does with the header of a reply. */
    if (size >= PD_STORE_HEADER_LEN) {
        struct pd_store_header h;
        pd_store_decode_header(data, &h);
        const char *why = pd_store_check_header(&h);
        require(why == NULL || why[0] != '\0');
    }

    int greeted = 0;
    size_t off = 0;
    for (;;) {
        const uint8_t *buf = data + off;
        size_t len = size - off;
        struct pd_store_header h;
        char reason[160] = "";
        const char *peer_message = NULL;
        int verdict = pd_store_frame_check_head(buf, len, greeted, &h, reason,
                                                sizeof reason, &peer_message);
        if (verdict == PD_STORE_FRAME_INCOMPLETE) {
            require(len < PD_STORE_HEADER_LEN);
            break;
        }
        if (verdict == PD_STORE_FRAME_REFUSED) {
            /* The server's error: a reason for its log, and any message
             * for the peer is a real sentence. */
            require(reason[0] != '\0' && memchr(reason, '\0', sizeof reason));
            require(peer_message == NULL || strlen(peer_message) > 0);
            break;
        }
        require(verdict == PD_STORE_FRAME_ACCEPTED);
        require(h.keylen <= PD_STORE_MAX_KEY && h.vallen <= PD_STORE_MAX_VALUE);

        struct pd_store_frame f;
        if (!pd_store_frame_split(buf, len, &f)) {
            require(len < pd_store_frame_size(&h));
            break;  /* the server waits for the rest */
        }
        require(f.size == pd_store_frame_size(&h) && f.size <= len);
        require(f.key == buf + PD_STORE_HEADER_LEN);
        require(f.value == f.key + h.keylen);
        sink += sum_bytes(f.key, h.keylen) + sum_bytes(f.value, h.vallen);

        char shown[128];
        pd_store_describe_key(f.key, h.keylen, shown, sizeof shown);
        require(strlen(shown) < sizeof shown);
        char tiny[5];
        pd_store_describe_key(f.key, h.keylen, tiny, sizeof tiny);
        require(strlen(tiny) < sizeof tiny);

        int64_t counter = 0;
        switch (h.op) {
        case PD_STORE_OP_HELLO: {
            require(h.vallen == PD_STORE_HELLO_LEN && h.keylen == 0);
            /* The store's check against the proof made here for the same
             * rank and nonces: it accepts exactly that one. */
            int32_t rank = -1;
            uint8_t client_nonce[PD_STORE_NONCE_LEN];
            uint8_t made[PD_STORE_HELLO_LEN];
            int ok = pd_store_hello_check(JOB_KEY, strlen(JOB_KEY),
                                          server_nonce, f.value, h.vallen,
                                          &rank, client_nonce);
            pd_store_hello_make(JOB_KEY, server_nonce, f.value + 4,
                                (int32_t)pd_store_get_u32(f.value), made);
            require(ok == (memcmp(made, f.value, sizeof made) == 0));
            if (ok) {
                require(rank == (int32_t)pd_store_get_u32(f.value));
                uint8_t proof[PD_STORE_PROOF_LEN];
                pd_store_server_proof(JOB_KEY, strlen(JOB_KEY), client_nonce,
                                      server_nonce, proof);
                sink += proof[0];
            }
            /* On: the frames after a HELLO are what the fuzzer explores
             * (the store would have closed a connection with a bad one). */
            greeted = 1;
            break;
        }
        case PD_STORE_OP_SET:
            /* A counter is decimal text through its last byte. */
            if (pd_store_parse_counter(f.value, h.vallen, &counter) == 0)
                require(memchr(f.value, '\0', h.vallen) == NULL);
            break;
        case PD_STORE_OP_GET:
        case PD_STORE_OP_ALIVE:     /* both carry one i32 (id, rank) */
            require(h.vallen == 4);
            sink += pd_store_get_u32(f.value);
            break;
        case PD_STORE_OP_ADD:
            require(h.vallen == 8);
            sink += (unsigned)pd_store_get_i64(f.value);
            break;
        default:
            abort();  /* check_head lets no other op through */
        }
        if (!greeted)
            break;  /* wrong job key: the server closes the connection */
        off += f.size;
    }
    (void)sink;
    return 0;
}
