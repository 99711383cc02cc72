#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/attr.h"
#include "core/error.h"
#include "core/runtime.h"

/* User keyvals start above every predefined attribute key of mpi.h. */
#define PD_FIRST_USER_KEYVAL 64

/* The callbacks of a communicator's or a datatype's keyval have the same
 * shape but for the handle: kept as the communicator's, called through
 * the kind's own type. */
struct pd_keyval {
    enum pd_attr_kind kind;
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    bool live;
};

struct pd_attr {
    int keyval;
    void *value;
    struct pd_attr *next;
};

/* Keyvals are never reused, so a stale one cannot alias a new one. */
static pthread_mutex_t pd_keyval_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pd_keyval *pd_keyvals;
static int pd_keyval_count;

int pd_keyval_create(enum pd_attr_kind kind,
                     MPI_Comm_copy_attr_function *copy,
                     MPI_Comm_delete_attr_function *del, void *extra,
                     int *keyval)
{
    pthread_mutex_lock(&pd_keyval_lock);
    struct pd_keyval *grown =
        realloc(pd_keyvals, (size_t)(pd_keyval_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        pthread_mutex_unlock(&pd_keyval_lock);
        return -1;
    }
    pd_keyvals = grown;
    pd_keyvals[pd_keyval_count] =
        (struct pd_keyval){ kind, copy, del, extra, true };
    *keyval = PD_FIRST_USER_KEYVAL + pd_keyval_count++;
    pthread_mutex_unlock(&pd_keyval_lock);
    return 0;
}

/* A copy of keyval's entry (callbacks stay valid after MPI_Comm_free_keyval
 * for attributes still set, as the standard requires). */
static bool pd_keyval_lookup(int keyval, struct pd_keyval *out)
{
    bool ok = false;
    pthread_mutex_lock(&pd_keyval_lock);
    int i = keyval - PD_FIRST_USER_KEYVAL;
    if (i >= 0 && i < pd_keyval_count) {
        *out = pd_keyvals[i];
        ok = true;
    }
    pthread_mutex_unlock(&pd_keyval_lock);
    return ok;
}

bool pd_keyval_is_user(enum pd_attr_kind kind, int keyval)
{
    struct pd_keyval kv;
    return pd_keyval_lookup(keyval, &kv) && kv.live && kv.kind == kind;
}

bool pd_keyval_is_known(enum pd_attr_kind kind, int keyval)
{
    struct pd_keyval kv;
    return pd_keyval_lookup(keyval, &kv) && kv.kind == kind;
}

bool pd_keyval_is_predefined(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL:
    case MPI_APPNUM: case MPI_LASTUSEDCODE: case MPI_UNIVERSE_SIZE:
        return true;
    default:
        return false;
    }
}

int pd_keyval_free(enum pd_attr_kind kind, int keyval)
{
    int rc = -1;
    pthread_mutex_lock(&pd_keyval_lock);
    int i = keyval - PD_FIRST_USER_KEYVAL;
    if (i >= 0 && i < pd_keyval_count && pd_keyvals[i].live &&
        pd_keyvals[i].kind == kind) {
        pd_keyvals[i].live = false;
        rc = 0;
    }
    pthread_mutex_unlock(&pd_keyval_lock);
    return rc;
}

static struct pd_attr **pd_attr_find(struct pd_attr **list, int keyval)
{
    struct pd_attr **p = list;
    while (*p != NULL && (*p)->keyval != keyval)
        p = &(*p)->next;
    return p;
}

/* The attributes of handle (a communicator or a datatype, by kind). */
static struct pd_attr **pd_attr_list(enum pd_attr_kind kind, void *handle)
{
    if (kind == PD_ATTR_TYPE)
        return &((struct ompi_datatype_t *)handle)->attrs;
    return &((struct ompi_communicator_t *)handle)->state->attrs;
}

static int pd_run_delete(enum pd_attr_kind kind, void *handle, int keyval,
                         void *value, struct pd_fail *fail)
{
    struct pd_keyval kv;
    if (!pd_keyval_lookup(keyval, &kv) || kv.del == NULL)
        return MPI_SUCCESS;
    int rc = kind == PD_ATTR_TYPE
        ? ((MPI_Type_delete_attr_function *)(void (*)(void))kv.del)(
              handle, keyval, value, kv.extra)
        : kv.del(handle, keyval, value, kv.extra);
    if (rc != MPI_SUCCESS && fail != NULL)
        pd_fail_set(fail, rc, "the delete callback of keyval %d returned %d",
                    keyval, rc);
    return rc;
}

