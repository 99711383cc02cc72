/*
 * Parser for PMI-1 response lines; see pmi1_parse.h. Everything a server
 * sends is treated as untrusted: lengths are checked before every copy and
 * the reason for a refusal quotes the offending text, made printable.
 */
#include "pmi1_parse.h"

#include <stdio.h>
#include <string.h>

#define EXCERPT_LEN 40

/* A short printable copy of text for an error message: a server that sends
 * binary must not put control bytes into the caller's log line. */
static void excerpt(char *dst, size_t dstlen, const char *src, size_t len)
{
    size_t n = len < EXCERPT_LEN ? len : EXCERPT_LEN;
    if (n + 4 > dstlen)
        n = dstlen > 4 ? dstlen - 4 : 0;
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (n < len && dstlen >= 4) {
        memcpy(dst + i, "...", 3);
        i += 3;
    }
    dst[i] = '\0';
}

/* Store one "key=value" token, split on its first '='. */
static int add_attr(struct pd_pmi1_reply *reply, const char *tok, size_t len,
                    char *err, size_t errlen)
{
    char shown[EXCERPT_LEN + 4];
    excerpt(shown, sizeof shown, tok, len);

    if (reply->nattrs >= PD_PMI1_MAX_ATTRS) {
        snprintf(err, errlen, "more than %d attributes", PD_PMI1_MAX_ATTRS);
        return -1;
    }
    const char *eq = memchr(tok, '=', len);
    if (eq == NULL) {
        snprintf(err, errlen, "attribute '%s' has no '='", shown);
        return -1;
    }
    size_t keylen = (size_t)(eq - tok);
    size_t vallen = len - keylen - 1;
    if (keylen == 0) {
        snprintf(err, errlen, "attribute '%s' has an empty key", shown);
        return -1;
    }
    if (keylen >= sizeof reply->attr[0].key) {
        snprintf(err, errlen, "key of '%s' is longer than %zu bytes", shown,
                 sizeof reply->attr[0].key - 1);
        return -1;
    }
    if (vallen >= sizeof reply->attr[0].value) {
        snprintf(err, errlen, "value of '%s' is longer than %zu bytes", shown,
                 sizeof reply->attr[0].value - 1);
        return -1;
    }
    int i = reply->nattrs++;
    memcpy(reply->attr[i].key, tok, keylen);
    reply->attr[i].key[keylen] = '\0';
    memcpy(reply->attr[i].value, eq + 1, vallen);
    reply->attr[i].value[vallen] = '\0';
    return 0;
}

/* The line must open with a non-empty cmd=: it is what tells a reply from
 * a desynchronised stream. */
static int check_cmd_first(const char *tok, size_t len, char *err,
                           size_t errlen)
{
    char shown[EXCERPT_LEN + 4];
    if (len > 4 && memcmp(tok, "cmd=", 4) == 0)
        return 0;
    excerpt(shown, sizeof shown, tok, len);
    snprintf(err, errlen, "line does not start with cmd=<name> ('%s')",
             shown);
    return -1;
}

int pd_pmi1_parse_reply(const char *line, size_t len,
                        struct pd_pmi1_reply *reply, char *err, size_t errlen)
{
    reply->nattrs = 0;
    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len > 0 && line[len - 1] == '\r')
        len--;
    if (len > PD_PMI1_MAX_LINE) {
        snprintf(err, errlen, "line longer than %d bytes", PD_PMI1_MAX_LINE);
        return -1;
    }
    if (memchr(line, '\0', len) != NULL || memchr(line, '\n', len) != NULL) {
        snprintf(err, errlen, "line contains a NUL or newline byte");
        return -1;
    }

    size_t pos = 0;
    while (pos < len) {
        if (line[pos] == ' ') {
            pos++;
            continue;
        }
        const char *sp = memchr(line + pos, ' ', len - pos);
        size_t toklen = sp ? (size_t)(sp - (line + pos)) : len - pos;
        if (reply->nattrs == 0 &&
            check_cmd_first(line + pos, toklen, err, errlen) < 0)
            return -1;
        if (add_attr(reply, line + pos, toklen, err, errlen) < 0)
            return -1;
        pos += toklen;
    }
    if (reply->nattrs == 0) {
        snprintf(err, errlen, "empty line (expected cmd=...)");
        return -1;
    }
    return 0;
}

const char *pd_pmi1_reply_get(const struct pd_pmi1_reply *reply,
                              const char *key)
{
    for (int i = 0; i < reply->nattrs; i++)
        if (strcmp(reply->attr[i].key, key) == 0)
            return reply->attr[i].value;
    return NULL;
}
