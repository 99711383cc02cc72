#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "base/fail.h"
#include "core/error.h"
#include "base/log.h"
#include "core/runtime.h"

struct pd_error_desc {
    const char *name;
    const char *text;
};

static const struct pd_error_desc pd_errors[] = {
    [MPI_SUCCESS] = { "MPI_SUCCESS", "no error" },
    [MPI_ERR_BUFFER] = { "MPI_ERR_BUFFER", "invalid buffer pointer" },
    [MPI_ERR_COUNT] = { "MPI_ERR_COUNT", "invalid count argument" },
    [MPI_ERR_TYPE] = { "MPI_ERR_TYPE", "invalid datatype" },
    [MPI_ERR_TAG] = { "MPI_ERR_TAG", "invalid tag" },
    [MPI_ERR_COMM] = { "MPI_ERR_COMM", "invalid communicator" },
    [MPI_ERR_RANK] = { "MPI_ERR_RANK", "invalid rank" },
    [MPI_ERR_REQUEST] = { "MPI_ERR_REQUEST", "invalid request" },
    [MPI_ERR_ROOT] = { "MPI_ERR_ROOT", "invalid root" },
    [MPI_ERR_GROUP] = { "MPI_ERR_GROUP", "invalid group" },
    [MPI_ERR_OP] = { "MPI_ERR_OP", "invalid reduce operation" },
    [MPI_ERR_TOPOLOGY] = { "MPI_ERR_TOPOLOGY", "invalid communicator topology" },
    [MPI_ERR_DIMS] = { "MPI_ERR_DIMS", "invalid topology dimension" },
    [MPI_ERR_ARG] = { "MPI_ERR_ARG", "invalid argument of some other kind" },
    [MPI_ERR_UNKNOWN] = { "MPI_ERR_UNKNOWN", "unknown error" },
    [MPI_ERR_TRUNCATE] = { "MPI_ERR_TRUNCATE", "message truncated" },
    [MPI_ERR_OTHER] = { "MPI_ERR_OTHER", "known error not in this list" },
    [MPI_ERR_INTERN] = { "MPI_ERR_INTERN", "internal error" },
    [MPI_ERR_IN_STATUS] = { "MPI_ERR_IN_STATUS", "error code is in status" },
    [MPI_ERR_PENDING] = { "MPI_ERR_PENDING", "pending request" },
    [MPI_ERR_ACCESS] = { "MPI_ERR_ACCESS", "invalid access mode" },
    [MPI_ERR_AMODE] = { "MPI_ERR_AMODE", "invalid amode argument" },
    [MPI_ERR_ASSERT] = { "MPI_ERR_ASSERT", "invalid assert argument" },
    [MPI_ERR_BAD_FILE] = { "MPI_ERR_BAD_FILE", "bad file" },
    [MPI_ERR_BASE] = { "MPI_ERR_BASE", "invalid base" },
    [MPI_ERR_CONVERSION] = { "MPI_ERR_CONVERSION", "error in data conversion" },
    [MPI_ERR_DISP] = { "MPI_ERR_DISP", "invalid displacement" },
    [MPI_ERR_DUP_DATAREP] = { "MPI_ERR_DUP_DATAREP", "conversion function registration of a data representation identifier that is already defined" },
    [MPI_ERR_FILE_EXISTS] = { "MPI_ERR_FILE_EXISTS", "file exists" },
    [MPI_ERR_FILE_IN_USE] = { "MPI_ERR_FILE_IN_USE", "file operation could not be completed, file in use" },
    [MPI_ERR_FILE] = { "MPI_ERR_FILE", "invalid file handle" },
    [MPI_ERR_INFO_KEY] = { "MPI_ERR_INFO_KEY", "info key too long" },
    [MPI_ERR_INFO_NOKEY] = { "MPI_ERR_INFO_NOKEY", "info key not defined" },
    [MPI_ERR_INFO_VALUE] = { "MPI_ERR_INFO_VALUE", "info value too long" },
    [MPI_ERR_INFO] = { "MPI_ERR_INFO", "invalid info object" },
    [MPI_ERR_IO] = { "MPI_ERR_IO", "input/output error" },
    [MPI_ERR_KEYVAL] = { "MPI_ERR_KEYVAL", "invalid key value" },
    [MPI_ERR_LOCKTYPE] = { "MPI_ERR_LOCKTYPE", "invalid lock type" },
    [MPI_ERR_NAME] = { "MPI_ERR_NAME", "invalid service name" },
    [MPI_ERR_NO_MEM] = { "MPI_ERR_NO_MEM", "out of memory" },
    [MPI_ERR_NOT_SAME] = { "MPI_ERR_NOT_SAME", "collective argument not identical on all processes" },
    [MPI_ERR_NO_SPACE] = { "MPI_ERR_NO_SPACE", "not enough space" },
    [MPI_ERR_NO_SUCH_FILE] = { "MPI_ERR_NO_SUCH_FILE", "file does not exist" },
    [MPI_ERR_PORT] = { "MPI_ERR_PORT", "invalid port name" },
    [MPI_ERR_QUOTA] = { "MPI_ERR_QUOTA", "quota exceeded" },
    [MPI_ERR_READ_ONLY] = { "MPI_ERR_READ_ONLY", "read-only file or file system" },
    [MPI_ERR_RMA_CONFLICT] = { "MPI_ERR_RMA_CONFLICT", "conflicting accesses to window" },
    [MPI_ERR_RMA_SYNC] = { "MPI_ERR_RMA_SYNC", "erroneous RMA synchronization" },
    [MPI_ERR_SERVICE] = { "MPI_ERR_SERVICE", "invalid service" },
    [MPI_ERR_SIZE] = { "MPI_ERR_SIZE", "invalid size" },
    [MPI_ERR_SPAWN] = { "MPI_ERR_SPAWN", "error spawning process" },
    [MPI_ERR_UNSUPPORTED_DATAREP] = { "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation" },
    [MPI_ERR_UNSUPPORTED_OPERATION] = { "MPI_ERR_UNSUPPORTED_OPERATION", "operation not supported" },
    [MPI_ERR_WIN] = { "MPI_ERR_WIN", "invalid window" },
    [MPI_ERR_RMA_RANGE] = { "MPI_ERR_RMA_RANGE", "target memory outside the window" },
    [MPI_ERR_RMA_ATTACH] = { "MPI_ERR_RMA_ATTACH", "memory cannot be attached" },
    [MPI_ERR_RMA_FLAVOR] = { "MPI_ERR_RMA_FLAVOR", "passed window has the wrong flavor" },
    [MPI_ERR_RMA_SHARED] = { "MPI_ERR_RMA_SHARED", "memory cannot be shared" },
};

