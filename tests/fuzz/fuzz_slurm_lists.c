/*
 * Fuzz target: Slurm's compressed lists as pdmpi reads them
 * (src/boot/world_slurm.c): the first host of a host list
 * (SLURM_STEP_NODELIST, "node[001-004],gpu2") and a node's task count in
 * a tasks-per-node list (SLURM_STEP_TASKS_PER_NODE, "2(x3),1").
 *
 * Input: byte 0 picks the size of the host buffer (1-64, allocated to
 * exactly that size so an overrun is caught), bytes 1-2 the node index,
 * the rest is the list.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/world.h"

static void require(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t hostlen = 1 + data[0] % 64;
    int node = (data[1] << 8 | data[2]) - 16; /* a few negative ones too */
    char *list = malloc(size - 3 + 1);
    char *host = malloc(hostlen);
    require(list != NULL && host != NULL);
    memcpy(list, data + 3, size - 3);
    list[size - 3] = '\0';

    if (pd_slurm_first_host(list, host, hostlen) == 0) {
        size_t len = strnlen(host, hostlen);
        require(len > 0 && len < hostlen);
        /* One host name: no list, bracket or blank left in it. */
        for (size_t i = 0; i < len; i++)
            require(host[i] != ',' && host[i] != '[' && host[i] != ']' &&
                    !isspace((unsigned char)host[i]));
    }

    int tasks = pd_slurm_tasks_on_node(list, node);
    require(tasks >= -1);
    if (node < 0)
        require(tasks == -1);

    free(host);
    free(list);
    return 0;
}
