/*
 * The shared file pointer (api/file.h): one offset, in etypes of the
 * view, that every rank of a file moves. It lives in a companion file
 * beside the file, which the first rank makes and every rank opens
 * before it is unlinked, so nothing is left behind however the job ends;
 * each use locks its bytes (fcntl), which serves ranks on one host and
 * on hosts that share the file system alike. The ordered calls take one
 * span for all the ranks at once and divide it in rank order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/file.h"

#pragma weak MPI_File_read_shared = PMPI_File_read_shared
#pragma weak MPI_File_write_shared = PMPI_File_write_shared
#pragma weak MPI_File_iread_shared = PMPI_File_iread_shared
#pragma weak MPI_File_iwrite_shared = PMPI_File_iwrite_shared
#pragma weak MPI_File_read_ordered = PMPI_File_read_ordered
#pragma weak MPI_File_write_ordered = PMPI_File_write_ordered
#pragma weak MPI_File_read_ordered_begin = PMPI_File_read_ordered_begin
#pragma weak MPI_File_read_ordered_end = PMPI_File_read_ordered_end
#pragma weak MPI_File_write_ordered_begin = PMPI_File_write_ordered_begin
#pragma weak MPI_File_write_ordered_end = PMPI_File_write_ordered_end
#pragma weak MPI_File_seek_shared = PMPI_File_seek_shared
#pragma weak MPI_File_get_position_shared = PMPI_File_get_position_shared

/* The companion's name: beside path, hidden, unique (mkostemp). */
static void pd_shared_template(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    int dir = slash != NULL ? (int)(slash - path) + 1 : 0;
    snprintf(out, len, "%.*s.pdmpi-shared-pointer.XXXXXX", dir, path);
}

/* Lock (F_WRLCK, F_RDLCK) or unlock (F_UNLCK) the pointer's bytes. */
static int pd_shared_lock(int fd, short type)
{
    return pd_file_lock(fd, type, 0, sizeof(int64_t));
}

static int pd_shared_read(int fd, int64_t *at)
{
    *at = 0;                        /* a file not written yet: 0 */
    ssize_t n = pread(fd, at, sizeof(*at), 0);
    return n < 0 ? errno : 0;
}

static int pd_shared_write(int fd, int64_t at)
{
    ssize_t n = pwrite(fd, &at, sizeof(at), 0);
    return n == (ssize_t)sizeof(at) ? 0 : n < 0 ? errno : EIO;
}

void pd_file_shared_open(MPI_File fh, MPI_Offset at)
{
    int rank, err = 0;
    PMPI_Comm_rank(fh->comm, &rank);
    char name[4096 + 64];
    pd_shared_template(fh->path, name, sizeof(name));
    fh->shared_fd = -1;
    if (rank == 0) {
        if ((fh->shared_fd = mkostemp(name, O_CLOEXEC)) < 0)
            err = errno;
        else
            err = pd_shared_write(fh->shared_fd, (int64_t)at);
    }
    PMPI_Bcast(&err, 1, MPI_INT, 0, fh->comm);
    if (err == 0) {
        PMPI_Bcast(name, (int)sizeof(name), MPI_CHAR, 0, fh->comm);
        if (rank != 0 && (fh->shared_fd = open(name, O_RDWR | O_CLOEXEC)) < 0)
            err = errno;
    }
    int any;
    PMPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, fh->comm);
    /* Every rank has it open (or none needs it): no name is left. */
    if (rank == 0 && fh->shared_fd >= 0)
        unlink(name);
    if (any != 0 && fh->shared_fd >= 0) {
        close(fh->shared_fd);
        fh->shared_fd = -1;
    }
    fh->shared_err = any;
}

void pd_file_shared_close(MPI_File fh)
{
    if (fh->shared_fd >= 0)
        close(fh->shared_fd);
    fh->shared_fd = -1;
}

int pd_file_shared_reset(MPI_File fh)
{
    int rank;
    PMPI_Comm_rank(fh->comm, &rank);
    return rank == 0 && fh->shared_fd >= 0
               ? pd_shared_write(fh->shared_fd, 0) : 0;
}

/* MPI_SUCCESS where fh has a shared file pointer, else raised. */
static int pd_shared_usable(MPI_File fh, const char *call)
{
    PD_CHECK(pd_check_file(fh, call));
    if (fh->shared_fd < 0)
        return pd_raise_file(fh, call, pd_file_errno_class(fh->shared_err),
                             "the shared file pointer could not be made "
                             "beside the file when it was opened: %s",
                             strerror(fh->shared_err));
    return MPI_SUCCESS;
}