#define PD_NUM_ERRORS ((int)(sizeof(pd_errors) / sizeof(pd_errors[0])))

/* Codes and classes a program adds (MPI_Add_error_class/_code), numbered
 * from MPI_ERR_LASTCODE + 1, each with its class and its string. */
struct pd_user_error {
    int errclass;
    char text[MPI_MAX_ERROR_STRING];
};
static struct pd_user_error *pd_user_errors;
static int pd_user_error_count;
static pthread_mutex_t pd_user_error_lock = PTHREAD_MUTEX_INITIALIZER;

static bool pd_predefined_code(int code)
{
    return code >= 0 && code < PD_NUM_ERRORS && pd_errors[code].name != NULL;
}

/* The added code's entry, or NULL. */
static struct pd_user_error *pd_user_error(int code)
{
    int i = code - MPI_ERR_LASTCODE - 1;
    return i >= 0 && i < pd_user_error_count ? &pd_user_errors[i] : NULL;
}

int pd_error_add(int errclass)
{
    pthread_mutex_lock(&pd_user_error_lock);
    struct pd_user_error *grown =
        realloc(pd_user_errors,
                (size_t)(pd_user_error_count + 1) * sizeof(*grown));
    int code = -1;
    if (grown != NULL) {
        pd_user_errors = grown;
        code = MPI_ERR_LASTCODE + 1 + pd_user_error_count++;
        grown[code - MPI_ERR_LASTCODE - 1] = (struct pd_user_error){
            errclass < 0 ? code : errclass, "" };
    }
    pthread_mutex_unlock(&pd_user_error_lock);
    return code;
}

int pd_error_last_code(void)
{
    return MPI_ERR_LASTCODE + pd_user_error_count;
}

bool pd_error_set_text(int code, const char *text)
{
    pthread_mutex_lock(&pd_user_error_lock);
    struct pd_user_error *e = pd_user_error(code);
    if (e != NULL)
        snprintf(e->text, sizeof(e->text), "%s", text);
    pthread_mutex_unlock(&pd_user_error_lock);
    return e != NULL;
}

int pd_error_code_class(int code)
{
    if (pd_predefined_code(code))
        return code;
    pthread_mutex_lock(&pd_user_error_lock);
    struct pd_user_error *e = pd_user_error(code);
    int errclass = e != NULL ? e->errclass : -1;
    pthread_mutex_unlock(&pd_user_error_lock);
    return errclass;
}

bool pd_error_is_user_class(int code)
{
    return pd_error_code_class(code) == code && !pd_predefined_code(code);
}

int pd_error_class_is_valid(int errclass)
{
    return pd_error_code_class(errclass) >= 0;
}

const char *pd_error_class_name(int errclass)
{
    if (pd_predefined_code(errclass))
        return pd_errors[errclass].name;
    return pd_error_class_is_valid(errclass) ? "an added error code"
                                             : "MPI_ERR_UNKNOWN";
}

const char *pd_error_class_text(int errclass)
{
    if (pd_predefined_code(errclass))
        return pd_errors[errclass].text;
    return pd_error_class_is_valid(errclass) ? "" : "unknown error code";
}

void pd_error_text(int code, char *out, size_t len)
{
    if (pd_predefined_code(code)) {
        snprintf(out, len, "%s: %s", pd_errors[code].name,
                 pd_errors[code].text);
        return;
    }
    pthread_mutex_lock(&pd_user_error_lock);
    struct pd_user_error *e = pd_user_error(code);
    if (e != NULL)
        snprintf(out, len, "%s", e->text);
    else
        snprintf(out, len, "unknown error code %d", code);
    pthread_mutex_unlock(&pd_user_error_lock);
}

