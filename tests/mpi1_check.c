/*
 * mpi1_check.c - MPI-1's names: the attribute calls deprecated in MPI-2.0
 * (MPI_Keyval_create, MPI_Attr_put/get/delete, MPI_Keyval_free) and the
 * functions removed in MPI-3.0 that Open MPI's library still exports
 * (MPI_Address, MPI_Type_hvector/hindexed/struct, MPI_Type_extent/lb/ub,
 * MPI_Errhandler_create/set/get), each against its modern counterpart or
 * an answer worked out here.
 *
 * Open MPI's mpi.h hides the removed prototypes unless asked for them
 * (OMPI_OMIT_MPI1_COMPAT_DECLS 0), as a program written for MPI-1 does. A
 * plain MPI program: the same output under Open MPI's mpirun.
 */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#include <mpi.h>

/* Calling the deprecated names is the point. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <stdio.h>
#include <string.h>

#include "tap_harness.h"

/* Calls of the callbacks below, and the value the copy hands on. */
static int copies, deletes;
static long deleted_value;

static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in,
                         void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    copies++;
    *(long *)out = (long)in + *(long *)extra;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_note(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    deletes++;
    deleted_value = (long)value;
    return MPI_SUCCESS;
}

/* A keyval from MPI_Keyval_create: put, get, copied by MPI_Comm_dup
 * through the copy callback, deleted through the delete callback, freed;
 * a predefined attribute read by MPI_Attr_get as by MPI_Comm_get_attr. */
static void check_attributes(void)
{
    struct verdict v = {""};
    long step = 10;
    int keyval = MPI_KEYVAL_INVALID, flag = 0;
    MPI_Comm comm, copy;
    copies = deletes = 0;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    check_rc(&v, "MPI_Keyval_create",
             MPI_Keyval_create(copy_plus_one, delete_note, &keyval, &step));
    check_rc(&v, "MPI_Attr_put",
             MPI_Attr_put(comm, keyval, (void *)(long)(100 + world_rank)));
    void *got = NULL;
    check_rc(&v, "MPI_Attr_get", MPI_Attr_get(comm, keyval, &got, &flag));
    if (!flag || (long)got != 100 + world_rank)
        fail(&v, "MPI_Attr_get: flag %d, value %ld; expected 1, %d", flag,
             (long)got, 100 + world_rank);
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(comm, &copy));
    got = NULL;
    flag = 0;
    check_rc(&v, "MPI_Comm_get_attr",
             MPI_Comm_get_attr(copy, keyval, &got, &flag));
    if (copies != 1 || !flag || (long)got != 110 + world_rank)
        fail(&v, "after MPI_Comm_dup: %d copies, flag %d, value %ld; "
             "expected 1, 1, %d", copies, flag, (long)got, 110 + world_rank);
    check_rc(&v, "MPI_Attr_delete", MPI_Attr_delete(comm, keyval));
    check_rc(&v, "MPI_Attr_get", MPI_Attr_get(comm, keyval, &got, &flag));
    if (deletes != 1 || deleted_value != 100 + world_rank || flag)
        fail(&v, "MPI_Attr_delete: %d deletes of %ld, still there: %d",
             deletes, deleted_value, flag);
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&copy));
    if (deletes != 2 || deleted_value != 110 + world_rank)
        fail(&v, "freeing the duplicate: %d deletes, last of %ld", deletes,
             deleted_value);
    check_rc(&v, "MPI_Keyval_free", MPI_Keyval_free(&keyval));
    if (keyval != MPI_KEYVAL_INVALID)
        fail(&v, "MPI_Keyval_free left the keyval %d", keyval);

    /* Freeing a keyval in use leaves its attribute: still read, and
     * deleted through its callback, by the keyval's value kept aside. */
    int saved;
    check_rc(&v, "MPI_Keyval_create",
             MPI_Keyval_create(copy_plus_one, delete_note, &keyval, &step));
    saved = keyval;
    check_rc(&v, "MPI_Attr_put", MPI_Attr_put(comm, keyval, (void *)7L));
    check_rc(&v, "MPI_Keyval_free", MPI_Keyval_free(&keyval));
    got = NULL;
    flag = 0;
    check_rc(&v, "MPI_Attr_get", MPI_Attr_get(comm, saved, &got, &flag));
    check_rc(&v, "MPI_Attr_delete", MPI_Attr_delete(comm, saved));
    if (!flag || (long)got != 7 || deletes != 3 || deleted_value != 7)
        fail(&v, "an attribute of a freed keyval: flag %d, value %ld, %d "
             "deletes of %ld; expected 1, 7, 3, 7", flag, (long)got,
             deletes, deleted_value);

    int *tag_ub = NULL, *modern = NULL, flag2 = 0;
    check_rc(&v, "MPI_Attr_get",
             MPI_Attr_get(comm, MPI_TAG_UB, &tag_ub, &flag));
    check_rc(&v, "MPI_Comm_get_attr",
             MPI_Comm_get_attr(comm, MPI_TAG_UB, &modern, &flag2));
    if (!flag || !flag2 || tag_ub == NULL || modern == NULL ||
        *tag_ub != *modern || *tag_ub < 32767)
        fail(&v, "MPI_TAG_UB by MPI_Attr_get %d (flag %d), by "
             "MPI_Comm_get_attr %d (flag %d)", tag_ub ? *tag_ub : -1, flag,
             modern ? *modern : -1, flag2);
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&comm));
    report(&v, "MPI_Keyval_create, MPI_Attr_put/get/delete and "
           "MPI_Keyval_free, with copy and delete callbacks, an attribute "
           "that outlives its keyval, and MPI_TAG_UB");
}

