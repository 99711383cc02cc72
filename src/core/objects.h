/*
 * pdmpi's own completion of Open MPI's incomplete handle structs.
 *
 * Open MPI's mpi.h declares every handle as a pointer to an incomplete
 * struct (struct ompi_communicator_t *, ...) and every predefined handle
 * as the address of an exported object. Compiled user code depends only on
 * the symbol names and, through copy relocations, on the objects' sizes --
 * never on their contents -- so pdmpi fills these structs with its own
 * fields. The predefined objects are padded to Open MPI's exact sizes in
 * predefined.c.
 */
#ifndef PD_CORE_OBJECTS_H
#define PD_CORE_OBJECTS_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/datatype.h"
#include "core/op.h"

/* Magic words catch handles of the wrong kind and freed objects. */
#define PD_MAGIC_COMM 0x434f4d4du       /* "COMM" */
#define PD_MAGIC_TYPE 0x54595045u       /* "TYPE" */
#define PD_MAGIC_OP 0x4f505f5fu         /* "OP__" */
#define PD_MAGIC_ERRH 0x45525248u       /* "ERRH" */
#define PD_MAGIC_GROUP 0x47525550u      /* "GRUP" */
#define PD_MAGIC_INFO 0x494e464fu       /* "INFO" */
#define PD_MAGIC_REQUEST 0x52455155u    /* "REQU" */
#define PD_MAGIC_MESSAGE 0x4d534747u    /* "MSGG" */
#define PD_MAGIC_WIN 0x57494e5fu        /* "WIN_" */
#define PD_MAGIC_FILE 0x46494c45u       /* "FILE" */
#define PD_MAGIC_FREED 0x46524545u      /* "FREE": a released user object */

enum pd_errhandler_kind {
    PD_ERRH_NULL = 0,
    PD_ERRH_FATAL,
    PD_ERRH_RETURN,
    PD_ERRH_THROW,      /* C++ bindings' handler; treated as RETURN from C */
    PD_ERRH_USER,       /* MPI_Comm_create_errhandler's */
};

struct ompi_errhandler_t {
    uint32_t magic;
    int kind;           /* enum pd_errhandler_kind */
    char name[32];
    int f_index;                    /* its Fortran value + 1; 0: none yet
                                       (core/handles.h) */
    MPI_Comm_errhandler_function *comm_fn;      /* PD_ERRH_USER */
    MPI_File_errhandler_function *file_fn;      /* ... made for files */
    struct ompi_errhandler_t *next;             /* api/errhandler.c's list */
};

enum pd_comm_kind {
    PD_COMM_NULL = 0,
    PD_COMM_WORLD,
    PD_COMM_SELF,
    PD_COMM_USER,
};

struct pd_comm_state;   /* runtime state, see core/comm.h */

struct ompi_communicator_t {
    uint32_t magic;
    int kind;                       /* enum pd_comm_kind */
    int rank;
    int size;
    struct ompi_errhandler_t *errhandler;
    struct pd_comm_state *state;    /* NULL until MPI_Init */
    char name[MPI_MAX_OBJECT_NAME];
    int f_index;                    /* its Fortran value + 1; 0: none yet
                                       (core/handles.h) */
};

struct pd_attr;                     /* see core/attr.c */

struct pd_type_node;                /* see core/typemap.h */
struct pd_type_contents;            /* see core/datatype.c */

struct ompi_datatype_t {
    uint32_t magic;
    int id;                         /* enum pd_type_id; PD_T_DERIVED */
    size_t size;                    /* MPI_Type_size: bytes of data */
    ptrdiff_t extent;               /* ub - lb: stride between items
                                       (negative: items run downward) */
    char name[MPI_MAX_OBJECT_NAME];
    /* Every element of an item is the predefined type base_id
     * (PD_BASE_MIXED: not all the same), base_count of them. */
    int base_id;
    size_t base_count;
    /* MPI's basic elements in an item (MPI_Get_elements): base_count,
     * but the two parts of a pair type (MPI_DOUBLE_INT) count apart. */
    size_t elements;
    /* Items of the type lie end to end as packed bytes from the buffer's
     * start, so data moves as count * extent plain bytes. */
    bool contiguous;
    bool committed;                 /* predefined types always are */
    /* MPI_Type_create_f90_*: a predefined type the program may not free,
     * one per (combiner, p, r), freed at MPI_Finalize. */
    bool permanent;
    struct pd_attr *attrs;          /* core/attr.c */
    int f_index;                    /* its Fortran value + 1; 0: none yet
                                       (core/handles.h) */
    /* Derived types (predefined: 0 and their extent, map NULL). */
    ptrdiff_t lb;                   /* MPI_Type_get_extent's lb */
    ptrdiff_t true_lb;
    size_t true_extent;
    size_t packed;                  /* bytes one item packs to */
    size_t align;                   /* of its most aligned element */
    const struct pd_type_node *map; /* where an item's bytes lie */
    struct pd_type_node *owned;     /* the nodes this type made */
    struct ompi_datatype_t **uses;  /* the types whose nodes map uses */
    size_t n_uses;
    int refs;                       /* its handle, and types made of it */
    struct pd_type_contents *contents;  /* its constructor's arguments */
};

struct ompi_op_t {
    uint32_t magic;
    int id;                         /* enum pd_op_id; PD_OP_USER */
    char name[32];
    MPI_User_function *user_fn;     /* MPI_Op_create's function */
    bool commutative;
    int f_index;                    /* its Fortran value + 1; 0: none yet
                                       (core/handles.h) */
    /* A user op: MPI_Op_create's reference and one per queued call that
     * will run it (atomic); MPI_Op_free lets go of the first and sets
     * user_freed, the last one frees it. */
    int refs;
    bool user_freed;
};

