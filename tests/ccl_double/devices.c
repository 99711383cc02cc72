/* Device counts of the runtime doubles (devices.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "devices.h"

/* Entries of a comma list; blank (only spaces) means none. */
static int count_list_entries(const char *list)
{
    int entries = 0, in_entry = 0;

    for (const char *p = list; *p; p++) {
        if (*p == ',')
            in_entry = 0;
        else if (!isspace((unsigned char)*p) && !in_entry) {
            in_entry = 1;
            entries++;
        }
    }
    return entries;
}

int ccl_visible_devices(const char *visible_var, const char *forced_var,
                        int dflt, int max, const char *who)
{
    const char *visible = getenv(visible_var);
    const char *forced = getenv(forced_var);

    if (visible)
        return count_list_entries(visible);
    if (forced && *forced) {
        char *end;
        long n;

        errno = 0;
        n = strtol(forced, &end, 10);
        if (errno == 0 && *end == '\0' && n >= 0 && n <= max)
            return (int)n;
        fprintf(stderr, "%s: ignoring %s=\"%s\" (want an integer in [0, "
                "%d]); using %d devices\n", who, forced_var, forced, max,
                dflt);
    }
    return dflt;
}
