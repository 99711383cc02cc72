/* tap_harness.c - see tap_harness.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tap_harness.h"

/* ------------------------------------------------------------------ */
/* Verdicts and TAP output                                              */
/* ------------------------------------------------------------------ */

int world_rank, world_size;
int checks_run, checks_failed;
bool on_open_mpi;

void fail(struct verdict *v, const char *fmt, ...)
{
    if (v->detail[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
    va_end(ap);
    if (v->detail[0] == '\0')
        strcpy(v->detail, "failed");
}

void check_rc(struct verdict *v, const char *call, int rc)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fail(v, "%s returned %d (%s)", call, rc, text);
}

/* Collective over MPI_COMM_WORLD: every rank calls it with its own verdict
 * for the same check. A failure is explained by the lowest failing rank. */
void report_as(enum expectation expect, const char *why,
                      const struct verdict *v, const char *description)
{
    int local_failed = v->detail[0] != '\0';
    int any_failed = 0;
    MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX,
                  MPI_COMM_WORLD);
    checks_run++;

    char shown[DETAIL_LEN] = "";
    int first_bad_rank = 0;
    if (any_failed) {
        int candidate = local_failed ? world_rank : world_size;
        MPI_Allreduce(&candidate, &first_bad_rank, 1, MPI_INT, MPI_MIN,
                      MPI_COMM_WORLD);
        memcpy(shown, v->detail, sizeof(shown));
        MPI_Bcast(shown, DETAIL_LEN, MPI_CHAR, first_bad_rank,
                  MPI_COMM_WORLD);
        shown[DETAIL_LEN - 1] = '\0';
        if (expect == EXPECT_PASS)
            checks_failed++;
    }
    if (world_rank == 0) {
        if (any_failed)
            printf("not ok %d - %s (rank %d: %s)", checks_run, description,
                   first_bad_rank, shown);
        else
            printf("ok %d - %s", checks_run, description);
        if (expect == EXPECT_TODO)
            printf(" # TODO %s", why);
        printf("\n");
        fflush(stdout);
    }
}

void report(const struct verdict *v, const char *fmt, ...)
{
    char description[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(description, sizeof(description), fmt, ap);
    va_end(ap);
    report_as(EXPECT_PASS, NULL, v, description);
}

void report_bool(bool passed, const char *fmt, ...)
{
    char description[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(description, sizeof(description), fmt, ap);
    va_end(ap);
    struct verdict v = { "" };
    if (!passed)
        fail(&v, "wrong result or route");
    report_as(EXPECT_PASS, NULL, &v, description);
}

/* Not attempted; counts as passed. Not collective. */
void report_skip(const char *why, const char *fmt, ...)
{
    char description[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(description, sizeof(description), fmt, ap);
    va_end(ap);
    checks_run++;
    if (world_rank == 0) {
        printf("ok %d - %s # SKIP %s\n", checks_run, description, why);
        fflush(stdout);
    }
}

bool library_is_open_mpi(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(version, &len);
    return strncmp(version, "Open MPI", 8) == 0;
}

/* Before MPI_Finalize, so the plan line is out before any rank can exit
 * (MPI_Finalize synchronizes) and a launcher that stops the job at the
 * first failing rank does not cut it: the plan line and the exit status. */
int finish(void)
{
    if (world_rank == 0) {
        printf("1..%d\n", checks_run);
        if (checks_failed > 0)
            printf("# %d of %d checks failed\n", checks_failed, checks_run);
        fflush(stdout);
    }
    return checks_failed > 0 ? 1 : 0;
}

int error_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}
