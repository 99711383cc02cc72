/*
 * Fuzz target: the PMI-1 reply parser (src/boot/pmi1_parse.c), which reads
 * whatever line a process manager (or anything listening on PMI_PORT)
 * sends. The input is one line, not NUL-terminated. A refusal must come
 * with a reason; an accepted line must give NUL-terminated attributes,
 * "cmd" first, each one found again by name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/pmi1_parse.h"

static void require(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct pd_pmi1_reply reply;
    char err[128];
    const char *line = (const char *)data;

    err[0] = '\0';
    if (pd_pmi1_parse_reply(line, size, &reply, err, sizeof err) < 0) {
        require(err[0] != '\0');
        /* A short error buffer is truncated, never overrun. */
        char tiny[6];
        require(pd_pmi1_parse_reply(line, size, &reply, tiny, sizeof tiny) < 0);
        require(strlen(tiny) < sizeof tiny);
        return 0;
    }

    require(reply.nattrs >= 1 && reply.nattrs <= PD_PMI1_MAX_ATTRS);
    require(strcmp(reply.attr[0].key, "cmd") == 0);
    require(reply.attr[0].value[0] != '\0');
    for (int i = 0; i < reply.nattrs; i++) {
        size_t keylen = strnlen(reply.attr[i].key, sizeof reply.attr[i].key);
        size_t vallen = strnlen(reply.attr[i].value,
                                sizeof reply.attr[i].value);
        require(keylen > 0 && keylen < sizeof reply.attr[i].key);
        require(vallen < sizeof reply.attr[i].value);
        require(strchr(reply.attr[i].key, '=') == NULL);
        require(strchr(reply.attr[i].key, ' ') == NULL);
        require(strchr(reply.attr[i].value, ' ') == NULL);
        /* The first attribute of that name is what a lookup returns. */
        const char *got = pd_pmi1_reply_get(&reply, reply.attr[i].key);
        require(got != NULL);
        int first = 0;
        while (strcmp(reply.attr[first].key, reply.attr[i].key) != 0)
            first++;
        require(got == reply.attr[first].value);
    }
    require(pd_pmi1_reply_get(&reply, "") == NULL);
    return 0;
}