/* A group: its members as ranks of MPI_COMM_WORLD, in group order. */
struct ompi_group_t {
    uint32_t magic;
    int id;
    int size;
    int rank;                       /* this process's rank, or MPI_UNDEFINED */
    int *members;
    int refs;                       /* freed when it drops to 0 (atomic) */
    int f_index;                    /* its Fortran value + 1; 0: none yet
                                       (core/handles.h) */
};

struct pd_request_state;            /* see service/request.h */

struct ompi_request_t {
    uint32_t magic;
    int id;
    struct pd_request_state *state; /* NULL for MPI_REQUEST_NULL */
    int f_index;                    /* its Fortran value + 1; 0: none yet
                                       (core/handles.h) */
};

struct pd_message;                  /* see service/p2p_internal.h */

/* A message a matched probe (MPI_Mprobe) took for one MPI_Mrecv:
 * MPI_MESSAGE_NULL and MPI_MESSAGE_NO_PROC have neither comm nor msg. */
struct ompi_message_t {
    uint32_t magic;
    int id;
    struct ompi_communicator_t *comm;
    struct pd_message *msg;
    int f_index;                    /* its Fortran value + 1; 0: none yet
                                       (core/handles.h) */
};

struct pd_info_entry;               /* see core/info.h */

/* An info object: (key, value) strings in the order they were first
 * set. MPI_INFO_NULL and MPI_INFO_ENV hold none. */
struct ompi_info_t {
    uint32_t magic;
    int id;
    int f_index;
    struct pd_info_entry *entries;
    int count;
};

/* Objects pdmpi does not implement yet exist so that binaries load; they
 * carry only a magic word so misuse is detected. */
struct ompi_win_t { uint32_t magic; int id; };

/* An open file (api/file.c); MPI_FILE_NULL holds only its error handler,
 * which files opened later start with. Offsets of the view are in
 * etypes, from disp bytes into the file. */
struct ompi_file_t {
    uint32_t magic;
    int id;
    int f_index;                    /* as in struct ompi_errhandler_t */
    struct ompi_errhandler_t *errhandler;
    int fd;
    int amode;
    bool atomic;                    /* MPI_File_set_atomicity */
    struct ompi_communicator_t *comm;   /* a duplicate of the opener's */
    char *path;
    MPI_Offset disp;
    struct ompi_datatype_t *etype, *filetype;
    MPI_Offset pointer;             /* the individual file pointer */
    int shared_fd;                  /* the shared one's file, or -1 ... */
    int shared_err;                 /* ... and the errno why not */
    /* A split collective begun (MPI_File_read_all_begin & co.) and not
     * yet ended: its call and its outcome. */
    const char *split_call;
    int split_rc;
    MPI_Status split_status;
};

/* Open MPI's exported object sizes (ABI, see predefined.c). */
#define PD_ABI_COMM_SIZE 512
#define PD_ABI_TYPE_SIZE 512
#define PD_ABI_OP_SIZE 2048
#define PD_ABI_ERRH_SIZE 1024
#define PD_ABI_GROUP_SIZE 256
#define PD_ABI_INFO_SIZE 256
#define PD_ABI_REQUEST_SIZE 256
#define PD_ABI_MESSAGE_SIZE 256
#define PD_ABI_WIN_SIZE 512
#define PD_ABI_FILE_SIZE 1536

struct ompi_predefined_communicator_t {
    struct ompi_communicator_t obj;
    char pad[PD_ABI_COMM_SIZE - sizeof(struct ompi_communicator_t)];
};
struct ompi_predefined_datatype_t {
    struct ompi_datatype_t obj;
    char pad[PD_ABI_TYPE_SIZE - sizeof(struct ompi_datatype_t)];
};
struct ompi_predefined_op_t {
    struct ompi_op_t obj;
    char pad[PD_ABI_OP_SIZE - sizeof(struct ompi_op_t)];
};
struct ompi_predefined_errhandler_t {
    struct ompi_errhandler_t obj;
    char pad[PD_ABI_ERRH_SIZE - sizeof(struct ompi_errhandler_t)];
};
struct ompi_predefined_group_t {
    struct ompi_group_t obj;
    char pad[PD_ABI_GROUP_SIZE - sizeof(struct ompi_group_t)];
};
struct ompi_predefined_info_t {
    struct ompi_info_t obj;
    char pad[PD_ABI_INFO_SIZE - sizeof(struct ompi_info_t)];
};
struct ompi_predefined_request_t {
    struct ompi_request_t obj;
    char pad[PD_ABI_REQUEST_SIZE - sizeof(struct ompi_request_t)];
};
struct ompi_predefined_message_t {
    struct ompi_message_t obj;
    char pad[PD_ABI_MESSAGE_SIZE - sizeof(struct ompi_message_t)];
};
struct ompi_predefined_win_t {
    struct ompi_win_t obj;
    char pad[PD_ABI_WIN_SIZE - sizeof(struct ompi_win_t)];
};
struct ompi_predefined_file_t {
    struct ompi_file_t obj;
    char pad[PD_ABI_FILE_SIZE - sizeof(struct ompi_file_t)];
};

/* Exported by libmpi.so.40 but only declared by mpi.h under MPI-1
 * compatibility or not at all; binaries built elsewhere may copy them. */
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_lb;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_ub;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_c_complex;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_unavailable;
OMPI_DECLSPEC extern struct ompi_predefined_errhandler_t ompi_mpi_errors_throw_exceptions;
OMPI_DECLSPEC extern struct ompi_status_public_t ompi_status_empty;

#endif
