/* Environment inquiries: time, processor name, versions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "base/clock.h"

#ifndef PD_GLOO_VERSION
#define PD_GLOO_VERSION "none"
#endif

#pragma weak MPI_Wtime = PMPI_Wtime
#pragma weak MPI_Wtick = PMPI_Wtick
#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
#pragma weak MPI_Get_version = PMPI_Get_version
#pragma weak MPI_Get_library_version = PMPI_Get_library_version
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
#pragma weak MPI_Free_mem = PMPI_Free_mem

/* Monotonic: timings never jump with the wall clock. */
double PMPI_Wtime(void)
{
    return (double)pd_clock_ns() * 1e-9;
}

double PMPI_Wtick(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
        return 1e-9;
    return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    static const char call[] = "MPI_Get_processor_name";
    PD_CHECK(pd_check_active(call));
    if (name == NULL || resultlen == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        name == NULL ? "name" : "resultlen");
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", pd_rt.host);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int PMPI_Get_version(int *version, int *subversion)
{
    if (version == NULL || subversion == NULL)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (version == NULL || resultlen == NULL)
        return MPI_ERR_ARG;
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
             "pdmpi %s (Open MPI %d.%d.%d ABI, MPI %d.%d; gloo %s)",
             PACKAGE_VERSION, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
             OMPI_RELEASE_VERSION, MPI_VERSION, MPI_SUBVERSION,
             PD_GLOO_VERSION);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

/* A hook for profiling tools that intercept MPI_Pcontrol; the library
 * itself has nothing to switch, as the standard allows. */
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

/* No memory is special to gloo's TCP transport: page-aligned heap memory
 * serves (and is what registration-based transports would want). */
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char call[] = "MPI_Alloc_mem";
    (void)info;
    PD_CHECK(pd_check_active(call));
    if (size < 0)
        return pd_raise(NULL, call, MPI_ERR_SIZE, "size is negative (%ld)",
                        (long)size);
    if (baseptr == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "baseptr is NULL");
    void *mem = NULL;
    if (posix_memalign(&mem, 4096, size > 0 ? (size_t)size : 1) != 0)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM,
                        "cannot allocate %ld bytes", (long)size);
    *(void **)baseptr = mem;
    return MPI_SUCCESS;
}

int PMPI_Free_mem(void *base)
{
    static const char call[] = "MPI_Free_mem";
    PD_CHECK(pd_check_active(call));
    free(base);
    return MPI_SUCCESS;
}
