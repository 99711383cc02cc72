/*
 * Opening, closing and deleting files; their size, sync, atomicity,
 * view, individual file pointer and error handlers (api/file.h). Views
 * are of contiguous filetypes in the "native" representation; shared
 * file pointers (and the ordered calls) are not provided.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/file.h"
#include "core/datatype.h"
#include "core/handles.h"

#pragma weak MPI_File_open = PMPI_File_open
#pragma weak MPI_File_close = PMPI_File_close
#pragma weak MPI_File_delete = PMPI_File_delete
#pragma weak MPI_File_get_amode = PMPI_File_get_amode
#pragma weak MPI_File_get_group = PMPI_File_get_group
#pragma weak MPI_File_get_info = PMPI_File_get_info
#pragma weak MPI_File_set_info = PMPI_File_set_info
#pragma weak MPI_File_get_size = PMPI_File_get_size
#pragma weak MPI_File_set_size = PMPI_File_set_size
#pragma weak MPI_File_preallocate = PMPI_File_preallocate
#pragma weak MPI_File_sync = PMPI_File_sync
#pragma weak MPI_File_get_atomicity = PMPI_File_get_atomicity
#pragma weak MPI_File_set_atomicity = PMPI_File_set_atomicity
#pragma weak MPI_File_set_view = PMPI_File_set_view
#pragma weak MPI_File_get_view = PMPI_File_get_view
#pragma weak MPI_File_get_byte_offset = PMPI_File_get_byte_offset
#pragma weak MPI_File_get_type_extent = PMPI_File_get_type_extent
#pragma weak MPI_File_seek = PMPI_File_seek
#pragma weak MPI_File_get_position = PMPI_File_get_position
#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler
#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler

int pd_check_file(MPI_File fh, const char *call)
{
    PD_CHECK(pd_check_active(call));
    if (fh == MPI_FILE_NULL)
        return pd_raise_file(NULL, call, MPI_ERR_FILE, "the file is "
                             "MPI_FILE_NULL");
    if (fh == NULL || fh->magic != PD_MAGIC_FILE)
        return pd_raise_file(NULL, call, MPI_ERR_FILE, "%p is not an open "
                             "file", (void *)fh);
    return MPI_SUCCESS;
}

int pd_file_errno_class(int err)
{
    switch (err) {
    case ENOENT: case ENOTDIR:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EACCES: case EPERM:
        return MPI_ERR_ACCESS;
    case ENOSPC: case EDQUOT: case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENAMETOOLONG: case EISDIR: case ELOOP:
        return MPI_ERR_BAD_FILE;
    default:
        return MPI_ERR_IO;
    }
}

bool pd_file_alike(MPI_Comm comm, const long long *values, int n)
{
    /* The largest value and the largest complement (~v = -v - 1, which
     * cannot overflow) give the largest and the smallest at once. */
    long long in[8] = { 0 }, out[8];
    n = n < 4 ? n : 4;
    for (int i = 0; i < n; i++) {
        in[2 * i] = values != NULL ? values[i] : LLONG_MIN;
        in[2 * i + 1] = values != NULL ? ~values[i] : LLONG_MIN;
    }
    PMPI_Allreduce(in, out, 2 * n, MPI_LONG_LONG, MPI_MAX, comm);
    for (int i = 0; i < n; i++)
        if (out[2 * i] != ~out[2 * i + 1] && out[2 * i] != LLONG_MIN)
            return false;
    return true;
}

/* A collective call's outcome on every rank of comm: the largest error
 * class any rank had (mine is this one's), and the lowest rank that had
 * it in *who. It is a barrier too. */
static int pd_file_agree(MPI_Comm comm, int mine, int *who)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    int in[2] = { mine, rank }, out[2];
    PMPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, comm);
    *who = out[1];
    return out[0];
}

/* The failure of a collective call on fh (NULL: raised on
 * MPI_FILE_NULL) that some rank had: this rank's own reason where it was
 * this rank's, else the failing rank named. */
static int pd_file_failed(MPI_File fh, const char *call, int errclass,
                          int who, const char *mine)
{
    if (mine[0] != '\0')
        return pd_raise_file(fh, call, errclass, "%s", mine);
    return pd_raise_file(fh, call, errclass, "rank %d of the file's "
                         "communicator failed in it (%s); see its message",
                         who, pd_error_class_name(errclass));
}

/* The path a file name stands for: without a file system prefix, which
 * ROMIO takes ("ufs:name"). */
