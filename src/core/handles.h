/*
 * The integer (Fortran) names of handles, for MPI_X_c2f and MPI_X_f2c:
 * bindings and mixed-language programs pass handles as integers. Every
 * predefined handle has Open MPI's value (core/fortran_handles.h:
 * MPI_COMM_WORLD is 0, MPI_INT 39, ...); any other gets the next free
 * value the first time it is converted, and gives it back when freed.
 */
#ifndef PD_CORE_HANDLES_H
#define PD_CORE_HANDLES_H

enum pd_handle_kind {
    PD_HANDLE_COMM,
    PD_HANDLE_TYPE,
    PD_HANDLE_GROUP,
    PD_HANDLE_OP,
    PD_HANDLE_ERRH,
    PD_HANDLE_REQUEST,
    PD_HANDLE_INFO,
    PD_HANDLE_MESSAGE,
    PD_HANDLE_FILE,
    PD_HANDLE_KINDS
};

/* handle's integer name (a valid handle of kind); -1 when out of memory. */
int pd_handle_c2f(enum pd_handle_kind kind, void *handle);
/* The handle named value, or NULL when none is. */
void *pd_handle_f2c(enum pd_handle_kind kind, int value);
/* A handle of kind is being freed: its name is free again. */
void pd_handle_forget(enum pd_handle_kind kind, void *handle);

#endif
