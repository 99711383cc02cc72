/* PDMPI_DEBUG logging: warn (default), info (how the world formed, once),
 * trace (every call). Lines start with "pdmpi[rank]" like NCCL's. */
#ifndef PD_BASE_LOG_H
#define PD_BASE_LOG_H

enum pd_log_level {
    PD_LOG_NONE = 0,
    PD_LOG_WARN = 1,
    PD_LOG_INFO = 2,
    PD_LOG_TRACE = 3,
};

extern int pd_log_level;

void pd_log_set_rank(int rank);
void pd_log(enum pd_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define pd_log_enabled(level) (pd_log_level >= (level))

#endif
