#include <stdarg.h>
#include <stdio.h>

#include "base/fail.h"

void pd_fail_set(struct pd_fail *fail, int errclass, const char *fmt, ...)
{
    fail->errclass = errclass;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail->msg, sizeof(fail->msg), fmt, ap);
    va_end(ap);
}