int pd_attr_set(enum pd_attr_kind kind, void *handle, int keyval,
                void *value, struct pd_fail *fail)
{
    struct pd_attr **list = pd_attr_list(kind, handle);
    struct pd_attr **p = pd_attr_find(list, keyval);
    if (*p != NULL) {
        /* Replacing a value deletes the old one first. The callback may
         * set or delete attributes of this handle, this one included:
         * look again after it. */
        int rc = pd_run_delete(kind, handle, keyval, (*p)->value, fail);
        if (rc != MPI_SUCCESS)
            return rc;
        p = pd_attr_find(list, keyval);
        if (*p != NULL) {
            (*p)->value = value;
            return MPI_SUCCESS;
        }
    }
    struct pd_attr *a = malloc(sizeof(*a));
    if (a == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    *a = (struct pd_attr){ keyval, value, NULL };
    *p = a;
    return MPI_SUCCESS;
}

/* The predefined attributes: pointers to ints, as the C binding says. */
static int pd_tag_ub = PD_TAG_UB;
static int pd_host = MPI_PROC_NULL;
static int pd_io = MPI_ANY_SOURCE;
static int pd_wtime_is_global = 0;
static int pd_appnum = 0;
static int pd_lastusedcode = MPI_ERR_LASTCODE;
static int pd_universe_size;

void pd_attr_get(enum pd_attr_kind kind, void *handle, int keyval,
                 void **value, int *found)
{
    int *predefined = NULL;
    switch (keyval) {
    case MPI_TAG_UB: predefined = &pd_tag_ub; break;
    case MPI_HOST: predefined = &pd_host; break;
    case MPI_IO: predefined = &pd_io; break;
    case MPI_WTIME_IS_GLOBAL: predefined = &pd_wtime_is_global; break;
    case MPI_APPNUM: predefined = &pd_appnum; break;
    case MPI_LASTUSEDCODE:
        pd_lastusedcode = pd_error_last_code();
        predefined = &pd_lastusedcode;
        break;
    case MPI_UNIVERSE_SIZE:
        pd_universe_size = pd_rt.world.size;
        predefined = &pd_universe_size;
        break;
    default: break;
    }
    if (predefined != NULL && kind == PD_ATTR_COMM) {
        *value = predefined;
        *found = 1;
        return;
    }
    struct pd_attr *a = *pd_attr_find(pd_attr_list(kind, handle), keyval);
    *found = a != NULL;
    if (a != NULL)
        *value = a->value;
}

int pd_attr_delete(enum pd_attr_kind kind, void *handle, int keyval,
                   struct pd_fail *fail)
{
    struct pd_attr **list = pd_attr_list(kind, handle);
    struct pd_attr **p = pd_attr_find(list, keyval);
    if (*p == NULL) {
        pd_fail_set(fail, MPI_ERR_KEYVAL, "keyval %d has no attribute on "
                    "this %s", keyval,
                    kind == PD_ATTR_TYPE ? "datatype" : "communicator");
        return fail->errclass;
    }
    /* The attribute stays while its callback runs (a failing callback
     * keeps it), and the callback may delete others of this handle, the
     * one before it in the list too: find it again after. */
    int rc = pd_run_delete(kind, handle, keyval, (*p)->value, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    p = pd_attr_find(list, keyval);
    if (*p != NULL) {
        struct pd_attr *a = *p;
        *p = a->next;
        free(a);
    }
    return MPI_SUCCESS;
}

int pd_attr_copy_all(enum pd_attr_kind kind, void *handle, void *dst,
                     struct pd_fail *fail)
{
    for (struct pd_attr *a = *pd_attr_list(kind, handle); a != NULL;
         a = a->next) {
        struct pd_keyval kv;
        if (!pd_keyval_lookup(a->keyval, &kv) || kv.copy == NULL)
            continue;
        void *copied = NULL;
        int keep = 0;
        int rc = kind == PD_ATTR_TYPE
            ? ((MPI_Type_copy_attr_function *)(void (*)(void))kv.copy)(
                  handle, a->keyval, kv.extra, a->value, &copied, &keep)
            : kv.copy(handle, a->keyval, kv.extra, a->value, &copied, &keep);
        if (rc != MPI_SUCCESS) {
            pd_fail_set(fail, rc, "the copy callback of keyval %d returned %d",
                        a->keyval, rc);
            return -1;
        }
        if (keep &&
            pd_attr_set(kind, dst, a->keyval, copied, fail) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

int pd_attr_delete_all(enum pd_attr_kind kind, void *handle)
{
    if (kind == PD_ATTR_COMM &&
        ((struct ompi_communicator_t *)handle)->state == NULL)
        return 0;
    struct pd_attr **list = pd_attr_list(kind, handle);
    /* The newest first: MPI_Finalize must delete MPI_COMM_SELF's in the
     * reverse of the order they were set, and callbacks that free what
     * earlier ones made expect that order everywhere. Taken off the
     * communicator first, so a callback may touch its attributes. */
    struct pd_attr *newest_first = NULL;
    while (*list != NULL) {
        struct pd_attr *a = *list;
        *list = a->next;
        a->next = newest_first;
        newest_first = a;
    }
    int result = 0;
    while (newest_first != NULL) {
        struct pd_attr *a = newest_first;
        newest_first = a->next;
        if (pd_run_delete(kind, handle, a->keyval, a->value, NULL) !=
            MPI_SUCCESS)
            result = -1;
        free(a);
    }
    return result;
}
