/*
 * info_check.c - info objects and the communicator calls that take one.
 *
 * MPI_Info_set/get/get_valuelen/delete/dup/free/get_nkeys/get_nthkey
 * against the entries this program set (keys in the order first set, a
 * replaced value keeping its place, a value cut to valuelen), the error
 * classes for a missing key and for keys and values too long, and
 * MPI_Comm_dup_with_info, MPI_Comm_set_info, MPI_Comm_get_info. A plain
 * MPI program: the same output under Open MPI's mpirun.
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

#include "tap_harness.h"

static void check_entries(void)
{
    struct verdict v = {""};
    MPI_Info info;
    check_rc(&v, "MPI_Info_create", MPI_Info_create(&info));
    check_rc(&v, "MPI_Info_set", MPI_Info_set(info, "alpha", "1"));
    check_rc(&v, "MPI_Info_set", MPI_Info_set(info, "beta", "two"));
    check_rc(&v, "MPI_Info_set", MPI_Info_set(info, "gamma", "3.0"));
    check_rc(&v, "MPI_Info_set", MPI_Info_set(info, "alpha", "uno"));
    int nkeys = -1, flag = -1, len = -1;
    check_rc(&v, "MPI_Info_get_nkeys", MPI_Info_get_nkeys(info, &nkeys));
    char key[MPI_MAX_INFO_KEY], value[MPI_MAX_INFO_VAL];
    const char *order[3] = { "alpha", "beta", "gamma" };
    for (int i = 0; i < 3 && nkeys == 3; i++) {
        check_rc(&v, "MPI_Info_get_nthkey", MPI_Info_get_nthkey(info, i, key));
        if (strcmp(key, order[i]) != 0)
            fail(&v, "key %d is \"%s\", expected \"%s\"", i, key, order[i]);
    }
    check_rc(&v, "MPI_Info_get",
             MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL - 1, value, &flag));
    if (nkeys != 3 || !flag || strcmp(value, "uno") != 0)
        fail(&v, "%d keys, alpha is \"%s\" (flag %d); expected 3 and \"uno\"",
             nkeys, value, flag);
    check_rc(&v, "MPI_Info_get", MPI_Info_get(info, "beta", 2, value, &flag));
    check_rc(&v, "MPI_Info_get_valuelen",
             MPI_Info_get_valuelen(info, "gamma", &len, &flag));
    if (strcmp(value, "tw") != 0 || len != 3 || !flag)
        fail(&v, "beta cut to 2 is \"%s\", gamma's length %d", value, len);
    check_rc(&v, "MPI_Info_get", MPI_Info_get(info, "delta", 10, value, &flag));
    if (flag)
        fail(&v, "a key never set was found");

    MPI_Info copy;
    check_rc(&v, "MPI_Info_dup", MPI_Info_dup(info, &copy));
    check_rc(&v, "MPI_Info_delete", MPI_Info_delete(info, "beta"));
    check_rc(&v, "MPI_Info_get_nkeys", MPI_Info_get_nkeys(info, &nkeys));
    check_rc(&v, "MPI_Info_get_nthkey", MPI_Info_get_nthkey(info, 1, key));
    if (nkeys != 2 || strcmp(key, "gamma") != 0)
        fail(&v, "after deleting beta: %d keys, the second \"%s\"", nkeys,
             key);
    check_rc(&v, "MPI_Info_get", MPI_Info_get(copy, "beta", 10, value, &flag));
    if (!flag || strcmp(value, "two") != 0)
        fail(&v, "the duplicate lost beta with its original");
    check_rc(&v, "MPI_Info_free", MPI_Info_free(&copy));
    check_rc(&v, "MPI_Info_free", MPI_Info_free(&info));
    if (info != MPI_INFO_NULL || copy != MPI_INFO_NULL)
        fail(&v, "MPI_Info_free did not set the handle to MPI_INFO_NULL");
    report(&v, "info entries: set, replace in place, get (cut to "
           "valuelen), valuelen, nthkey order, delete, dup, free");
}

static void check_errors(void)
{
    struct verdict v = {""};
    MPI_Info info;
    check_rc(&v, "MPI_Info_create", MPI_Info_create(&info));
    char long_key[MPI_MAX_INFO_KEY + 8], long_value[MPI_MAX_INFO_VAL + 8];
    memset(long_key, 'k', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    memset(long_value, 'v', sizeof(long_value) - 1);
    long_value[sizeof(long_value) - 1] = '\0';
    int cls = error_class(MPI_Info_delete(info, "missing"));
    if (cls != MPI_ERR_INFO_NOKEY)
        fail(&v, "deleting a missing key: class %d, expected "
             "MPI_ERR_INFO_NOKEY", cls);
    cls = error_class(MPI_Info_set(info, long_key, "x"));
    if (cls != MPI_ERR_INFO_KEY)
        fail(&v, "a key of %d characters: class %d, expected "
             "MPI_ERR_INFO_KEY", (int)strlen(long_key), cls);
    cls = error_class(MPI_Info_set(info, "k", long_value));
    if (cls != MPI_ERR_INFO_VALUE)
        fail(&v, "a value of %d characters: class %d, expected "
             "MPI_ERR_INFO_VALUE", (int)strlen(long_value), cls);
    MPI_Info_free(&info);
    report(&v, "MPI_ERR_INFO_NOKEY, MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE");
}

static void check_comm_info(void)
{
    struct verdict v = {""};
    MPI_Info info, used;
    MPI_Comm dup;
    check_rc(&v, "MPI_Info_create", MPI_Info_create(&info));
    check_rc(&v, "MPI_Info_set", MPI_Info_set(info, "mpi_assert_no_any_tag",
                                              "true"));
    check_rc(&v, "MPI_Comm_dup_with_info",
             MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup));
    int one = 1, sum = 0, nkeys = -1;
    check_rc(&v, "MPI_Allreduce",
             MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
    check_rc(&v, "MPI_Comm_set_info", MPI_Comm_set_info(dup, info));
    check_rc(&v, "MPI_Comm_get_info", MPI_Comm_get_info(dup, &used));
    check_rc(&v, "MPI_Info_get_nkeys", MPI_Info_get_nkeys(used, &nkeys));
    if (sum != world_size || nkeys < 0)
        fail(&v, "the duplicate summed %d; its info has %d keys", sum, nkeys);
    MPI_Info_free(&used);
    MPI_Info_free(&info);
    MPI_Comm_free(&dup);
    report(&v, "MPI_Comm_dup_with_info, MPI_Comm_set_info, "
           "MPI_Comm_get_info");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (world_rank == 0)
        printf("# info_check on %d rank(s)\n", world_size);
    check_entries();
    check_errors();
    check_comm_info();
    int status = finish();
    MPI_Finalize();
    return status;
}