void pd_errors_reset(void)
{
    pthread_mutex_lock(&pd_user_error_lock);
    free(pd_user_errors);
    pd_user_errors = NULL;
    pd_user_error_count = 0;
    pthread_mutex_unlock(&pd_user_error_lock);
}

static _Noreturn void pd_die(const char *line, int errclass)
{
    fprintf(stderr, "%s\n", line);
    pd_runtime_abort(errclass > 0 ? errclass : 1);
}

static _Thread_local struct pd_fail *pd_raise_into;

void pd_raise_capture(struct pd_fail *into)
{
    pd_raise_into = into;
}

/* A failure of call (where: " on" what it was on; fmt and ap: why)
 * recorded for a request (pd_raise_capture), or written and dealt with
 * by handler: MPI_ERRORS_ARE_FATAL ends the job. True where handler is
 * the program's, which the caller then calls with its object. */
__attribute__((format(printf, 5, 0)))
static bool pd_raise_report(const struct ompi_errhandler_t *handler,
                            const char *call, const char *where,
                            int errclass, const char *fmt, va_list ap)
{
    char detail[768];
    vsnprintf(detail, sizeof(detail), fmt, ap);
    if (pd_raise_into != NULL) {
        if (pd_raise_into->errclass == MPI_SUCCESS)
            pd_fail_set(pd_raise_into, errclass, "%s%s: %s", call, where,
                        detail);
        return false;
    }
    char line[1200];
    snprintf(line, sizeof(line), "pdmpi: rank %d: %s%s: %s: %s",
             pd_rt.world.rank, call, where, pd_error_class_name(errclass),
             detail);
    if (handler == NULL || handler->kind == PD_ERRH_FATAL)
        pd_die(line, errclass);
    pd_log(PD_LOG_INFO, "returning %s", line + strlen("pdmpi: "));
    return handler->kind == PD_ERRH_USER;
}

int pd_raise(struct ompi_communicator_t *comm, const char *call, int errclass,
             const char *fmt, ...)
{
    bool comm_ok = comm != NULL && comm->magic == PD_MAGIC_COMM &&
                   comm->kind != PD_COMM_NULL && comm->errhandler != NULL;
    struct ompi_communicator_t *world = (struct ompi_communicator_t *)MPI_COMM_WORLD;
    const struct ompi_errhandler_t *handler =
        comm_ok ? comm->errhandler : world->errhandler;
    /* Where: a call without a communicator (datatypes, ops) names none;
     * an unnamed one is named by its id. */
    char where[PD_COMM_ID_LEN + MPI_MAX_OBJECT_NAME + 24] = "";
    if (comm_ok && comm->name[0] != '\0')
        snprintf(where, sizeof(where), " on %s", comm->name);
    else if (comm_ok && comm->state != NULL)
        snprintf(where, sizeof(where), " on communicator %s",
                 comm->state->id);
    else if (comm == (struct ompi_communicator_t *)MPI_COMM_NULL)
        snprintf(where, sizeof(where), " on MPI_COMM_NULL");
    else if (comm != NULL)
        snprintf(where, sizeof(where), " on an invalid communicator");

    va_list ap;
    va_start(ap, fmt);
    bool user = pd_raise_report(handler, call, where, errclass, fmt, ap);
    va_end(ap);
    if (user) {
        /* The program's handler sees the communicator and the class; it
         * may change neither what the call returns nor the handle. */
        struct ompi_communicator_t *c = comm_ok ? comm : world;
        int code = errclass;
        handler->comm_fn(&c, &code);
    }
    return errclass;
}

int pd_raise_file(struct ompi_file_t *file, const char *call, int errclass,
                  const char *fmt, ...)
{
    struct ompi_file_t *null = (struct ompi_file_t *)MPI_FILE_NULL;
    bool file_ok = file != NULL && file != null &&
                   file->magic == PD_MAGIC_FILE;
    const struct ompi_errhandler_t *handler = __atomic_load_n(
        file_ok ? &file->errhandler : &null->errhandler, __ATOMIC_ACQUIRE);
    char where[240];
    if (file_ok)
        snprintf(where, sizeof(where), " on file %.200s", file->path);
    else
        snprintf(where, sizeof(where), " on MPI_FILE_NULL");
    va_list ap;
    va_start(ap, fmt);
    bool user = pd_raise_report(handler, call, where, errclass, fmt, ap);
    va_end(ap);
    if (user && handler->file_fn != NULL) {
        struct ompi_file_t *f = file_ok ? file : null;
        int code = errclass;
        handler->file_fn(&f, &code);
    }
    return errclass;
}

int pd_raise_inactive(const char *call)
{
    char line[300];
    int state = pd_runtime_state();
    snprintf(line, sizeof(line), "pdmpi: %s called %s", call,
             state == PD_RT_FINALIZED ? "after MPI_Finalize"
                                      : "before MPI_Init");
    pd_die(line, MPI_ERR_OTHER);
}