static const char *pd_file_path(const char *name)
{
    static const char *const prefixes[] = { "ufs:", "nfs:", "lustre:",
                                            "gpfs:", "pvfs2:" };
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return name + strlen(prefixes[i]);
    return name;
}

/* NULL where amode is one MPI allows, else why not. */
static const char *pd_amode_refused(int amode)
{
    const int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY |
                      MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE |
                      MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |
                      MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    int access = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    if ((amode & ~known) != 0)
        return "it has bits no MPI_MODE_ constant has";
    if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY &&
        access != MPI_MODE_RDWR)
        return "it needs exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY "
               "and MPI_MODE_RDWR";
    if (access == MPI_MODE_RDONLY &&
        (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) != 0)
        return "MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or "
               "MPI_MODE_EXCL";
    if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL) != 0)
        return "MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL";
    return NULL;
}

/* The arguments of MPI_File_open on this rank: a class and why in mine
 * where they are refused. */
static int pd_open_args(MPI_File *fh, const char *filename, int amode,
                        MPI_Info info, char *mine, size_t len)
{
    const char *refused = pd_amode_refused(amode);
    if (fh == NULL || filename == NULL) {
        snprintf(mine, len, "%s is NULL", fh == NULL ? "fh" : "filename");
        return MPI_ERR_ARG;
    }
    if (!pd_info_is_valid(info)) {
        snprintf(mine, len, "info is not a valid info handle");
        return MPI_ERR_INFO;
    }
    if (refused != NULL) {
        snprintf(mine, len, "amode %d is refused: %s", amode, refused);
        return MPI_ERR_AMODE;
    }
    return MPI_SUCCESS;
}

/* This rank's descriptor of path: rank 0 creates the file where amode
 * says so, before the others open it. */
static int pd_open_fd(MPI_Comm comm, const char *path, int amode, int *fd,
                      char *mine, size_t len)
{
    int access = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    int flags = (access == MPI_MODE_RDONLY ? O_RDONLY
                 : access == MPI_MODE_WRONLY ? O_WRONLY : O_RDWR) | O_CLOEXEC;
    int rank, err = 0;
    PMPI_Comm_rank(comm, &rank);
    *fd = -1;
    if (rank == 0) {
        int create = (amode & MPI_MODE_CREATE) == 0 ? 0
                     : O_CREAT | ((amode & MPI_MODE_EXCL) != 0 ? O_EXCL : 0);
        if ((*fd = open(path, flags | create, 0666)) < 0)
            err = errno;
    }
    /* Created (or not) before the other ranks look for it. */
    PMPI_Bcast(&err, 1, MPI_INT, 0, comm);
    if (err == 0 && rank != 0 && (*fd = open(path, flags)) < 0)
        err = errno;
    if (err == 0)
        return MPI_SUCCESS;
    snprintf(mine, len, "%s %.200s: %s",
             (amode & MPI_MODE_CREATE) != 0 ? "creating or opening"
                                            : "opening",
             path, strerror(err));
    return pd_file_errno_class(err);
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode,
                   MPI_Info info, MPI_File *fh)
{
    static const char call[] = "MPI_File_open";
    PD_CHECK(pd_check_active(call));
    if (comm == MPI_COMM_NULL || !pd_comm_is_usable(comm))
        return pd_raise_file(NULL, call, MPI_ERR_COMM, "comm is not a valid "
                             "communicator");
    if (pd_comm_is_inter(comm))
        return pd_raise_file(NULL, call, MPI_ERR_COMM, "files open on "
                             "intracommunicators only");
    char mine[320] = "";
    int rc = pd_open_args(fh, filename, amode, info, mine, sizeof(mine)), any;
    PMPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any != MPI_SUCCESS)
        return pd_raise_file(NULL, call, any, "%s", mine[0] != '\0' ? mine
                             : "another rank's arguments were refused");
    if (!pd_file_alike(comm, &(long long){ amode }, 1))
        return pd_raise_file(NULL, call, MPI_ERR_AMODE, "the ranks passed "
                             "different amodes (%d here)", amode);
    MPI_Comm own;
    if ((rc = PMPI_Comm_dup(comm, &own)) != MPI_SUCCESS)
        return rc;
    const char *path = pd_file_path(filename);
    int fd, who;
    rc = pd_open_fd(own, path, amode, &fd, mine, sizeof(mine));
    struct ompi_file_t *f = NULL;
    char *copy = NULL;
    if (rc == MPI_SUCCESS && ((f = calloc(1, sizeof(*f))) == NULL ||
                              (copy = strdup(path)) == NULL)) {
        rc = MPI_ERR_NO_MEM;
        snprintf(mine, sizeof(mine), "out of memory");
    }
    struct stat st;
    if (rc == MPI_SUCCESS && (amode & MPI_MODE_APPEND) != 0 &&
        fstat(fd, &st) != 0) {
        rc = pd_file_errno_class(errno);
        snprintf(mine, sizeof(mine), "finding the end of %.200s: %s", path,
                 strerror(errno));
    }
    if ((rc = pd_file_agree(own, rc, &who)) != MPI_SUCCESS) {
        if (fd >= 0)
            close(fd);
        free(f);
        free(copy);
        PMPI_Comm_free(&own);
        return pd_file_failed(NULL, call, rc, who, mine);
    }
    struct ompi_file_t *null = (struct ompi_file_t *)MPI_FILE_NULL;
    f->magic = PD_MAGIC_FILE;
    f->errhandler = __atomic_load_n(&null->errhandler, __ATOMIC_ACQUIRE);
    f->fd = fd;
    f->amode = amode;
    f->comm = own;
    f->path = copy;
    f->etype = f->filetype = MPI_BYTE;
    /* MPI_MODE_APPEND: the pointers start at the end. */
    f->pointer = (amode & MPI_MODE_APPEND) != 0 ? (MPI_Offset)st.st_size : 0;
    pd_file_shared_open(f, f->pointer);
    *fh = f;
    return MPI_SUCCESS;
}

