/* Starting and ending MPI: Init, Init_thread, Finalize, Abort and the
 * queries about them. */
#include <stdio.h>

#include "api/api.h"
#include "service/lifecycle.h"

#pragma weak MPI_Init = PMPI_Init
#pragma weak MPI_Init_thread = PMPI_Init_thread
#pragma weak MPI_Initialized = PMPI_Initialized
#pragma weak MPI_Finalize = PMPI_Finalize
#pragma weak MPI_Finalized = PMPI_Finalized
#pragma weak MPI_Abort = PMPI_Abort
#pragma weak MPI_Query_thread = PMPI_Query_thread
#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main

/* Failures here have no communicator to consult: the default handler,
 * MPI_ERRORS_ARE_FATAL, applies. */
static _Noreturn void pd_init_failed(const char *call, int errclass,
                                     const char *why)
{
    fprintf(stderr, "pdmpi: %s: %s: %s\n", call, pd_error_class_name(errclass),
            why);
    pd_runtime_abort(errclass);
}

static int pd_init(const char *call, int required, int *provided)
{
    if (pd_runtime_state() == PD_RT_ACTIVE)
        pd_init_failed(call, MPI_ERR_OTHER, "MPI is already initialized");
    if (pd_runtime_state() == PD_RT_FINALIZED)
        pd_init_failed(call, MPI_ERR_OTHER,
                       "MPI was finalized and cannot be initialized again");
    char err[1024];
    int rc = pd_runtime_init(required, provided, err, sizeof(err));
    if (rc != MPI_SUCCESS)
        pd_init_failed(call, rc, err);
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return pd_init("MPI_Init", MPI_THREAD_SINGLE, NULL);
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (provided == NULL)
        pd_init_failed("MPI_Init_thread", MPI_ERR_ARG, "provided is NULL");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        pd_init_failed("MPI_Init_thread", MPI_ERR_ARG,
                       "required must be one of MPI_THREAD_SINGLE, "
                       "_FUNNELED, _SERIALIZED, _MULTIPLE");
    return pd_init("MPI_Init_thread", required, provided);
}

int PMPI_Initialized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = pd_runtime_state() != PD_RT_UNINITIALIZED;
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = pd_runtime_state() == PD_RT_FINALIZED;
    return MPI_SUCCESS;
}

int PMPI_Finalize(void)
{
    static const char call[] = "MPI_Finalize";
    PD_CHECK(pd_check_active(call));
    char err[1024];
    if (pd_runtime_finalize(err, sizeof(err)) != MPI_SUCCESS)
        pd_init_failed(call, MPI_ERR_OTHER, err);
    pd_errhandlers_free_all();
    pd_f90_types_free_all();
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    const char *name = pd_comm_is_usable(comm) ? comm->name : "MPI_COMM_WORLD";
    char msg[256];
    snprintf(msg, sizeof(msg), "rank %d called MPI_Abort(%s, %d)",
             pd_rt.world.rank, name, errorcode);
    fprintf(stderr, "pdmpi: %s; ending the job\n", msg);
    pd_runtime_abort_job(errorcode, msg);
}

int PMPI_Query_thread(int *provided)
{
    static const char call[] = "MPI_Query_thread";
    PD_CHECK(pd_check_active(call));
    if (provided == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "provided is NULL");
    *provided = pd_rt.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
    static const char call[] = "MPI_Is_thread_main";
    PD_CHECK(pd_check_active(call));
    if (flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "flag is NULL");
    *flag = pthread_equal(pthread_self(), pd_rt.main_thread);
    return MPI_SUCCESS;
}
