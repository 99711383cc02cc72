/*
 * MPI-IO: files opened by every rank, written and read at explicit
 * offsets and through the individual file pointer, blocking, collective,
 * nonblocking and split; views, sizes, error classes and file error
 * handlers. Every answer is worked out here: the file's bytes are read
 * back with plain POSIX reads as well as through MPI.
 *
 *   file_check DIR    (a directory every rank can write; each run makes
 *                      and removes its files there)
 *
 * Plain MPI: it builds against Open MPI's mpicc too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "tap_harness.h"

enum { N = 1000 };                  /* ints per rank's block */

static char path[4096];

/* The file's first n bytes as POSIX reads them; the count read. */
static long posix_read(const char *name, void *buf, long n)
{
    int fd = open(name, O_RDONLY);
    if (fd < 0)
        return -1;
    long got = (long)pread(fd, buf, (size_t)n, 0);
    close(fd);
    return got;
}

static void expect_class(struct verdict *v, const char *call, int rc,
                         int want)
{
    int got = error_class(rc);
    if (got != want) {
        char name[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(want, name, &len);
        fail(v, "%s: error class %d, expected %d (%s)", call, got, want,
             name);
    }
}

/* This rank's block: its N ints rank * N + i. */
static int *rank_block(void)
{
    int *mine = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        mine[i] = world_rank * N + i;
    return mine;
}

/* The file, made where it is not there yet, for reading and writing. */
static void open_read_write(struct verdict *v, MPI_File *fh)
{
    check_rc(v, "MPI_File_open",
             MPI_File_open(MPI_COMM_WORLD, path,
                           MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           fh));
}

/* Every rank writes its block of ints (rank * N + i) at its offset with
 * MPI_File_write_at_all; every rank then reads all of them back with
 * MPI_File_read_at and with POSIX reads. */
static void check_blocks(void)
{
    struct verdict v = {""};
    MPI_File fh;
    int *mine = rank_block(),
        *all = malloc((size_t)N * world_size * sizeof(int));
    open_read_write(&v, &fh);
    MPI_Status st;
    int count = -1;
    check_rc(&v, "MPI_File_write_at_all",
             MPI_File_write_at_all(fh, (MPI_Offset)world_rank * N *
                                       (MPI_Offset)sizeof(int),
                                   mine, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    if (count != N)
        fail(&v, "MPI_File_write_at_all: status counts %d ints, not %d",
             count, N);
    check_rc(&v, "MPI_File_sync", MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_rc(&v, "MPI_File_sync", MPI_File_sync(fh));
    check_rc(&v, "MPI_File_read_at",
             MPI_File_read_at(fh, 0, all, N * world_size, MPI_INT, &st));
    for (long i = 0; i < (long)N * world_size; i++)
        if (all[i] != (int)i) {
            fail(&v, "MPI_File_read_at: int %ld is %d", i, all[i]);
            break;
        }
    memset(all, 0, (size_t)N * world_size * sizeof(int));
    long want = (long)N * world_size * (long)sizeof(int);
    long got = posix_read(path, all, want);
    if (got != want)
        fail(&v, "the file holds %ld bytes by POSIX read, not %ld", got,
             want);
    for (long i = 0; got == want && i < (long)N * world_size; i++)
        if (all[i] != (int)i) {
            fail(&v, "POSIX read: int %ld is %d", i, all[i]);
            break;
        }
    MPI_Offset size = -1;
    check_rc(&v, "MPI_File_get_size", MPI_File_get_size(fh, &size));
    if (size != want)
        fail(&v, "MPI_File_get_size: %lld, not %ld", (long long)size, want);

    /* Past the end: a read stops there, its status says so. */
    check_rc(&v, "MPI_File_read_at",
             MPI_File_read_at(fh, size - 2 * (MPI_Offset)sizeof(int), all, 10,
                              MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    if (count != 2)
        fail(&v, "a read of 10 ints 2 before the end counted %d", count);
    check_rc(&v, "MPI_File_close", MPI_File_close(&fh));
    if (fh != MPI_FILE_NULL)
        fail(&v, "MPI_File_close left the handle set");
    report(&v, "every rank's block by MPI_File_write_at_all, read back by "
           "MPI_File_read_at and by POSIX reads; a read past the end is "
           "short");
    free(mine);
    free(all);
}

/* A view of ints from byte 8; every rank writes, through its file pointer
 * after a seek, every other int of a strided buffer (MPI_Type_vector),
 * nonblocking and split; reading back gives the packed ints. */
static void check_view_and_pointer(void)
{
    struct verdict v = {""};
    MPI_File fh;
    check_rc(&v, "MPI_File_open",
             MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    check_rc(&v, "MPI_File_set_view",
             MPI_File_set_view(fh, 8, MPI_INT, MPI_INT, "native",
                               MPI_INFO_NULL));
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int *strided = malloc(2 * N * sizeof(int)),
        *back = malloc(N * sizeof(int));
    for (int i = 0; i < 2 * N; i++)
        strided[i] = i % 2 == 0 ? -(world_rank * N + i / 2) : 7777;
    /* Pointer at this rank's block, in ints of the view. */
    check_rc(&v, "MPI_File_seek",
             MPI_File_seek(fh, (MPI_Offset)world_rank * N, MPI_SEEK_SET));
    MPI_Request req;
    MPI_Status st;
    int count = -1;
    check_rc(&v, "MPI_File_iwrite",
             MPI_File_iwrite(fh, strided, 1, every_other, &req));
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    if (count != N)
        fail(&v, "MPI_File_iwrite: status counts %d ints, not %d", count, N);
    MPI_Offset pos = -1, byte = -1;
    MPI_File_get_position(fh, &pos);
    if (pos != (MPI_Offset)(world_rank + 1) * N)
        fail(&v, "the pointer is at %lld after the write, not %lld",
             (long long)pos, (long long)(world_rank + 1) * N);
    MPI_File_get_byte_offset(fh, pos, &byte);
    if (byte != 8 + pos * (MPI_Offset)sizeof(int))
        fail(&v, "MPI_File_get_byte_offset(%lld) is %lld", (long long)pos,
             (long long)byte);
    check_rc(&v, "MPI_File_sync", MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_rc(&v, "MPI_File_sync", MPI_File_sync(fh));
    /* The next rank's block, by a split collective at its offset. */
    int next = (world_rank + 1) % world_size;
    check_rc(&v, "MPI_File_read_at_all_begin",
             MPI_File_read_at_all_begin(fh, (MPI_Offset)next * N, back, N,
                                        MPI_INT));
    check_rc(&v, "MPI_File_read_at_all_end",
             MPI_File_read_at_all_end(fh, back, &st));
    for (int i = 0; i < N; i++)
        if (back[i] != -(next * N + i)) {
            fail(&v, "rank %d's int %d reads %d", next, i, back[i]);
            break;
        }
    /* Back into a strided buffer: the gaps stay. */
    for (int i = 0; i < 2 * N; i++)
        strided[i] = 5555;
    check_rc(&v, "MPI_File_seek",
             MPI_File_seek(fh, -(MPI_Offset)N, MPI_SEEK_CUR));
    check_rc(&v, "MPI_File_read_all",
             MPI_File_read_all(fh, strided, 1, every_other, &st));
    for (int i = 0; i < 2 * N; i++)
        if (strided[i] != (i % 2 == 0 ? -(world_rank * N + i / 2) : 5555)) {
            fail(&v, "strided read: int %d is %d", i, strided[i]);
            break;
        }
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    check_rc(&v, "MPI_File_get_view",
             MPI_File_get_view(fh, &disp, &et, &ft, rep));
    if (disp != 8 || et != MPI_INT || ft != MPI_INT ||
        strcmp(rep, "native") != 0)
        fail(&v, "MPI_File_get_view: disp %lld, %s", (long long)disp, rep);
    check_rc(&v, "MPI_File_close", MPI_File_close(&fh));
    report(&v, "a view from byte 8: strided blocks by MPI_File_iwrite at "
           "the file pointer, read by a split collective and by "
           "MPI_File_read_all into a strided buffer");
    MPI_Type_free(&every_other);
    free(strided);
    free(back);
}

/* Size, preallocation, amode, group, atomicity, info. */
static void check_attributes(void)
{
    struct verdict v = {""};
    MPI_File fh;
    int amode = MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN;
    check_rc(&v, "MPI_File_open",
             MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh));
    MPI_Offset size = -1;
    check_rc(&v, "MPI_File_set_size", MPI_File_set_size(fh, 100));
    MPI_File_get_size(fh, &size);
    if (size != 100)
        fail(&v, "MPI_File_set_size(100) left %lld bytes", (long long)size);
    check_rc(&v, "MPI_File_preallocate", MPI_File_preallocate(fh, 50));
    MPI_File_get_size(fh, &size);
    if (size != 100)
        fail(&v, "MPI_File_preallocate(50) changed it to %lld",
             (long long)size);
    check_rc(&v, "MPI_File_preallocate", MPI_File_preallocate(fh, 4096));
    MPI_File_get_size(fh, &size);
    if (size != 4096)
        fail(&v, "MPI_File_preallocate(4096) left %lld bytes",
             (long long)size);
    int got = 0, flag = -1, result;
    MPI_File_get_amode(fh, &got);
    if (got != amode)
        fail(&v, "MPI_File_get_amode: %d, not %d", got, amode);
    MPI_Group fg, wg;
    MPI_File_get_group(fh, &fg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(fg, wg, &result);
    if (result != MPI_IDENT)
        fail(&v, "the file's group is not the communicator's");
    MPI_Group_free(&fg);
    MPI_Group_free(&wg);
    check_rc(&v, "MPI_File_set_atomicity", MPI_File_set_atomicity(fh, 1));
    MPI_File_get_atomicity(fh, &flag);
    if (flag != 1)
        fail(&v, "MPI_File_get_atomicity: %d after setting 1", flag);
    /* In atomic mode every rank writes the same 4 KiB, a whole at a time:
     * the file ends up as one rank's, not a mix. */
    char *page = malloc(4096), *seen = malloc(4096);
    memset(page, 'a' + world_rank, 4096);
    check_rc(&v, "MPI_File_write_at",
             MPI_File_write_at(fh, 0, page, 4096, MPI_CHAR,
                               MPI_STATUS_IGNORE));
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at(fh, 0, seen, 4096, MPI_CHAR, MPI_STATUS_IGNORE);
    for (int i = 1; i < 4096; i++)
        if (seen[i] != seen[0]) {
            fail(&v, "atomic writes mixed: byte %d is '%c', byte 0 '%c'", i,
                 seen[i], seen[0]);
            break;
        }
    MPI_Info info;
    check_rc(&v, "MPI_File_get_info", MPI_File_get_info(fh, &info));
    MPI_Info_free(&info);
    MPI_Aint extent = 0;
    MPI_File_get_type_extent(fh, MPI_DOUBLE, &extent);
    if (extent != (MPI_Aint)sizeof(double))
        fail(&v, "MPI_File_get_type_extent(MPI_DOUBLE) is %ld",
             (long)extent);
    check_rc(&v, "MPI_File_close", MPI_File_close(&fh));
    report(&v, "size, preallocation, amode, group, atomic mode, info and "
           "type extent of a file");
    free(page);
    free(seen);
}

static int handler_calls, handler_class;
static MPI_File handler_file;

static void on_file_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    MPI_Error_class(*code, &handler_class);
}

/* Each refusal with its class, on every rank alike; the handlers. */
static void check_errors(void)
{
    struct verdict v = {""};
    MPI_File fh = MPI_FILE_NULL;
    char missing[4200];
    snprintf(missing, sizeof(missing), "%s.missing", path);
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY,
                           MPI_INFO_NULL, &fh);
    expect_class(&v, "MPI_File_open of a missing file", rc,
                 MPI_ERR_NO_SUCH_FILE);
    rc = MPI_File_open(MPI_COMM_WORLD, path,
                       MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                       MPI_INFO_NULL, &fh);
    expect_class(&v, "MPI_File_open MPI_MODE_EXCL of an existing file", rc,
                 MPI_ERR_FILE_EXISTS);
    rc = MPI_File_open(MPI_COMM_WORLD, path,
                       MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    expect_class(&v, "MPI_File_open MPI_MODE_RDONLY | MPI_MODE_CREATE", rc,
                 MPI_ERR_AMODE);
    /* Rank 0 alone asks for another amode: every rank fails (MPI calls
     * it erroneous; Open MPI 4.1.4 does not look). */
    if (!on_open_mpi) {
        rc = MPI_File_open(MPI_COMM_WORLD, path,
                           world_rank == 0 && world_size > 1
                               ? MPI_MODE_WRONLY : MPI_MODE_RDONLY,
                           MPI_INFO_NULL, &fh);
        if (world_size > 1)
            expect_class(&v, "MPI_File_open with amodes that differ", rc,
                         MPI_ERR_AMODE);
        else if (rc == MPI_SUCCESS)
            MPI_File_close(&fh);
    }

    check_rc(&v, "MPI_File_open",
             MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
                           MPI_INFO_NULL, &fh));
    int one = 1;
    rc = MPI_File_write_at(fh, 0, &one, 1, MPI_INT, MPI_STATUS_IGNORE);
    expect_class(&v, "MPI_File_write_at on a read-only file", rc,
                 MPI_ERR_READ_ONLY);
    MPI_Datatype holes;
    MPI_Type_vector(2, 1, 2, MPI_INT, &holes);
    MPI_Type_commit(&holes);
    /* pdmpi's views are contiguous and native (Open MPI takes any). */
    if (!on_open_mpi) {
        rc = MPI_File_set_view(fh, 0, MPI_INT, holes, "native",
                               MPI_INFO_NULL);
        expect_class(&v, "MPI_File_set_view with a filetype with holes", rc,
                     MPI_ERR_UNSUPPORTED_OPERATION);
        rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32",
                               MPI_INFO_NULL);
        expect_class(&v, "MPI_File_set_view in external32", rc,
                     MPI_ERR_UNSUPPORTED_DATAREP);
        /* Erroneous in MPI; Open MPI 4.1.4 returns MPI_SUCCESS. */
        rc = MPI_File_read_at(fh, -1, &one, 1, MPI_INT, MPI_STATUS_IGNORE);
        expect_class(&v, "MPI_File_read_at at offset -1", rc, MPI_ERR_ARG);
    }
    rc = MPI_File_read_at(fh, 0, &one, -1, MPI_INT, MPI_STATUS_IGNORE);
    expect_class(&v, "MPI_File_read_at of count -1", rc, MPI_ERR_COUNT);
    MPI_Type_free(&holes);

    /* The program's handler sees the file and the class. */
    MPI_Errhandler eh;
    check_rc(&v, "MPI_File_create_errhandler",
             MPI_File_create_errhandler(on_file_error, &eh));
    check_rc(&v, "MPI_File_set_errhandler", MPI_File_set_errhandler(fh, eh));
    rc = MPI_File_write_at(fh, 0, &one, 1, MPI_INT, MPI_STATUS_IGNORE);
    if (handler_calls != 1 || handler_file != fh ||
        handler_class != MPI_ERR_READ_ONLY)
        fail(&v, "the file's handler ran %d times (class %d)", handler_calls,
             handler_class);
    check_rc(&v, "MPI_File_call_errhandler",
             MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    if (handler_calls != 2 || handler_class != MPI_ERR_OTHER)
        fail(&v, "MPI_File_call_errhandler: the handler ran %d times",
             handler_calls);
    /* A communicator takes no handler made for files. */
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    expect_class(&v, "MPI_Comm_set_errhandler of a file handler", rc,
                 MPI_ERR_ARG);
    check_rc(&v, "MPI_File_close", MPI_File_close(&fh));

    /* MPI_FILE_NULL's handler: MPI_ERRORS_RETURN at first, and the one
     * files opened later start with. */
    MPI_Errhandler null_eh;
    MPI_File_get_errhandler(MPI_FILE_NULL, &null_eh);
    if (null_eh != MPI_ERRORS_RETURN)
        fail(&v, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    check_rc(&v, "MPI_File_set_errhandler",
             MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    handler_calls = 0;
    MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL,
                  &fh);
    if (handler_calls != 1 || handler_file != MPI_FILE_NULL ||
        handler_class != MPI_ERR_NO_SUCH_FILE)
        fail(&v, "a failed open ran MPI_FILE_NULL's handler %d times",
             handler_calls);
    check_rc(&v, "MPI_File_open",
             MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
                           MPI_INFO_NULL, &fh));
    MPI_Errhandler inherited;
    MPI_File_get_errhandler(fh, &inherited);
    if (inherited != eh)
        fail(&v, "a file opened after did not start with MPI_FILE_NULL's "
             "handler");
    MPI_File_close(&fh);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    report(&v, "missing file, existing file under MPI_MODE_EXCL, bad and "
           "differing amodes, writes to a read-only file, views with holes "
           "or in external32, negative offset and count: each its class; "
           "file error handlers");
}

/* The shared file pointer: every rank's block by MPI_File_write_shared
 * lands once, in some order; by MPI_File_write_ordered in rank order;
 * MPI_File_seek_shared and MPI_File_read_ordered read them back. */
static void check_shared(void)
{
    struct verdict v = {""};
    MPI_File fh;
    int *mine = rank_block(),
        *all = malloc((size_t)N * world_size * sizeof(int));
    open_read_write(&v, &fh);
    check_rc(&v, "MPI_File_set_view",
             MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native",
                               MPI_INFO_NULL));
    check_rc(&v, "MPI_File_write_shared",
             MPI_File_write_shared(fh, mine, N, MPI_INT, MPI_STATUS_IGNORE));
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_Offset pos = -1;
    check_rc(&v, "MPI_File_get_position_shared",
             MPI_File_get_position_shared(fh, &pos));
    if (pos != (MPI_Offset)N * world_size)
        fail(&v, "the shared pointer is at %lld after every rank's block, "
             "not %lld", (long long)pos, (long long)N * world_size);
    MPI_File_read_at(fh, 0, all, N * world_size, MPI_INT, MPI_STATUS_IGNORE);
    /* Each block whole, each rank's once. */
    int *seen = calloc((size_t)world_size, sizeof(int));
    for (int b = 0; b < world_size; b++) {
        int r = all[b * N] / N;
        bool whole = r >= 0 && r < world_size && all[b * N] == r * N;
        for (int i = 1; whole && i < N; i++)
            whole = all[b * N + i] == r * N + i;
        if (!whole) {
            fail(&v, "MPI_File_write_shared: block %d is not one rank's", b);
            break;
        }
        seen[r]++;
    }
    for (int r = 0; r < world_size; r++)
        if (seen[r] != 1)
            fail(&v, "MPI_File_write_shared: rank %d's block is there %d "
                 "times", r, seen[r]);
    free(seen);

    /* After them, in rank order; then back to them and read in order. */
    for (int i = 0; i < N; i++)
        mine[i] = -(world_rank * N + i);
    check_rc(&v, "MPI_File_write_ordered",
             MPI_File_write_ordered(fh, mine, N, MPI_INT,
                                    MPI_STATUS_IGNORE));
    check_rc(&v, "MPI_File_seek_shared",
             MPI_File_seek_shared(fh, (MPI_Offset)N * world_size,
                                  MPI_SEEK_SET));
    MPI_Status st;
    int count = -1;
    check_rc(&v, "MPI_File_read_ordered",
             MPI_File_read_ordered(fh, all, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    if (count != N)
        fail(&v, "MPI_File_read_ordered counted %d ints", count);
    for (int i = 0; i < N; i++)
        if (all[i] != -(world_rank * N + i)) {
            fail(&v, "MPI_File_write_ordered then read_ordered: int %d is "
                 "%d", i, all[i]);
            break;
        }
    MPI_File_get_position_shared(fh, &pos);
    if (pos != 2 * (MPI_Offset)N * world_size)
        fail(&v, "the shared pointer is at %lld after reading in order",
             (long long)pos);
    /* Handles as integers and back. */
    MPI_Fint as_int = MPI_File_c2f(fh);
    if (MPI_File_f2c(as_int) != fh || MPI_File_c2f(MPI_FILE_NULL) != 0)
        fail(&v, "MPI_File_c2f/MPI_File_f2c do not convert the file");
    check_rc(&v, "MPI_File_close", MPI_File_close(&fh));
    report(&v, "the shared file pointer: MPI_File_write_shared from every "
           "rank, MPI_File_write_ordered, MPI_File_seek_shared, "
           "MPI_File_read_ordered; MPI_File_c2f and MPI_File_f2c");
    free(mine);
    free(all);
}

/* MPI_MODE_DELETE_ON_CLOSE, MPI_MODE_APPEND and MPI_File_delete. */
static void check_delete(void)
{
    struct verdict v = {""};
    MPI_File fh;
    MPI_Offset pos = -1;
    struct stat st;
    if (stat(path, &st) != 0)
        fail(&v, "stat of the file: %s", strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    check_rc(&v, "MPI_File_open",
             MPI_File_open(MPI_COMM_WORLD, path,
                           MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL,
                           &fh));
    MPI_File_get_position(fh, &pos);
    if (pos != (MPI_Offset)st.st_size)
        fail(&v, "MPI_MODE_APPEND: the pointer is at %lld, not the end "
             "(%lld)", (long long)pos, (long long)st.st_size);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank == 0)
        check_rc(&v, "MPI_File_delete", MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    if (access(path, F_OK) == 0)
        fail(&v, "MPI_File_delete left the file");
    int rc = MPI_File_delete(path, MPI_INFO_NULL);
    expect_class(&v, "MPI_File_delete of a missing file", rc,
                 MPI_ERR_NO_SUCH_FILE);
    check_rc(&v, "MPI_File_open",
             MPI_File_open(MPI_COMM_WORLD, path,
                           MPI_MODE_CREATE | MPI_MODE_RDWR |
                               MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    if (access(path, F_OK) != 0)
        fail(&v, "MPI_MODE_CREATE made no file");
    MPI_File_close(&fh);
    if (access(path, F_OK) == 0)
        fail(&v, "MPI_MODE_DELETE_ON_CLOSE left the file");
    report(&v, "MPI_MODE_APPEND starts at the end; MPI_File_delete and "
           "MPI_MODE_DELETE_ON_CLOSE remove the file");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    on_open_mpi = library_is_open_mpi();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    /* One name for every rank: rank 0's pid. */
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/file_check.%d", dir, pid);
    check_blocks();
    check_view_and_pointer();
    check_attributes();
    check_errors();
    check_shared();
    check_delete();
    int status = finish();
    MPI_Finalize();
    return status;
}
