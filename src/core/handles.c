#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/handles.h"
#include "core/objects.h"

#define PD_HANDLE_KIND_OF(h)                                               \
    _Generic((h), MPI_Comm: PD_HANDLE_COMM, MPI_Datatype: PD_HANDLE_TYPE,  \
             MPI_Group: PD_HANDLE_GROUP, MPI_Op: PD_HANDLE_OP,             \
             MPI_Errhandler: PD_HANDLE_ERRH, MPI_Request: PD_HANDLE_REQUEST, \
             MPI_Info: PD_HANDLE_INFO, MPI_Message: PD_HANDLE_MESSAGE,     \
             MPI_File: PD_HANDLE_FILE, default: PD_HANDLE_KINDS)

/* Open MPI's value of every predefined handle (windows, which pdmpi does
 * not convert, come out as PD_HANDLE_KINDS and are skipped). */
static const struct {
    enum pd_handle_kind kind;
    void *handle;
    int value;
} pd_predefined[] = {
#define PD_FORTRAN_HANDLE(name, value) \
    { PD_HANDLE_KIND_OF(name), (void *)(name), value },
#include "core/fortran_handles.h"
#undef PD_FORTRAN_HANDLE
    /* Not in mpif-handles.h; Open MPI's file table starts with it. */
    { PD_HANDLE_FILE, (void *)MPI_FILE_NULL, 0 },
};

/* slots[v] is the handle named v (NULL: none); names given back by freed
 * handles are reused, newest first; predefined names never are. */
struct pd_handle_table {
    void **slots;
    int count, cap;
    int *unused;
    int nunused, unused_cap;
};

static pthread_mutex_t pd_handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pd_handle_table pd_tables[PD_HANDLE_KINDS];
static bool pd_handles_ready;

static int *pd_f_index(enum pd_handle_kind kind, void *handle)
{
    switch (kind) {
    case PD_HANDLE_COMM: return &((struct ompi_communicator_t *)handle)->f_index;
    case PD_HANDLE_TYPE: return &((struct ompi_datatype_t *)handle)->f_index;
    case PD_HANDLE_GROUP: return &((struct ompi_group_t *)handle)->f_index;
    case PD_HANDLE_OP: return &((struct ompi_op_t *)handle)->f_index;
    case PD_HANDLE_ERRH: return &((struct ompi_errhandler_t *)handle)->f_index;
    case PD_HANDLE_REQUEST: return &((struct ompi_request_t *)handle)->f_index;
    case PD_HANDLE_INFO: return &((struct ompi_info_t *)handle)->f_index;
    case PD_HANDLE_MESSAGE: return &((struct ompi_message_t *)handle)->f_index;
    case PD_HANDLE_FILE: return &((struct ompi_file_t *)handle)->f_index;
    default: return NULL;
    }
}

/* Name handle value in t (lock held); false when out of memory. */
static bool pd_table_put(struct pd_handle_table *t, int value, void *handle)
{
    if (value >= t->cap) {
        int cap = t->cap ? t->cap : 128;
        while (cap <= value)
            cap *= 2;
        void **grown = realloc(t->slots, (size_t)cap * sizeof(*grown));
        if (grown == NULL)
            return false;
        for (int i = t->cap; i < cap; i++)
            grown[i] = NULL;
        t->slots = grown;
        t->cap = cap;
    }
    t->slots[value] = handle;
    if (value >= t->count)
        t->count = value + 1;
    return true;
}

static void pd_handles_init(void)
{
    if (pd_handles_ready)
        return;
    for (size_t i = 0; i < sizeof(pd_predefined) / sizeof(pd_predefined[0]);
         i++) {
        enum pd_handle_kind kind = pd_predefined[i].kind;
        if (kind == PD_HANDLE_KINDS)
            continue;
        /* Two names of one type (MPI_LONG_LONG_INT, MPI_LONG_LONG) share
         * a value; the first is kept. */
        int *f_index = pd_f_index(kind, pd_predefined[i].handle);
        if (*f_index == 0 &&
            pd_table_put(&pd_tables[kind], pd_predefined[i].value,
                         pd_predefined[i].handle))
            *f_index = pd_predefined[i].value + 1;
    }
    pd_handles_ready = true;
}

int pd_handle_c2f(enum pd_handle_kind kind, void *handle)
{
    pthread_mutex_lock(&pd_handles_lock);
    pd_handles_init();
    int *f_index = pd_f_index(kind, handle);
    if (*f_index == 0) {
        struct pd_handle_table *t = &pd_tables[kind];
        int value = t->nunused > 0 ? t->unused[t->nunused - 1] : t->count;
        if (pd_table_put(t, value, handle)) {
            if (t->nunused > 0 && t->unused[t->nunused - 1] == value)
                t->nunused--;
            *f_index = value + 1;
        }
    }
    int value = *f_index - 1;
    pthread_mutex_unlock(&pd_handles_lock);
    return value;
}

void *pd_handle_f2c(enum pd_handle_kind kind, int value)
{
    pthread_mutex_lock(&pd_handles_lock);
    pd_handles_init();
    struct pd_handle_table *t = &pd_tables[kind];
    void *handle = value >= 0 && value < t->count ? t->slots[value] : NULL;
    pthread_mutex_unlock(&pd_handles_lock);
    return handle;
}

void pd_handle_forget(enum pd_handle_kind kind, void *handle)
{
    int *f_index = pd_f_index(kind, handle);
    if (__atomic_load_n(f_index, __ATOMIC_RELAXED) == 0)
        return;     /* never converted: the common case costs no lock */
    pthread_mutex_lock(&pd_handles_lock);
    struct pd_handle_table *t = &pd_tables[kind];
    int value = *f_index - 1;
    *f_index = 0;
    if (value >= 0 && value < t->count && t->slots[value] == handle) {
        t->slots[value] = NULL;
        if (t->nunused == t->unused_cap) {
            int cap = t->unused_cap ? 2 * t->unused_cap : 64;
            int *grown = realloc(t->unused, (size_t)cap * sizeof(*grown));
            if (grown == NULL) {    /* the name is lost, not reused */
                pthread_mutex_unlock(&pd_handles_lock);
                return;
            }
            t->unused = grown;
            t->unused_cap = cap;
        }
        t->unused[t->nunused++] = value;
    }
    pthread_mutex_unlock(&pd_handles_lock);
}
