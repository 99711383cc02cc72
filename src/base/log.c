#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "base/log.h"

int pd_log_level = PD_LOG_WARN;
static int pd_log_rank = -1;

void pd_log_set_rank(int rank)
{
    pd_log_rank = rank;
}

void pd_log(enum pd_log_level level, const char *fmt, ...)
{
    static const char *const names[] = { "", "warn", "info", "trace" };
    if (pd_log_level < (int)level)
        return;
    /* One write per line so lines from concurrent ranks do not mix. */
    char line[2048];
    int n;
    if (pd_log_rank >= 0)
        n = snprintf(line, sizeof(line), "pdmpi[%d] %s: ", pd_log_rank,
                     names[level]);
    else
        n = snprintf(line, sizeof(line), "pdmpi[%d] %s: ", (int)getpid(),
                     names[level]);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    fwrite(line, 1, (size_t)n, stderr);
}
