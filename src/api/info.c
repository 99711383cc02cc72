/* Info objects (MPI_Info_*) and the communicator calls that take one:
 * MPI_Comm_dup_with_info, MPI_Comm_set_info, MPI_Comm_get_info. pdmpi
 * acts on no info hint, so a communicator's info in use is always empty,
 * as MPI allows. */
#include <string.h>

#include "api/api.h"
#include "core/info.h"
#include "service/comm_create.h"

#pragma weak MPI_Info_create = PMPI_Info_create
#pragma weak MPI_Info_set = PMPI_Info_set
#pragma weak MPI_Info_get = PMPI_Info_get
#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
#pragma weak MPI_Info_delete = PMPI_Info_delete
#pragma weak MPI_Info_dup = PMPI_Info_dup
#pragma weak MPI_Info_free = PMPI_Info_free
#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info

/* A valid info handle; MPI_INFO_NULL only where null_ok. */
static int pd_check_info(MPI_Comm comm, const char *call, MPI_Info info,
                         bool null_ok)
{
    if (!pd_info_is_valid(info))
        return pd_raise(comm, call, MPI_ERR_INFO, "info is not a valid info "
                        "handle");
    if (info == MPI_INFO_NULL && !null_ok)
        return pd_raise(comm, call, MPI_ERR_INFO, "info is MPI_INFO_NULL");
    return MPI_SUCCESS;
}

static int pd_check_key(const char *call, const char *key)
{
    if (key == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "key is NULL");
    size_t len = strlen(key);
    if (len == 0 || len >= MPI_MAX_INFO_KEY)
        return pd_raise(NULL, call, MPI_ERR_INFO_KEY, "key \"%.40s%s\" is %zu "
                        "characters; a key has 1 to %d", key,
                        len > 40 ? "..." : "", len, MPI_MAX_INFO_KEY - 1);
    return MPI_SUCCESS;
}

int PMPI_Info_create(MPI_Info *info)
{
    static const char call[] = "MPI_Info_create";
    PD_CHECK(pd_check_active(call));
    if (info == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "info is NULL");
    if ((*info = pd_info_new()) == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char call[] = "MPI_Info_set";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_info(NULL, call, info, false));
    if (info == MPI_INFO_ENV)
        return pd_raise(NULL, call, MPI_ERR_INFO, "MPI_INFO_ENV cannot be "
                        "changed");
    PD_CHECK(pd_check_key(call, key));
    if (value == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "value is NULL");
    size_t len = strlen(value);
    if (len == 0 || len >= MPI_MAX_INFO_VAL)
        return pd_raise(NULL, call, MPI_ERR_INFO_VALUE, "the value of \"%s\" "
                        "is %zu characters; a value has 1 to %d", key, len,
                        MPI_MAX_INFO_VAL - 1);
    if (pd_info_set(info, key, value) != 0)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value,
                  int *flag)
{
    static const char call[] = "MPI_Info_get";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_info(NULL, call, info, false));
    PD_CHECK(pd_check_key(call, key));
    if (valuelen < 0 || value == NULL || flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s",
                        valuelen < 0 ? "valuelen is negative"
                                     : value == NULL ? "value is NULL"
                                                     : "flag is NULL");
    const char *found = pd_info_get(info, key);
    *flag = found != NULL;
    if (found != NULL) {
        /* value holds valuelen characters and the terminating NUL. */
        size_t n = strlen(found);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, found, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen,
                           int *flag)
{
    static const char call[] = "MPI_Info_get_valuelen";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_info(NULL, call, info, false));
    PD_CHECK(pd_check_key(call, key));
    if (valuelen == NULL || flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        valuelen == NULL ? "valuelen" : "flag");
    const char *found = pd_info_get(info, key);
    *flag = found != NULL;
    if (found != NULL)
        *valuelen = (int)strlen(found);
    return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    static const char call[] = "MPI_Info_delete";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_info(NULL, call, info, false));
    PD_CHECK(pd_check_key(call, key));
    if (pd_info_delete(info, key) != 0)
        return pd_raise(NULL, call, MPI_ERR_INFO_NOKEY, "the info has no key "
                        "\"%s\"", key);
    return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char call[] = "MPI_Info_dup";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_info(NULL, call, info, false));
    if (newinfo == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "newinfo is NULL");
    if ((*newinfo = pd_info_dup(info)) == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info *info)
{
    static const char call[] = "MPI_Info_free";
    PD_CHECK(pd_check_active(call));
    if (info == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "info is NULL");
    PD_CHECK(pd_check_info(NULL, call, *info, false));
    if (*info == MPI_INFO_ENV)
        return pd_raise(NULL, call, MPI_ERR_INFO, "MPI_INFO_ENV is predefined "
                        "and cannot be freed");
    pd_info_free(*info);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char call[] = "MPI_Info_get_nkeys";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_info(NULL, call, info, false));
    if (nkeys == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "nkeys is NULL");
    *nkeys = info->count;
    return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char call[] = "MPI_Info_get_nthkey";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_info(NULL, call, info, false));
    if (key == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "key is NULL");
    if (n < 0 || n >= info->count)
        return pd_raise(NULL, call, MPI_ERR_ARG, "n %d is not below the "
                        "info's %d keys", n, info->count);
    strcpy(key, info->entries[n].key);
    return MPI_SUCCESS;
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_dup_with_info";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_info(comm, call, info, true));
    if (newcomm == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "newcomm is NULL");
    struct pd_fail fail;
    if (pd_comm_dup(comm, newcomm, &fail) != MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char call[] = "MPI_Comm_set_info";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    return pd_check_info(comm, call, info, true);
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char call[] = "MPI_Comm_get_info";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (info_used == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "info_used is NULL");
    if ((*info_used = pd_info_new()) == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}
