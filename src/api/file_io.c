/*
 * Reading and writing files (api/file.h): at an explicit offset or the
 * individual file pointer, blocking, collective (each rank's part is its
 * own access: the ranks need not meet), nonblocking (done by the time
 * the call returns, its request complete) and split collective. A buffer
 * of a non-contiguous datatype is packed or unpacked through one scratch
 * buffer; in atomic mode each access locks the bytes it covers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/file.h"
#include "core/datatype.h"
#include "route/route.h"
#include "service/request.h"

#pragma weak MPI_File_read_at = PMPI_File_read_at
#pragma weak MPI_File_write_at = PMPI_File_write_at
#pragma weak MPI_File_read_at_all = PMPI_File_read_at_all
#pragma weak MPI_File_write_at_all = PMPI_File_write_at_all
#pragma weak MPI_File_read = PMPI_File_read
#pragma weak MPI_File_write = PMPI_File_write
#pragma weak MPI_File_read_all = PMPI_File_read_all
#pragma weak MPI_File_write_all = PMPI_File_write_all
#pragma weak MPI_File_iread_at = PMPI_File_iread_at
#pragma weak MPI_File_iwrite_at = PMPI_File_iwrite_at
#pragma weak MPI_File_iread_at_all = PMPI_File_iread_at_all
#pragma weak MPI_File_iwrite_at_all = PMPI_File_iwrite_at_all
#pragma weak MPI_File_iread = PMPI_File_iread
#pragma weak MPI_File_iwrite = PMPI_File_iwrite
#pragma weak MPI_File_iread_all = PMPI_File_iread_all
#pragma weak MPI_File_iwrite_all = PMPI_File_iwrite_all
#pragma weak MPI_File_read_at_all_begin = PMPI_File_read_at_all_begin
#pragma weak MPI_File_read_at_all_end = PMPI_File_read_at_all_end
#pragma weak MPI_File_write_at_all_begin = PMPI_File_write_at_all_begin
#pragma weak MPI_File_write_at_all_end = PMPI_File_write_at_all_end
#pragma weak MPI_File_read_all_begin = PMPI_File_read_all_begin
#pragma weak MPI_File_read_all_end = PMPI_File_read_all_end
#pragma weak MPI_File_write_all_begin = PMPI_File_write_all_begin
#pragma weak MPI_File_write_all_end = PMPI_File_write_all_end

/* NULL where fh and a may go ahead, else why not (class in *errclass). */
static const char *pd_access_refused(MPI_File fh, const struct pd_access *a,
                                     int *errclass)
{
    *errclass = MPI_ERR_COUNT;
    if (a->count < 0)
        return "count is negative";
    *errclass = MPI_ERR_TYPE;
    if (!pd_type_is_valid(a->type))
        return "datatype is not a valid datatype";
    if (!a->type->committed)
        return "datatype is not committed";
    if (a->type->size % fh->etype->size != 0)
        return "datatype is not made of whole etypes of the view";
    *errclass = MPI_ERR_BUFFER;
    if (a->buf == NULL && a->count > 0 && a->type->contiguous &&
        a->type->size > 0)
        return "buf is NULL";
    *errclass = a->write ? MPI_ERR_READ_ONLY : MPI_ERR_ACCESS;
    if (a->write && (fh->amode & MPI_MODE_RDONLY) != 0)
        return "the file was opened MPI_MODE_RDONLY";
    if (!a->write && (fh->amode & MPI_MODE_WRONLY) != 0)
        return "the file was opened MPI_MODE_WRONLY";
    *errclass = MPI_ERR_UNSUPPORTED_OPERATION;
    if (!a->at_pointer && !a->shared &&
        (fh->amode & MPI_MODE_SEQUENTIAL) != 0)
        return "explicit offsets are erroneous on a file opened "
               "MPI_MODE_SEQUENTIAL";
    if (a->count > 0 && pd_route_is_device(a->buf))
        return "buf is device memory; files are read and written from "
               "host memory";
    *errclass = MPI_ERR_ARG;
    if (!a->at_pointer && a->offset < 0)
        return "offset is negative";
    return NULL;
}

