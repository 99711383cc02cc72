/* Buffered sends: MPI_Buffer_attach/detach, MPI_Bsend, MPI_Ibsend.
 *
 * A buffered send returns once its message is copied: the copy goes out
 * as a standard nonblocking send that this file keeps until it
 * completes. The attached buffer bounds what may be outstanding -- each
 * message counts its bytes plus MPI_BSEND_OVERHEAD, and one that does
 * not fit is MPI_ERR_BUFFER, as MPI requires -- but the copies live in
 * memory of their own, not inside it. MPI_Buffer_detach waits until
 * every buffered message has gone. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "service/p2p.h"

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
#pragma weak MPI_Bsend = PMPI_Bsend
#pragma weak MPI_Ibsend = PMPI_Ibsend

struct pd_buffered {
    MPI_Request request;
    void *copy;
    size_t charged;              /* bytes + MPI_BSEND_OVERHEAD */
    struct pd_buffered *next;
};

static pthread_mutex_t pd_bsend_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pd_bsend_buffer;
static size_t pd_bsend_size, pd_bsend_used;
static bool pd_bsend_attached;
static struct pd_buffered *pd_bsend_pending;

/* Forget the buffered sends that have completed (lock held); with wait,
 * wait for all of them. A failed one has no caller left to tell but the
 * log. */
static void pd_bsend_reap(bool wait)
{
    pd_request_poll();
    for (struct pd_buffered **p = &pd_bsend_pending; *p != NULL;) {
        struct pd_buffered *b = *p;
        if (wait)
            pd_request_wait_done(b->request);
        else if (!pd_request_is_done(b->request)) {
            p = &b->next;
            continue;
        }
        struct pd_fail fail;
        if (pd_request_finish(&b->request, MPI_STATUS_IGNORE, &fail) !=
            MPI_SUCCESS)
            pd_raise(NULL, "MPI_Bsend", fail.errclass, "a buffered message "
                     "failed after MPI_Bsend returned: %s", fail.msg);
        pd_bsend_used -= b->charged;
        *p = b->next;
        free(b->copy);
        free(b);
    }
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    static const char call[] = "MPI_Buffer_attach";
    PD_CHECK(pd_check_active(call));
    if (size < 0 || (size > 0 && buffer == NULL))
        return pd_raise(NULL, call, MPI_ERR_BUFFER, "%s",
                        size < 0 ? "size is negative" : "buffer is NULL");
    pthread_mutex_lock(&pd_bsend_lock);
    bool attached = pd_bsend_attached;
    if (!attached) {
        pd_bsend_attached = true;
        pd_bsend_buffer = buffer;
        pd_bsend_size = (size_t)size;
    }
    pthread_mutex_unlock(&pd_bsend_lock);
    if (attached)
        return pd_raise(NULL, call, MPI_ERR_BUFFER, "a buffer is attached "
                        "already (MPI_Buffer_detach it first)");
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    static const char call[] = "MPI_Buffer_detach";
    PD_CHECK(pd_check_active(call));
    if (buffer_addr == NULL || size == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        size == NULL ? "size" : "buffer_addr");
    pthread_mutex_lock(&pd_bsend_lock);
    pd_bsend_reap(true);
    /* The C binding's buffer_addr is a void **. */
    *(void **)buffer_addr = pd_bsend_attached ? pd_bsend_buffer : NULL;
    *size = pd_bsend_attached ? (int)pd_bsend_size : 0;
    pd_bsend_attached = false;
    pd_bsend_buffer = NULL;
    pd_bsend_size = 0;
    pthread_mutex_unlock(&pd_bsend_lock);
    return MPI_SUCCESS;
}

int pd_api_bsend(const char *call, const void *buf, int count,
                    MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_send(comm, call, buf, count, type, dest, tag));
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t bytes = (size_t)count * pd_type_packed(type);
    size_t charged = bytes + MPI_BSEND_OVERHEAD;
    pthread_mutex_lock(&pd_bsend_lock);
    pd_bsend_reap(false);
    size_t left = pd_bsend_size - pd_bsend_used;
    bool fits = pd_bsend_attached && charged <= left;
    struct pd_buffered *b = fits ? calloc(1, sizeof(*b)) : NULL;
    void *copy = b != NULL ? malloc(bytes ? bytes : 1) : NULL;
    if (copy == NULL) {
        pthread_mutex_unlock(&pd_bsend_lock);
        free(b);
        if (!fits)
            return pd_raise(comm, call, MPI_ERR_BUFFER, "%s", !pd_bsend_attached
                                ? "no buffer is attached (MPI_Buffer_attach)"
                                : "the attached buffer has too little room left");
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    }
    /* The copy is packed: a non-contiguous type's data, end to end. */
    pd_type_pack(type, buf, 0, bytes, copy);
    struct pd_fail fail;
    MPI_Comm on = pd_p2p_on(comm, &dest, NULL);
    if (pd_p2p_send(on, copy, bytes, dest, tag, &b->request, call,
                    &fail) != MPI_SUCCESS) {
        pthread_mutex_unlock(&pd_bsend_lock);
        free(copy);
        free(b);
        return pd_raise_fail(comm, call, &fail);
    }
    b->copy = copy;
    b->charged = charged;
    b->next = pd_bsend_pending;
    pd_bsend_pending = b;
    pd_bsend_used += charged;
    pthread_mutex_unlock(&pd_bsend_lock);
    return MPI_SUCCESS;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm)
{
    return pd_api_bsend("MPI_Bsend", buf, count, datatype, dest, tag, comm);
}

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request *request)
{
    static const char call[] = "MPI_Ibsend";
    if (request == NULL)
        return pd_raise(comm, call, MPI_ERR_REQUEST, "request is NULL");
    PD_CHECK(pd_api_bsend(call, buf, count, datatype, dest, tag, comm));
    /* Born complete: the message is buffered. */
    if ((*request = pd_request_new_done(comm, call)) == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}
