#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/info.h"

struct ompi_info_t *pd_info_new(void)
{
    struct ompi_info_t *info = calloc(1, sizeof(*info));
    if (info != NULL)
        info->magic = PD_MAGIC_INFO;
    return info;
}

struct ompi_info_t *pd_info_dup(const struct ompi_info_t *src)
{
    struct ompi_info_t *info = pd_info_new();
    for (int i = 0; info != NULL && i < src->count; i++)
        if (pd_info_set(info, src->entries[i].key,
                        src->entries[i].value) != 0) {
            pd_info_free(info);
            info = NULL;
        }
    return info;
}

void pd_info_free(struct ompi_info_t *info)
{
    pd_handle_forget(PD_HANDLE_INFO, info);
    for (int i = 0; i < info->count; i++)
        free(info->entries[i].value);
    free(info->entries);
    info->magic = PD_MAGIC_FREED;
    free(info);
}

static int pd_info_find(const struct ompi_info_t *info, const char *key)
{
    for (int i = 0; i < info->count; i++)
        if (strcmp(info->entries[i].key, key) == 0)
            return i;
    return -1;
}

int pd_info_set(struct ompi_info_t *info, const char *key, const char *value)
{
    char *copy = strdup(value);
    if (copy == NULL)
        return -1;
    int i = pd_info_find(info, key);
    if (i >= 0) {
        free(info->entries[i].value);
        info->entries[i].value = copy;
        return 0;
    }
    struct pd_info_entry *grown =
        realloc(info->entries, (size_t)(info->count + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(copy);
        return -1;
    }
    info->entries = grown;
    struct pd_info_entry *e = &info->entries[info->count++];
    strncpy(e->key, key, sizeof(e->key) - 1);
    e->key[sizeof(e->key) - 1] = '\0';
    e->value = copy;
    return 0;
}

const char *pd_info_get(const struct ompi_info_t *info, const char *key)
{
    int i = pd_info_find(info, key);
    return i >= 0 ? info->entries[i].value : NULL;
}

int pd_info_delete(struct ompi_info_t *info, const char *key)
{
    int i = pd_info_find(info, key);
    if (i < 0)
        return -1;
    free(info->entries[i].value);
    memmove(&info->entries[i], &info->entries[i + 1],
            (size_t)(info->count - i - 1) * sizeof(info->entries[0]));
    info->count--;
    return 0;
}