int pd_file_lock(int fd, short type, off_t at, size_t n)
{
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
                        .l_start = at, .l_len = (off_t)n };
    while (fcntl(fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* n bytes between data and the file at byte at: the bytes moved in
 * *done (a read stops at the end of the file); errno or 0. */
static int pd_file_move(int fd, bool write, char *data, size_t n, off_t at,
                        size_t *done)
{
    *done = 0;
    while (*done < n) {
        ssize_t k = write ? pwrite(fd, data + *done, n - *done,
                                   at + (off_t)*done)
                          : pread(fd, data + *done, n - *done,
                                  at + (off_t)*done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        if (k == 0)
            break;
        *done += (size_t)k;
    }
    return 0;
}

int pd_file_access_check(MPI_File fh, const struct pd_access *a)
{
    PD_CHECK(pd_check_file(fh, a->call));
    int rc;
    const char *refused = pd_access_refused(fh, a, &rc);
    if (refused != NULL)
        return pd_raise_file(fh, a->call, rc, "%s", refused);
    return MPI_SUCCESS;
}

int pd_file_access(MPI_File fh, const struct pd_access *a,
                   MPI_Status *status)
{
    PD_CHECK(pd_file_access_check(fh, a));
    size_t bytes = (size_t)a->count * a->type->size;
    MPI_Offset etypes = a->at_pointer ? fh->pointer : a->offset;
    off_t at = (off_t)(fh->disp + etypes * (MPI_Offset)fh->etype->size);
    char *data = a->buf, *scratch = NULL;
    if (!a->type->contiguous && bytes > 0) {
        if ((scratch = malloc(bytes)) == NULL)
            return pd_raise_file(fh, a->call, MPI_ERR_NO_MEM, "out of memory "
                                 "(a packed copy of %zu bytes)", bytes);
        if (a->write)
            pd_type_pack(a->type, a->buf, 0, bytes, scratch);
        data = scratch;
    }
    size_t done = 0;
    short lock = a->write ? F_WRLCK : F_RDLCK;
    int err = fh->atomic && bytes > 0 ? pd_file_lock(fh->fd, lock, at, bytes)
                                      : 0;
    if (err == 0) {
        err = pd_file_move(fh->fd, a->write, data, bytes, at, &done);
        if (fh->atomic && bytes > 0)
            pd_file_lock(fh->fd, F_UNLCK, at, bytes);
    }
    if (scratch != NULL && !a->write && done > 0)
        pd_type_unpack(a->type, a->buf, 0, done, scratch);
    free(scratch);
    if (err != 0)
        return pd_raise_file(fh, a->call, pd_file_errno_class(err),
                             "%s %zu bytes at byte %lld: %s",
                             a->write ? "writing" : "reading", bytes,
                             (long long)at, strerror(err));
    if (a->at_pointer)
        fh->pointer += (MPI_Offset)(done / fh->etype->size);
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = MPI_ANY_SOURCE;
        status->MPI_TAG = MPI_ANY_TAG;
        status->_ucount = done;
        status->_cancelled = 0;
    }
    return MPI_SUCCESS;
}

int pd_file_access_request(MPI_File fh, const struct pd_access *a,
                           MPI_Request *request)
{
    PD_CHECK(pd_check_file(fh, a->call));
    if (request == NULL)
        return pd_raise_file(fh, a->call, MPI_ERR_REQUEST, "request is "
                             "NULL");
    MPI_Status status;
    PD_CHECK(pd_file_access(fh, a, &status));
    struct ompi_request_t *req = pd_request_new(fh->comm, a->call);
    if (req == NULL)
        return pd_raise_file(fh, a->call, MPI_ERR_NO_MEM, "out of memory");
    req->state->status = status;
    req->state->has_status = true;
    pd_request_complete(req->state);
    *request = req;
    return MPI_SUCCESS;
}

/* One split collective at a time on a file. */
int pd_file_access_begin(MPI_File fh, const struct pd_access *a)
{
    PD_CHECK(pd_check_file(fh, a->call));
    if (fh->split_call != NULL)
        return pd_raise_file(fh, a->call, MPI_ERR_OTHER, "%s is active on "
                             "this file: one split collective at a time",
                             fh->split_call);
    fh->split_rc = pd_file_access(fh, a, &fh->split_status);
    fh->split_call = a->call;
    return fh->split_rc;
}

int pd_file_access_end(MPI_File fh, const char *call, const char *begin,
                       MPI_Status *status)
{
    PD_CHECK(pd_check_file(fh, call));
    if (fh->split_call == NULL || strcmp(fh->split_call, begin) != 0)
        return pd_raise_file(fh, call, MPI_ERR_OTHER, "no %s is active on "
                             "this file", begin);
    fh->split_call = NULL;
    if (status != MPI_STATUS_IGNORE && fh->split_rc == MPI_SUCCESS)
        *status = fh->split_status;
    return fh->split_rc;
}

/* The access of the calling entry point (its buf, count and datatype):
 * at an offset, or at the file pointer (PD_AT_POINTER). */
#define PD_AT_POINTER true, 0
#define PD_AT(offset) false, (offset)
#define PD_ACCESS(name, where, wr) PD_ACCESS_(name, where, wr)
#define PD_ACCESS_(name, pointer, off, wr)                                  \
    (&(struct pd_access){ .call = name, .at_pointer = (pointer),           \
                          .offset = (off), .buf = (void *)buf,             \
                          .count = count, .type = datatype, .write = (wr) })

int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_read_at", PD_AT(offset), false), status);
}

int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf,
                       int count, MPI_Datatype datatype, MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_write_at", PD_AT(offset), true), status);
}