int PMPI_File_close(MPI_File *fh)
{
    static const char call[] = "MPI_File_close";
    PD_CHECK(pd_check_active(call));
    if (fh == NULL)
        return pd_raise_file(NULL, call, MPI_ERR_ARG, "fh is NULL");
    PD_CHECK(pd_check_file(*fh, call));
    struct ompi_file_t *f = *fh;
    char mine[320] = "";
    int rc = MPI_SUCCESS, who, rank;
    if (f->split_call != NULL) {
        rc = MPI_ERR_OTHER;
        snprintf(mine, sizeof(mine), "%s was not ended", f->split_call);
    } else if (close(f->fd) != 0) {
        rc = pd_file_errno_class(errno);
        snprintf(mine, sizeof(mine), "closing: %s", strerror(errno));
    } else {
        f->fd = -1;
    }
    if ((rc = pd_file_agree(f->comm, rc, &who)) != MPI_SUCCESS)
        return pd_file_failed(f, call, rc, who, mine);
    /* Every rank has closed it: the first deletes it. */
    PMPI_Comm_rank(f->comm, &rank);
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) != 0) {
        if (rank == 0 && unlink(f->path) != 0 && errno != ENOENT) {
            rc = pd_file_errno_class(errno);
            snprintf(mine, sizeof(mine), "deleting %.200s on close: %s",
                     f->path, strerror(errno));
        }
        /* Gone when any rank returns. */
        rc = pd_file_agree(f->comm, rc, &who);
    }
    pd_file_shared_close(f);
    PMPI_Comm_free(&f->comm);
    pd_type_release(f->etype);
    pd_type_release(f->filetype);
    free(f->path);
    pd_handle_forget(PD_HANDLE_FILE, f);
    f->magic = PD_MAGIC_FREED;
    free(f);
    *fh = MPI_FILE_NULL;
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : pd_file_failed(NULL, call, rc, who, mine);
}

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char call[] = "MPI_File_delete";
    PD_CHECK(pd_check_active(call));
    if (filename == NULL)
        return pd_raise_file(NULL, call, MPI_ERR_ARG, "filename is NULL");
    if (!pd_info_is_valid(info))
        return pd_raise_file(NULL, call, MPI_ERR_INFO, "info is not a valid "
                             "info handle");
    const char *path = pd_file_path(filename);
    if (unlink(path) != 0)
        return pd_raise_file(NULL, call, pd_file_errno_class(errno),
                             "deleting %.200s: %s", path, strerror(errno));
    return MPI_SUCCESS;
}

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    static const char call[] = "MPI_File_get_amode";
    PD_CHECK(pd_check_file(fh, call));
    if (amode == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "amode is NULL");
    *amode = fh->amode;
    return MPI_SUCCESS;
}

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char call[] = "MPI_File_get_group";
    PD_CHECK(pd_check_file(fh, call));
    if (group == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "group is NULL");
    return PMPI_Comm_group(fh->comm, group);
}