static int handled_class = MPI_SUCCESS;

static void note_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    MPI_Error_class(*code, &handled_class);
}

/* MPI_Errhandler_create/set/get: the handler is called with the error's
 * class and the call returns; get returns what set put. */
static void check_errhandlers(void)
{
    struct verdict v = {""};
    MPI_Comm comm;
    MPI_Errhandler mine = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    check_rc(&v, "MPI_Errhandler_create",
             MPI_Errhandler_create(note_error, &mine));
    check_rc(&v, "MPI_Errhandler_set", MPI_Errhandler_set(comm, mine));
    check_rc(&v, "MPI_Errhandler_get", MPI_Errhandler_get(comm, &got));
    if (got != mine)
        fail(&v, "MPI_Errhandler_get did not return the handler set");
    if (got != MPI_ERRHANDLER_NULL)
        check_rc(&v, "MPI_Errhandler_free", MPI_Errhandler_free(&got));
    int x = 0;
    handled_class = MPI_SUCCESS;
    MPI_Send(&x, 1, MPI_INT, world_size, 0, comm);     /* no such rank */
    if (handled_class != MPI_ERR_RANK)
        fail(&v, "the handler saw class %d, expected MPI_ERR_RANK (%d)",
             handled_class, MPI_ERR_RANK);
    check_rc(&v, "MPI_Errhandler_set",
             MPI_Errhandler_set(comm, MPI_ERRORS_RETURN));
    check_rc(&v, "MPI_Errhandler_get", MPI_Errhandler_get(comm, &got));
    if (got != MPI_ERRORS_RETURN)
        fail(&v, "MPI_Errhandler_get after setting MPI_ERRORS_RETURN");
    check_rc(&v, "MPI_Errhandler_free", MPI_Errhandler_free(&mine));
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&comm));
    report(&v, "MPI_Errhandler_create, MPI_Errhandler_set and "
           "MPI_Errhandler_get: the handler sees MPI_ERR_RANK");
}

/* The bytes type packs from buf, into out (at most cap); their count. */
static int packed(MPI_Datatype type, const void *buf, char *out, int cap,
                  struct verdict *v)
{
    int position = 0;
    check_rc(v, "MPI_Pack",
             MPI_Pack(buf, 1, type, out, cap, &position, MPI_COMM_WORLD));
    return position;
}

/* Each removed constructor builds a type that packs the same bytes as
 * its replacement, with the same extent; MPI_Address differences are
 * byte offsets; MPI_Type_extent/lb/ub of a resized type. */
