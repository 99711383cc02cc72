/* The algorithms' names, as PDMPI_ALGO_ALLREDUCE takes them and the
 * statistics print them: apart from algo.c, which reads the runtime's
 * configuration, so that pdmpi_info can check a value without it. */
#include <string.h>

#include "core/algo.h"

int pd_algo_parse(const char *text, enum pd_algo *algo)
{
    if (strcmp(text, "auto") == 0)
        *algo = PD_ALGO_DEFAULT;
    else if (strcmp(text, "ring") == 0)
        *algo = PD_ALGO_RING;
    else if (strcmp(text, "bcube") == 0)
        *algo = PD_ALGO_BCUBE;
    else if (strcmp(text, "pipelined") == 0)
        *algo = PD_ALGO_PIPELINED;
    else
        return -1;
    return 0;
}

const char *pd_algo_name(enum pd_algo algo)
{
    switch (algo) {
    case PD_ALGO_RING: return "ring";
    case PD_ALGO_BCUBE: return "bcube";
    case PD_ALGO_BINOMIAL: return "binomial";
    case PD_ALGO_CARRIED: return "in the agreement";
    case PD_ALGO_PIPELINED: return "pipelined";
    default: return "default";
    }
}
