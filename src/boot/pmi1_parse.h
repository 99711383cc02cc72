/*
 * Parser for one PMI-1 response line ("cmd=X k=v k2=v2"). Pure: no I/O,
 * no globals, no allocation, so a fuzzer can link it alone.
 *
 * Hydra and Slurm answer the same commands with attributes in different
 * orders, with or without msg= and value=, so callers look attributes up
 * by name rather than by position.
 */
#ifndef PD_BOOT_PMI1_PARSE_H
#define PD_BOOT_PMI1_PARSE_H

#include <stddef.h>

#define PD_PMI1_MAX_ATTRS 16
/* Longest line either side may send; anything longer is a protocol error. */
#define PD_PMI1_MAX_LINE 4096

struct pd_pmi1_reply {
    int nattrs;
    struct {
        char key[64];
        char value[1024];
    } attr[PD_PMI1_MAX_ATTRS];
};

/* Parse one response line (without or with trailing '\n'):
 * "cmd=X k=v k2=v2". Returns 0, or -1 with a reason in err (line too long,
 * no "cmd=" first, an attribute without '=', a key or value too long, too
 * many attributes). Each attribute is split on the FIRST '=' only. */
int pd_pmi1_parse_reply(const char *line, size_t len,
                        struct pd_pmi1_reply *reply, char *err, size_t errlen);

/* Value of key in reply, or NULL. */
const char *pd_pmi1_reply_get(const struct pd_pmi1_reply *reply,
                              const char *key);

#endif