static void check_types(void)
{
    struct verdict v = {""};
    struct { int i[3]; double d; char c; } s;
    int ints[32];
    for (int k = 0; k < 32; k++)
        ints[k] = 1000 * world_rank + k;
    s.i[0] = 1; s.i[1] = 2; s.i[2] = 3; s.d = 4.5; s.c = 'x';

    MPI_Aint base = 0, at_d = 0, at_c = 0, modern = 0;
    check_rc(&v, "MPI_Address", MPI_Address(&s, &base));
    check_rc(&v, "MPI_Address", MPI_Address(&s.d, &at_d));
    check_rc(&v, "MPI_Address", MPI_Address(&s.c, &at_c));
    check_rc(&v, "MPI_Get_address", MPI_Get_address(&s.d, &modern));
    if (at_d - base != (MPI_Aint)((char *)&s.d - (char *)&s) ||
        at_c - base != (MPI_Aint)((char *)&s.c - (char *)&s) ||
        modern != at_d)
        fail(&v, "MPI_Address offsets %ld and %ld, expected %ld and %ld",
             (long)(at_d - base), (long)(at_c - base),
             (long)((char *)&s.d - (char *)&s),
             (long)((char *)&s.c - (char *)&s));

    MPI_Datatype old[3], now[3];
    int lens[3] = { 3, 1, 1 };
    MPI_Aint displs[3] = { 0, at_d - base, at_c - base };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR };
    check_rc(&v, "MPI_Type_struct",
             MPI_Type_struct(3, lens, displs, types, &old[0]));
    check_rc(&v, "MPI_Type_create_struct",
             MPI_Type_create_struct(3, lens, displs, types, &now[0]));
    check_rc(&v, "MPI_Type_hvector",
             MPI_Type_hvector(3, 2, 5 * sizeof(int), MPI_INT, &old[1]));
    check_rc(&v, "MPI_Type_create_hvector",
             MPI_Type_create_hvector(3, 2, 5 * sizeof(int), MPI_INT,
                                     &now[1]));
    int hlens[3] = { 2, 1, 3 };
    MPI_Aint hdispls[3] = { 20 * sizeof(int), 0, 9 * sizeof(int) };
    check_rc(&v, "MPI_Type_hindexed",
             MPI_Type_hindexed(3, hlens, hdispls, MPI_INT, &old[2]));
    check_rc(&v, "MPI_Type_create_hindexed",
             MPI_Type_create_hindexed(3, hlens, hdispls, MPI_INT, &now[2]));
    const char *names[3] = { "MPI_Type_struct", "MPI_Type_hvector",
                             "MPI_Type_hindexed" };
    const void *bufs[3] = { &s, ints, ints };
    for (int t = 0; t < 3 && v.detail[0] == '\0'; t++) {
        check_rc(&v, "MPI_Type_commit", MPI_Type_commit(&old[t]));
        check_rc(&v, "MPI_Type_commit", MPI_Type_commit(&now[t]));
        char a[256], b[256];
        int na = packed(old[t], bufs[t], a, sizeof(a), &v);
        int nb = packed(now[t], bufs[t], b, sizeof(b), &v);
        MPI_Aint ext_old = -1, ext_now = -2, lb = 0;
        check_rc(&v, "MPI_Type_extent", MPI_Type_extent(old[t], &ext_old));
        check_rc(&v, "MPI_Type_get_extent",
                 MPI_Type_get_extent(now[t], &lb, &ext_now));
        if (na != nb || memcmp(a, b, (size_t)na) != 0 || ext_old != ext_now)
            fail(&v, "%s: %d bytes packed, extent %ld; its replacement %d "
                 "bytes, extent %ld", names[t], na, (long)ext_old, nb,
                 (long)ext_now);
    }
    for (int t = 0; t < 3; t++) {
        MPI_Type_free(&old[t]);
        MPI_Type_free(&now[t]);
    }

    MPI_Datatype resized;
    MPI_Aint lb = -1, ub = -1, extent = -1;
    check_rc(&v, "MPI_Type_create_resized",
             MPI_Type_create_resized(MPI_INT, 8, 40, &resized));
    check_rc(&v, "MPI_Type_lb", MPI_Type_lb(resized, &lb));
    check_rc(&v, "MPI_Type_ub", MPI_Type_ub(resized, &ub));
    check_rc(&v, "MPI_Type_extent", MPI_Type_extent(resized, &extent));
    if (lb != 8 || ub != 48 || extent != 40)
        fail(&v, "a type resized to lb 8, extent 40: lb %ld, ub %ld, "
             "extent %ld", (long)lb, (long)ub, (long)extent);
    MPI_Type_free(&resized);
    report(&v, "MPI_Address, MPI_Type_struct/hvector/hindexed like their "
           "replacements, MPI_Type_extent/lb/ub of a resized type");
}

/* Bad arguments are errors of the right class. */
static void check_errors(void)
{
    struct verdict v = {""};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Aint extent;
    int flag, rc;
    void *value;
    if ((rc = error_class(MPI_Type_extent(MPI_DATATYPE_NULL, &extent))) !=
        MPI_ERR_TYPE)
        fail(&v, "MPI_Type_extent of MPI_DATATYPE_NULL: class %d, expected "
             "MPI_ERR_TYPE", rc);
    if ((rc = error_class(MPI_Attr_get(MPI_COMM_WORLD, 123456, &value,
                                       &flag))) != MPI_ERR_KEYVAL &&
        rc != MPI_ERR_OTHER)
        fail(&v, "MPI_Attr_get of keyval 123456: class %d, expected "
             "MPI_ERR_KEYVAL", rc);
    if ((rc = error_class(MPI_Errhandler_set(MPI_COMM_NULL,
                                             MPI_ERRORS_RETURN))) !=
        MPI_ERR_COMM)
        fail(&v, "MPI_Errhandler_set on MPI_COMM_NULL: class %d, expected "
             "MPI_ERR_COMM", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    report(&v, "MPI_Type_extent, MPI_Attr_get and MPI_Errhandler_set "
           "refuse bad handles with the right class");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    on_open_mpi = library_is_open_mpi();
    check_attributes();
    check_errhandlers();
    check_types();
    check_errors();
    int rc = finish();
    MPI_Finalize();
    return rc;
}
