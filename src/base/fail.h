/* A failure on its way up to the MPI entry point: the MPI error class
 * and a one-line reason, filled where the failure is understood. */
#ifndef PD_BASE_FAIL_H
#define PD_BASE_FAIL_H

struct pd_fail {
    int errclass;
    char msg[1024];
};

void pd_fail_set(struct pd_fail *fail, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* *to = *from, copying the reason only as far as it goes (most are
 * empty; the whole struct is a kilobyte). */
void pd_fail_copy(struct pd_fail *to, const struct pd_fail *from);

#endif
