/* Error codes to classes and text, codes a program adds, and error
 * handlers it makes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/mpi1.h"
#include "core/handles.h"

#pragma weak MPI_Error_string = PMPI_Error_string
#pragma weak MPI_Error_class = PMPI_Error_class
#pragma weak MPI_Add_error_class = PMPI_Add_error_class
#pragma weak MPI_Add_error_code = PMPI_Add_error_code
#pragma weak MPI_Add_error_string = PMPI_Add_error_string
#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
#pragma weak MPI_Errhandler_create = PMPI_Errhandler_create
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string == NULL || resultlen == NULL)
        return MPI_ERR_ARG;
    pd_error_text(errorcode, string, MPI_MAX_ERROR_STRING);
    *resultlen = (int)strlen(string);
    return pd_error_class_is_valid(errorcode) ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* A predefined code is its own class; an added one has the class it was
 * added to. */
int PMPI_Error_class(int errorcode, int *errorclass)
{
    int errclass = pd_error_code_class(errorcode);
    if (errorclass == NULL || errclass < 0)
        return MPI_ERR_ARG;
    *errorclass = errclass;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
    static const char call[] = "MPI_Add_error_class";
    PD_CHECK(pd_check_active(call));
    if (errorclass == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "errorclass is NULL");
    if ((*errorclass = pd_error_add(-1)) < 0)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    static const char call[] = "MPI_Add_error_code";
    PD_CHECK(pd_check_active(call));
    if (errorcode == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "errorcode is NULL");
    /* A class of MPI's own or one MPI_Add_error_class made. */
    bool predefined = errorclass > MPI_SUCCESS &&
                      errorclass <= MPI_ERR_LASTCODE &&
                      pd_error_class_is_valid(errorclass);
    if (!predefined && !pd_error_is_user_class(errorclass))
        return pd_raise(NULL, call, MPI_ERR_ARG, "%d is not an error class "
                        "(neither MPI's nor one MPI_Add_error_class made)",
                        errorclass);
    if ((*errorcode = pd_error_add(errorclass)) < 0)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char *string)
{
    static const char call[] = "MPI_Add_error_string";
    PD_CHECK(pd_check_active(call));
    if (string == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "string is NULL");
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return pd_raise(NULL, call, MPI_ERR_ARG, "the string has %zu "
                        "characters, more than MPI_MAX_ERROR_STRING - 1",
                        strlen(string));
    if (!pd_error_set_text(errorcode, string))
        return pd_raise(NULL, call, MPI_ERR_ARG, "%d is not a code or class "
                        "added by MPI_Add_error_code/class", errorcode);
    return MPI_SUCCESS;
}

/* Handlers the program made: kept until MPI_Finalize, since communicators
 * that use one keep it after the program frees its handle. */
static struct ompi_errhandler_t *pd_user_handlers;
static pthread_mutex_t pd_user_handlers_lock = PTHREAD_MUTEX_INITIALIZER;

/* A handler of the program's for communicators (comm_fn) or files
 * (file_fn). */
static int pd_create_errhandler(const char *call,
                                MPI_Comm_errhandler_function *comm_fn,
                                MPI_File_errhandler_function *file_fn,
                                MPI_Errhandler *errhandler)
{
    PD_CHECK(pd_check_active(call));
    if ((comm_fn == NULL && file_fn == NULL) || errhandler == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        errhandler != NULL ? "function" : "errhandler");
    struct ompi_errhandler_t *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    h->magic = PD_MAGIC_ERRH;
    h->kind = PD_ERRH_USER;
    h->comm_fn = comm_fn;
    h->file_fn = file_fn;
    snprintf(h->name, sizeof(h->name), "a user error handler");
    pthread_mutex_lock(&pd_user_handlers_lock);
    h->next = pd_user_handlers;
    pd_user_handlers = h;
    pthread_mutex_unlock(&pd_user_handlers_lock);
    *errhandler = h;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function,
                                MPI_Errhandler *errhandler)
{
    return pd_create_errhandler("MPI_Comm_create_errhandler", function,
                                NULL, errhandler);
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *function,
                                MPI_Errhandler *errhandler)
{
    return pd_create_errhandler("MPI_File_create_errhandler", NULL, function,
                                errhandler);
}

/* MPI-1's name (api/mpi1.h); MPI_Handler_function has the same shape. */
int PMPI_Errhandler_create(MPI_Handler_function *function,
                           MPI_Errhandler *errhandler)
{
    return pd_create_errhandler("MPI_Errhandler_create", function, NULL,
                                errhandler);
}

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    static const char call[] = "MPI_Errhandler_free";
    PD_CHECK(pd_check_active(call));
    if (errhandler == NULL || *errhandler == NULL ||
        (*errhandler)->magic != PD_MAGIC_ERRH ||
        *errhandler == MPI_ERRHANDLER_NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "errhandler is not an error "
                        "handler");
    /* The object stays for the communicators that use it (freed at
     * MPI_Finalize); the handle goes. */
    if ((*errhandler)->kind == PD_ERRH_USER)
        pd_handle_forget(PD_HANDLE_ERRH, *errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    static const char call[] = "MPI_Comm_call_errhandler";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    pd_raise(comm, call, errorcode, "called by the program (error code %d)",
             errorcode);
    return MPI_SUCCESS;
}

void pd_errhandlers_free_all(void)
{
    pthread_mutex_lock(&pd_user_handlers_lock);
    while (pd_user_handlers != NULL) {
        struct ompi_errhandler_t *next = pd_user_handlers->next;
        pd_handle_forget(PD_HANDLE_ERRH, pd_user_handlers);
        free(pd_user_handlers);
        pd_user_handlers = next;
    }
    pthread_mutex_unlock(&pd_user_handlers_lock);
    pd_errors_reset();
}
