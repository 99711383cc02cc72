/*
 * Info objects (MPI_Info_*): ordered string keys with string values,
 * keys shorter than MPI_MAX_INFO_KEY, values than MPI_MAX_INFO_VAL.
 * Callers check the handles; these functions only keep the entries.
 */
#ifndef PD_CORE_INFO_H
#define PD_CORE_INFO_H

#include "core/objects.h"

struct pd_info_entry {
    char key[MPI_MAX_INFO_KEY];
    char *value;
};

/* A new empty info; NULL when out of memory. */
struct ompi_info_t *pd_info_new(void);
/* A new info holding src's entries; NULL when out of memory. */
struct ompi_info_t *pd_info_dup(const struct ompi_info_t *src);
void pd_info_free(struct ompi_info_t *info);
/* Set key (replacing its value, keeping its place); -1 out of memory. */
int pd_info_set(struct ompi_info_t *info, const char *key, const char *value);
/* key's value, or NULL. */
const char *pd_info_get(const struct ompi_info_t *info, const char *key);
/* Remove key; -1 when it is not there. */
int pd_info_delete(struct ompi_info_t *info, const char *key);

#endif
