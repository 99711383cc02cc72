/* Attribute caching on communicators and datatypes (keyvals, copy and
 * delete callbacks) and the predefined attributes of MPI_COMM_WORLD. */
#ifndef PD_CORE_ATTR_H
#define PD_CORE_ATTR_H

#include "core/comm.h"

/* What a keyval is for; a keyval of one kind is invalid on the other. */
enum pd_attr_kind {
    PD_ATTR_COMM,
    PD_ATTR_TYPE,
};

/* A datatype keyval's callbacks are passed cast to these types. */
int pd_keyval_create(enum pd_attr_kind kind,
                     MPI_Comm_copy_attr_function *copy,
                     MPI_Comm_delete_attr_function *del, void *extra,
                     int *keyval);
/* -1 if keyval is not one of pd_keyval_create's live keyvals of kind. */
int pd_keyval_free(enum pd_attr_kind kind, int keyval);
bool pd_keyval_is_user(enum pd_attr_kind kind, int keyval);
/* One of pd_keyval_create's keyvals of kind, freed or not: an attribute
 * set under a keyval outlives the keyval's MPI_Comm_free_keyval, and may
 * still be read and deleted through it (MPI-1 5.7.1, MPI-4.1 7.7.2). */
bool pd_keyval_is_known(enum pd_attr_kind kind, int keyval);
bool pd_keyval_is_predefined(int keyval);

/* handle is a communicator or a datatype, as kind says. An MPI error
 * class; a callback's non-success code is returned as is. */
int pd_attr_set(enum pd_attr_kind kind, void *handle, int keyval,
                void *value, struct pd_fail *fail);
void pd_attr_get(enum pd_attr_kind kind, void *handle, int keyval,
                 void **value, int *found);
int pd_attr_delete(enum pd_attr_kind kind, void *handle, int keyval,
                   struct pd_fail *fail);

/* MPI_Comm_dup, MPI_Type_dup: run every copy callback of handle's
 * attributes into dst; -1 with fail set if one fails. */
int pd_attr_copy_all(enum pd_attr_kind kind, void *handle, void *dst,
                     struct pd_fail *fail);
/* MPI_Comm_free, MPI_Type_free, and MPI_COMM_SELF at MPI_Finalize: run
 * every delete callback, the newest attribute first; -1 if one fails. */
int pd_attr_delete_all(enum pd_attr_kind kind, void *handle);

#endif
