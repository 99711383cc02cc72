/*
 * Unit check of the Slurm variable parsers: the first host of a compressed
 * host list, and the task count of one node in a tasks-per-node list, on
 * the forms the launch notes list and on garbage. Exit 0 when all pass.
 */
#include <stdio.h>
#include <string.h>

#include "boot/world.h"

static int failures;

static void first_host(const char *list, const char *want)
{
    char host[64];
    int rc = pd_slurm_first_host(list, host, sizeof(host));
    if (want == NULL ? rc == 0 : (rc != 0 || strcmp(host, want) != 0)) {
        fprintf(stderr, "FAIL: first host of '%s': got %s, want %s\n", list,
                rc == 0 ? host : "(refused)", want ? want : "(refused)");
        failures++;
    }
}

static void tasks(const char *list, int node, int want)
{
    int got = pd_slurm_tasks_on_node(list, node);
    if (got != want) {
        fprintf(stderr, "FAIL: tasks of node %d in '%s': got %d, want %d\n",
                node, list, got, want);
        failures++;
    }
}

int main(void)
{
    first_host("localhost", "localhost");
    first_host("r4i2n[2-4]", "r4i2n2");
    first_host("node[001,007-015],host2", "node001");
    first_host("host2,node[001-002]", "host2");
    first_host("n[07-09]-ib,x", "n07-ib");
    first_host("gpu[3]", "gpu3");
    first_host("", NULL);
    first_host("node[", NULL);
    first_host("node[a-b]", NULL);
    first_host("node[1-2", NULL);
    first_host("a[1]b[2]", NULL);
    first_host(",node1", NULL);
    first_host("node]1", NULL);
    first_host("node 1", NULL);
    first_host("n[1-2] x", NULL);
    first_host("n[07-09]\nib,x", NULL);

    tasks("2", 0, 2);
    tasks("2(x3),1", 0, 2);
    tasks("2(x3),1", 2, 2);
    tasks("2(x3),1", 3, 1);
    tasks("2(x3),1", 4, -1);
    tasks("5,4(x3)", 3, 4);
    tasks("2(x", 0, -1);
    tasks("2(x0)", 0, -1);
    tasks("abc", 0, -1);
    tasks("2,,3", 1, -1);
    tasks("2", -1, -1);

    if (failures == 0)
        printf("slurm_parse_check: ok\n");
    return failures == 0 ? 0 : 1;
}