/* No hints are kept: every key is one this implementation may ignore. */
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char call[] = "MPI_File_get_info";
    PD_CHECK(pd_check_file(fh, call));
    if (info_used == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "info_used is NULL");
    return PMPI_Info_create(info_used);
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char call[] = "MPI_File_set_info";
    PD_CHECK(pd_check_file(fh, call));
    if (!pd_info_is_valid(info))
        return pd_raise_file(fh, call, MPI_ERR_INFO, "info is not a valid "
                             "info handle");
    return MPI_SUCCESS;
}

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char call[] = "MPI_File_get_size";
    PD_CHECK(pd_check_file(fh, call));
    if (size == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "size is NULL");
    struct stat st;
    if (fstat(fh->fd, &st) != 0)
        return pd_raise_file(fh, call, pd_file_errno_class(errno), "%s",
                             strerror(errno));
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

/* MPI_File_set_size and MPI_File_preallocate: every rank passes the same
 * size; the first rank changes the file (grow: only ever grows it). */
static int pd_file_resize(MPI_File fh, const char *call, MPI_Offset size,
                          bool grow)
{
    PD_CHECK(pd_check_file(fh, call));
    char mine[320] = "";
    int rc = MPI_SUCCESS, who, rank;
    if (size < 0) {
        rc = MPI_ERR_ARG;
        snprintf(mine, sizeof(mine), "size is negative (%lld)",
                 (long long)size);
    } else if ((fh->amode & MPI_MODE_RDONLY) != 0) {
        rc = MPI_ERR_READ_ONLY;
        snprintf(mine, sizeof(mine), "the file was opened MPI_MODE_RDONLY");
    } else if ((fh->amode & MPI_MODE_SEQUENTIAL) != 0) {
        rc = MPI_ERR_UNSUPPORTED_OPERATION;
        snprintf(mine, sizeof(mine), "the file was opened "
                 "MPI_MODE_SEQUENTIAL");
    }
    long long mine_size = size;
    if (!pd_file_alike(fh->comm, rc == MPI_SUCCESS ? &mine_size : NULL, 1) &&
        rc == MPI_SUCCESS) {
        rc = MPI_ERR_ARG;
        snprintf(mine, sizeof(mine), "the ranks passed different sizes "
                 "(%lld here)", (long long)size);
    }
    PMPI_Comm_rank(fh->comm, &rank);
    struct stat st;
    if (rc == MPI_SUCCESS && rank == 0) {
        int err = 0;
        if (!grow)
            err = ftruncate(fh->fd, (off_t)size) != 0 ? errno : 0;
        else if (fstat(fh->fd, &st) != 0)
            err = errno;
        else if (st.st_size < size &&
                 (err = posix_fallocate(fh->fd, 0, (off_t)size)) != 0 &&
                 (err == EOPNOTSUPP || err == EINVAL))
            /* A file system without preallocation: the size at least. */
            err = ftruncate(fh->fd, (off_t)size) != 0 ? errno : 0;
        if (err != 0) {
            rc = pd_file_errno_class(err);
            snprintf(mine, sizeof(mine), "%s to %lld bytes: %s",
                     grow ? "preallocating" : "setting the size",
                     (long long)size, strerror(err));
        }
    }
    if ((rc = pd_file_agree(fh->comm, rc, &who)) != MPI_SUCCESS)
        return pd_file_failed(fh, call, rc, who, mine);
    return MPI_SUCCESS;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return pd_file_resize(fh, "MPI_File_set_size", size, false);
}

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return pd_file_resize(fh, "MPI_File_preallocate", size, true);
}

int PMPI_File_sync(MPI_File fh)
{
    static const char call[] = "MPI_File_sync";
    PD_CHECK(pd_check_file(fh, call));
    char mine[320] = "";
    int rc = MPI_SUCCESS, who;
    if (fsync(fh->fd) != 0 && errno != EINVAL) {
        rc = pd_file_errno_class(errno);
        snprintf(mine, sizeof(mine), "%s", strerror(errno));
    }
    if ((rc = pd_file_agree(fh->comm, rc, &who)) != MPI_SUCCESS)
        return pd_file_failed(fh, call, rc, who, mine);
    return MPI_SUCCESS;
}

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char call[] = "MPI_File_get_atomicity";
    PD_CHECK(pd_check_file(fh, call));
    if (flag == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "flag is NULL");
    *flag = fh->atomic;
    return MPI_SUCCESS;
}