/* The pointer in *at, then moved by n etypes (n 0: only read). */
static int pd_shared_take(MPI_File fh, const char *call, MPI_Offset n,
                          MPI_Offset *at)
{
    int64_t now;
    int err = pd_shared_lock(fh->shared_fd, n != 0 ? F_WRLCK : F_RDLCK);
    if (err == 0) {
        err = pd_shared_read(fh->shared_fd, &now);
        if (err == 0 && n != 0)
            err = pd_shared_write(fh->shared_fd, now + (int64_t)n);
        pd_shared_lock(fh->shared_fd, F_UNLCK);
    }
    if (err != 0)
        return pd_raise_file(fh, call, pd_file_errno_class(err), "the shared "
                             "file pointer: %s", strerror(err));
    *at = (MPI_Offset)now;
    return MPI_SUCCESS;
}

/* Etypes of the view that a moves. */
static MPI_Offset pd_shared_span(MPI_File fh, const struct pd_access *a)
{
    return (MPI_Offset)((size_t)a->count * a->type->size / fh->etype->size);
}

/* a at the shared pointer, which moves past it first. */
static int pd_shared_access(MPI_File fh, struct pd_access *a,
                            MPI_Status *status, MPI_Request *request)
{
    PD_CHECK(pd_shared_usable(fh, a->call));
    PD_CHECK(pd_file_access_check(fh, a));
    PD_CHECK(pd_shared_take(fh, a->call, pd_shared_span(fh, a), &a->offset));
    return request != NULL ? pd_file_access_request(fh, a, request)
                           : pd_file_access(fh, a, status);
}

/* The ordered calls: every rank's span in rank order from where the
 * pointer was, which moves past them all (collective). */
static int pd_ordered_offset(MPI_File fh, struct pd_access *a)
{
    PD_CHECK(pd_shared_usable(fh, a->call));
    int rank, rc = pd_file_access_check(fh, a);
    PMPI_Comm_rank(fh->comm, &rank);
    long long mine = rc == MPI_SUCCESS ? (long long)pd_shared_span(fh, a) : 0,
              before = 0, total = 0;
    int bad = rc != MPI_SUCCESS, any;
    PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, fh->comm);
    if (any)
        return rc != MPI_SUCCESS ? rc
               : pd_raise_file(fh, a->call, MPI_ERR_OTHER, "another rank's "
                               "part was refused; see its message");
    PMPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, fh->comm);
    PMPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, fh->comm);
    MPI_Offset base = 0;
    int err = rank == 0 ? pd_shared_take(fh, a->call, total, &base) : 0;
    long long start[2] = { (long long)base, err };
    PMPI_Bcast(start, 2, MPI_LONG_LONG, 0, fh->comm);
    if (start[1] != 0)
        return rank == 0 ? err
               : pd_raise_file(fh, a->call, (int)start[1], "the first rank "
                               "could not move the shared file pointer");
    a->offset = (MPI_Offset)start[0] + (rank == 0 ? 0 : before);
    return MPI_SUCCESS;
}

static int pd_ordered(MPI_File fh, struct pd_access *a, MPI_Status *status)
{
    PD_CHECK(pd_ordered_offset(fh, a));
    return pd_file_access(fh, a, status);
}

static int pd_ordered_begin(MPI_File fh, struct pd_access *a)
{
    PD_CHECK(pd_ordered_offset(fh, a));
    return pd_file_access_begin(fh, a);
}

#define PD_SHARED(name, wr)                                                 \
    (&(struct pd_access){ .call = name, .shared = true, .buf = (void *)buf, \
                          .count = count, .type = datatype, .write = (wr) })

int PMPI_File_read_shared(MPI_File fh, void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return pd_shared_access(fh, PD_SHARED("MPI_File_read_shared", false),
                            status, NULL);
}

int PMPI_File_write_shared(MPI_File fh, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    return pd_shared_access(fh, PD_SHARED("MPI_File_write_shared", true),
                            status, NULL);
}

int PMPI_File_iread_shared(MPI_File fh, void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    if (request == NULL)
        return pd_raise_file(fh, "MPI_File_iread_shared", MPI_ERR_REQUEST,
                             "request is NULL");
    return pd_shared_access(fh, PD_SHARED("MPI_File_iread_shared", false),
                            MPI_STATUS_IGNORE, request);
}

