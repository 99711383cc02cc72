/*
 * Files (MPI-IO) on a POSIX file system: the calls that open, describe
 * and close a file (file.c) and those that read and write it
 * (file_io.c). Each rank opens the file itself, so the ranks of a file
 * share a host or a file system mounted on every host; the collective
 * calls agree on their outcome over a duplicate of the opener's
 * communicator, so every rank fails together.
 */
#ifndef PD_API_FILE_H
#define PD_API_FILE_H

#include "api/api.h"

/* MPI_SUCCESS where fh is an open file; else raised on MPI_FILE_NULL. */
int pd_check_file(MPI_File fh, const char *call);

/* The MPI error class of a failed system call's errno. */
int pd_file_errno_class(int err);

/* Whether every rank of comm passed the same n (at most 4) values, as a
 * collective file call's arguments must be; a rank whose call is refused
 * already passes NULL and is not compared. Collective. */
bool pd_file_alike(MPI_Comm comm, const long long *values, int n);

/* One read or write of count items of type at buf (file_io.c): at the
 * individual file pointer, which moves past it, or at offset etypes of
 * the view (shared: an offset taken from the shared file pointer, which
 * MPI_MODE_SEQUENTIAL allows). */
struct pd_access {
    const char *call;
    bool at_pointer;
    bool shared;
    MPI_Offset offset;
    void *buf;
    int count;
    MPI_Datatype type;
    bool write;
};

/* Lock (type F_RDLCK, F_WRLCK) or unlock (F_UNLCK) bytes [at, at + n)
 * of fd, waiting for the lock; errno or 0. */
int pd_file_lock(int fd, short type, off_t at, size_t n);

/* MPI_SUCCESS where a may go ahead on fh, else raised. */
int pd_file_access_check(MPI_File fh, const struct pd_access *a);
/* a now, status (or MPI_STATUS_IGNORE) given the bytes moved. */
int pd_file_access(MPI_File fh, const struct pd_access *a,
                   MPI_Status *status);
/* a now, *request complete with its status. */
int pd_file_access_request(MPI_File fh, const struct pd_access *a,
                           MPI_Request *request);
/* A split collective: a now, its outcome kept for the end call, which
 * names the begin call it ends. */
int pd_file_access_begin(MPI_File fh, const struct pd_access *a);
int pd_file_access_end(MPI_File fh, const char *call, const char *begin,
                       MPI_Status *status);

/* The shared file pointer (file_shared.c), in a companion file every
 * rank opens and none names (removed once they all have it): made when
 * the file is opened, at `at` etypes (collective; a failure is kept and
 * raised by the calls that use it), closed with it, and set back to 0
 * by a new view (collective). */
void pd_file_shared_open(MPI_File fh, MPI_Offset at);
void pd_file_shared_close(MPI_File fh);
int pd_file_shared_reset(MPI_File fh);

#endif