/* Atomic mode: each access holds a lock on the bytes it covers
 * (api/file_io.c), so conflicting accesses of the ranks are sequential. */
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char call[] = "MPI_File_set_atomicity";
    PD_CHECK(pd_check_file(fh, call));
    if (!pd_file_alike(fh->comm, &(long long){ flag != 0 }, 1))
        return pd_raise_file(fh, call, MPI_ERR_ARG, "the ranks passed "
                             "different flags (%d here)", flag);
    fh->atomic = flag != 0;
    return MPI_SUCCESS;
}

/* NULL where a view of etype and filetype in datarep is one this
 * implementation takes, else why not (and the class in *errclass). */
static const char *pd_view_refused(MPI_Offset disp, MPI_Datatype etype,
                                   MPI_Datatype filetype, const char *datarep,
                                   int *errclass)
{
    *errclass = MPI_ERR_ARG;
    if (datarep == NULL)
        return "datarep is NULL";
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        *errclass = MPI_ERR_UNSUPPORTED_OPERATION;
        return "MPI_DISPLACEMENT_CURRENT (a shared file pointer's place) "
               "is not supported";
    }
    if (disp < 0)
        return "disp is negative";
    *errclass = MPI_ERR_TYPE;
    if (!pd_type_is_valid(etype) || !pd_type_is_valid(filetype))
        return "etype or filetype is not a valid datatype";
    if (!etype->committed || !filetype->committed)
        return "etype or filetype is not committed";
    if (etype->size == 0 || filetype->size % etype->size != 0)
        return "filetype is not made of whole etypes";
    *errclass = MPI_ERR_UNSUPPORTED_DATAREP;
    if (strcmp(datarep, "native") != 0)
        return "only the \"native\" data representation is supported";
    *errclass = MPI_ERR_UNSUPPORTED_OPERATION;
    if (!filetype->contiguous || !etype->contiguous)
        return "a view whose etype or filetype has holes is not supported "
               "(its data must lie contiguous in the file)";
    return NULL;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                       MPI_Datatype filetype, const char *datarep,
                       MPI_Info info)
{
    static const char call[] = "MPI_File_set_view";
    PD_CHECK(pd_check_file(fh, call));
    char mine[320] = "";
    int rc = MPI_SUCCESS, who;
    const char *refused = pd_view_refused(disp, etype, filetype, datarep, &rc);
    if (refused == NULL && !pd_info_is_valid(info)) {
        refused = "info is not a valid info handle";
        rc = MPI_ERR_INFO;
    } else if (refused == NULL && fh->split_call != NULL) {
        refused = "a split collective was begun and not ended";
        rc = MPI_ERR_OTHER;
    } else if (refused == NULL) {
        rc = MPI_SUCCESS;
    }
    if (refused != NULL)
        snprintf(mine, sizeof(mine), "%s", refused);
    if ((rc = pd_file_agree(fh->comm, rc, &who)) != MPI_SUCCESS)
        return pd_file_failed(fh, call, rc, who, mine);
    pd_type_retain(etype);
    pd_type_retain(filetype);
    pd_type_release(fh->etype);
    pd_type_release(fh->filetype);
    fh->etype = etype;
    fh->filetype = filetype;
    fh->disp = disp;
    fh->pointer = 0;
    /* The shared pointer goes back to 0 too, before any rank uses it. */
    int err = pd_file_shared_reset(fh);
    if ((rc = pd_file_agree(fh->comm, err != 0 ? pd_file_errno_class(err)
                                               : MPI_SUCCESS, &who)) !=
        MPI_SUCCESS)
        return pd_file_failed(fh, call, rc, who, err != 0 ? strerror(err)
                                                          : "");
    return MPI_SUCCESS;
}

/* The program's own handle to a view's type: a derived one is a copy,
 * which the program frees. */