int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count,
                            MPI_Datatype datatype, MPI_Request *request)
{
    if (request == NULL)
        return pd_raise_file(fh, "MPI_File_iwrite_shared", MPI_ERR_REQUEST,
                             "request is NULL");
    return pd_shared_access(fh, PD_SHARED("MPI_File_iwrite_shared", true),
                            MPI_STATUS_IGNORE, request);
}

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    return pd_ordered(fh, PD_SHARED("MPI_File_read_ordered", false), status);
}

int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count,
                            MPI_Datatype datatype, MPI_Status *status)
{
    return pd_ordered(fh, PD_SHARED("MPI_File_write_ordered", true), status);
}

int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count,
                                 MPI_Datatype datatype)
{
    return pd_ordered_begin(fh,
                            PD_SHARED("MPI_File_read_ordered_begin", false));
}

int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return pd_file_access_end(fh, "MPI_File_read_ordered_end",
                              "MPI_File_read_ordered_begin", status);
}

int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
                                  MPI_Datatype datatype)
{
    return pd_ordered_begin(fh,
                            PD_SHARED("MPI_File_write_ordered_begin", true));
}

int PMPI_File_write_ordered_end(MPI_File fh, const void *buf,
                                MPI_Status *status)
{
    (void)buf;
    return pd_file_access_end(fh, "MPI_File_write_ordered_end",
                              "MPI_File_write_ordered_begin", status);
}

/* The first rank's part of MPI_File_seek_shared: the pointer set; an
 * error class and why in mine where it cannot be. */
static int pd_shared_seek(MPI_File fh, MPI_Offset offset, int whence,
                          char *mine, size_t len)
{
    int err = pd_shared_lock(fh->shared_fd, F_WRLCK);
    if (err != 0) {
        snprintf(mine, len, "the shared file pointer: %s", strerror(err));
        return pd_file_errno_class(err);
    }
    int64_t now = 0;
    MPI_Offset from = 0;
    struct stat st;
    if (whence == MPI_SEEK_CUR && (err = pd_shared_read(fh->shared_fd,
                                                        &now)) == 0)
        from = (MPI_Offset)now;
    if (whence == MPI_SEEK_END && (err = fstat(fh->fd, &st) != 0 ? errno
                                                                : 0) == 0) {
        /* The end in etypes of the view, a partial one counted whole. */
        MPI_Offset e = (MPI_Offset)fh->etype->size,
                   past = (MPI_Offset)st.st_size - fh->disp;
        from = past > 0 ? (past + e - 1) / e : 0;
    }
    int rc = MPI_SUCCESS;
    if (err == 0 && from + offset < 0) {
        rc = MPI_ERR_ARG;
        snprintf(mine, len, "the position would be negative (%lld)",
                 (long long)(from + offset));
    } else if (err == 0) {
        err = pd_shared_write(fh->shared_fd, (int64_t)(from + offset));
    }
    pd_shared_lock(fh->shared_fd, F_UNLCK);
    if (err != 0) {
        rc = pd_file_errno_class(err);
        snprintf(mine, len, "the shared file pointer: %s", strerror(err));
    }
    return rc;
}

/* Collective: every rank passes the same offset and whence. */
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char call[] = "MPI_File_seek_shared";
    PD_CHECK(pd_shared_usable(fh, call));
    if (!pd_file_alike(fh->comm, (long long[]){ offset, whence }, 2))
        return pd_raise_file(fh, call, MPI_ERR_ARG, "the ranks passed "
                             "different offsets or whence");
    int rank, rc = MPI_SUCCESS, who;
    PMPI_Comm_rank(fh->comm, &rank);
    char mine[200] = "";
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR &&
        whence != MPI_SEEK_END) {
        rc = MPI_ERR_ARG;
        snprintf(mine, sizeof(mine), "whence %d is none of MPI_SEEK_SET, "
                 "MPI_SEEK_CUR, MPI_SEEK_END", whence);
    } else if (rank == 0) {
        rc = pd_shared_seek(fh, offset, whence, mine, sizeof(mine));
    }
    int in2[2] = { rc, rank }, out2[2];
    PMPI_Allreduce(in2, out2, 1, MPI_2INT, MPI_MAXLOC, fh->comm);
    who = out2[1];
    if (out2[0] != MPI_SUCCESS)
        return mine[0] != '\0'
                   ? pd_raise_file(fh, call, out2[0], "%s", mine)
                   : pd_raise_file(fh, call, out2[0], "rank %d failed in "
                                   "it; see its message", who);
    return MPI_SUCCESS;
}

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char call[] = "MPI_File_get_position_shared";
    PD_CHECK(pd_shared_usable(fh, call));
    if (offset == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "offset is NULL");
    return pd_shared_take(fh, call, 0, offset);
}
