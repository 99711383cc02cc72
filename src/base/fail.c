#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/fail.h"

void pd_fail_set(struct pd_fail *fail, int errclass, const char *fmt, ...)
{
    fail->errclass = errclass;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail->msg, sizeof(fail->msg), fmt, ap);
    va_end(ap);
}

void pd_fail_copy(struct pd_fail *to, const struct pd_fail *from)
{
    to->errclass = from->errclass;
    if (from->msg[0] == '\0') {    /* success, mostly: no string calls */
        to->msg[0] = '\0';
        return;
    }
    size_t n = strnlen(from->msg, sizeof(from->msg) - 1);
    memcpy(to->msg, from->msg, n);
    to->msg[n] = '\0';
}