static MPI_Datatype pd_view_type(MPI_Datatype type)
{
    return pd_type_is_predefined(type) ? type : pd_type_new_dup(type);
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                       MPI_Datatype *filetype, char *datarep)
{
    static const char call[] = "MPI_File_get_view";
    PD_CHECK(pd_check_file(fh, call));
    if (disp == NULL || etype == NULL || filetype == NULL || datarep == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "an output argument is "
                             "NULL");
    MPI_Datatype e = pd_view_type(fh->etype), t = pd_view_type(fh->filetype);
    if (e == NULL || t == NULL) {
        if (e != NULL && e != fh->etype)
            pd_type_release(e);
        if (t != NULL && t != fh->filetype)
            pd_type_release(t);
        return pd_raise_file(fh, call, MPI_ERR_NO_MEM, "out of memory");
    }
    *disp = fh->disp;
    *etype = e;
    *filetype = t;
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "native");
    return MPI_SUCCESS;
}

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset,
                              MPI_Offset *disp)
{
    static const char call[] = "MPI_File_get_byte_offset";
    PD_CHECK(pd_check_file(fh, call));
    if (disp == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "disp is NULL");
    if (offset < 0)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "offset is negative "
                             "(%lld)", (long long)offset);
    *disp = fh->disp + offset * (MPI_Offset)fh->etype->size;
    return MPI_SUCCESS;
}

/* In the "native" representation a type's extent in the file is its
 * extent in memory. */
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype,
                              MPI_Aint *extent)
{
    static const char call[] = "MPI_File_get_type_extent";
    PD_CHECK(pd_check_file(fh, call));
    if (extent == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "extent is NULL");
    if (!pd_type_is_valid(datatype))
        return pd_raise_file(fh, call, MPI_ERR_TYPE, "datatype is not a "
                             "valid datatype");
    *extent = (MPI_Aint)pd_type_extent(datatype);
    return MPI_SUCCESS;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char call[] = "MPI_File_seek";
    PD_CHECK(pd_check_file(fh, call));
    if ((fh->amode & MPI_MODE_SEQUENTIAL) != 0)
        return pd_raise_file(fh, call, MPI_ERR_UNSUPPORTED_OPERATION,
                             "the file was opened MPI_MODE_SEQUENTIAL");
    MPI_Offset from;
    if (whence == MPI_SEEK_SET) {
        from = 0;
    } else if (whence == MPI_SEEK_CUR) {
        from = fh->pointer;
    } else if (whence == MPI_SEEK_END) {
        struct stat st;
        if (fstat(fh->fd, &st) != 0)
            return pd_raise_file(fh, call, pd_file_errno_class(errno), "%s",
                                 strerror(errno));
        /* The end in etypes of the view, a partial one counted whole. */
        MPI_Offset past = (MPI_Offset)st.st_size - fh->disp,
                   e = (MPI_Offset)fh->etype->size;
        from = past > 0 ? (past + e - 1) / e : 0;
    } else {
        return pd_raise_file(fh, call, MPI_ERR_ARG, "whence %d is none of "
                             "MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END",
                             whence);
    }
    if (from + offset < 0)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "the position would be "
                             "negative (%lld)", (long long)(from + offset));
    fh->pointer = from + offset;
    return MPI_SUCCESS;
}

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char call[] = "MPI_File_get_position";
    PD_CHECK(pd_check_file(fh, call));
    if (offset == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "offset is NULL");
    *offset = fh->pointer;
    return MPI_SUCCESS;
}

/* The error handler calls take MPI_FILE_NULL as well, whose handler new
 * files start with. */
static int pd_check_file_or_null(MPI_File fh, const char *call)
{
    PD_CHECK(pd_check_active(call));
    return fh == MPI_FILE_NULL ? MPI_SUCCESS : pd_check_file(fh, call);
}

int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler errhandler)
{
    static const char call[] = "MPI_File_set_errhandler";
    PD_CHECK(pd_check_file_or_null(fh, call));
    if (errhandler == NULL || errhandler->magic != PD_MAGIC_ERRH ||
        errhandler->kind == PD_ERRH_NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "errhandler is not a "
                             "valid error handler");
    if (errhandler->kind == PD_ERRH_USER && errhandler->file_fn == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "errhandler was made for "
                             "communicators, not files");
    __atomic_store_n(&fh->errhandler, errhandler, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *errhandler)
{
    static const char call[] = "MPI_File_get_errhandler";
    PD_CHECK(pd_check_file_or_null(fh, call));
    if (errhandler == NULL)
        return pd_raise_file(fh, call, MPI_ERR_ARG, "errhandler is NULL");
    *errhandler = __atomic_load_n(&fh->errhandler, __ATOMIC_ACQUIRE);
    return MPI_SUCCESS;
}

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    static const char call[] = "MPI_File_call_errhandler";
    PD_CHECK(pd_check_file_or_null(fh, call));
    pd_raise_file(fh, call, errorcode, "called by the program (error code "
                  "%d)", errorcode);
    return MPI_SUCCESS;
}