int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf,
                          int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_read_at_all", PD_AT(offset), false), status);
}

int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
                           int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_write_at_all", PD_AT(offset), true), status);
}

int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                   MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_read", PD_AT_POINTER, false), status);
}

int PMPI_File_write(MPI_File fh, const void *buf, int count,
                    MPI_Datatype datatype, MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_write", PD_AT_POINTER, true), status);
}

int PMPI_File_read_all(MPI_File fh, void *buf, int count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_read_all", PD_AT_POINTER, false), status);
}

int PMPI_File_write_all(MPI_File fh, const void *buf, int count,
                        MPI_Datatype datatype, MPI_Status *status)
{
    return pd_file_access(
        fh, PD_ACCESS("MPI_File_write_all", PD_AT_POINTER, true), status);
}

int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                       MPI_Datatype datatype, MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iread_at", PD_AT(offset), false), request);
}

int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf,
                        int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iwrite_at", PD_AT(offset), true), request);
}

int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf,
                           int count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iread_at_all", PD_AT(offset), false), request);
}

int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
                            int count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iwrite_at_all", PD_AT(offset), true), request);
}

int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                    MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iread", PD_AT_POINTER, false), request);
}

int PMPI_File_iwrite(MPI_File fh, const void *buf, int count,
                     MPI_Datatype datatype, MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iwrite", PD_AT_POINTER, true), request);
}

int PMPI_File_iread_all(MPI_File fh, void *buf, int count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iread_all", PD_AT_POINTER, false), request);
}

int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count,
                         MPI_Datatype datatype, MPI_Request *request)
{
    return pd_file_access_request(
        fh, PD_ACCESS("MPI_File_iwrite_all", PD_AT_POINTER, true), request);
}

int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf,
                                int count, MPI_Datatype datatype)
{
    return pd_file_access_begin(
        fh, PD_ACCESS("MPI_File_read_at_all_begin", PD_AT(offset), false));
}

int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return pd_file_access_end(fh, "MPI_File_read_at_all_end",
                              "MPI_File_read_at_all_begin", status);
}

int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset,
                                 const void *buf, int count,
                                 MPI_Datatype datatype)
{
    return pd_file_access_begin(
        fh, PD_ACCESS("MPI_File_write_at_all_begin", PD_AT(offset), true));
}

int PMPI_File_write_at_all_end(MPI_File fh, const void *buf,
                               MPI_Status *status)
{
    (void)buf;
    return pd_file_access_end(fh, "MPI_File_write_at_all_end",
                              "MPI_File_write_at_all_begin", status);
}

int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count,
                             MPI_Datatype datatype)
{
    return pd_file_access_begin(
        fh, PD_ACCESS("MPI_File_read_all_begin", PD_AT_POINTER, false));
}

int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return pd_file_access_end(fh, "MPI_File_read_all_end",
                              "MPI_File_read_all_begin", status);
}

int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count,
                              MPI_Datatype datatype)
{
    return pd_file_access_begin(
        fh, PD_ACCESS("MPI_File_write_all_begin", PD_AT_POINTER, true));
}

int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return pd_file_access_end(fh, "MPI_File_write_all_end",
                              "MPI_File_write_all_begin", status);
}
