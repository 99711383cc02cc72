/*
 * Unit check of the PMI-1 reply parser on lines Hydra and Slurm really
 * send (launch notes §3.1, §3.2) and on garbage. Exit 0 when all pass;
 * -v prints each refusal's reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/pmi1_parse.h"

static int failures;
static int verbose;

static void expect(int cond, const char *line, const char *what)
{
    if (cond)
        return;
    fprintf(stderr, "FAIL: '%.60s': %s\n", line, what);
    failures++;
}

/* Parse line and check {key, value} pairs; a NULL value must be absent. */
static void good(const char *line, const char *const pairs[][2], int n)
{
    struct pd_pmi1_reply r;
    char err[128];
    if (pd_pmi1_parse_reply(line, strlen(line), &r, err, sizeof err) < 0) {
        fprintf(stderr, "FAIL: '%.60s' refused: %s\n", line, err);
        failures++;
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *got = pd_pmi1_reply_get(&r, pairs[i][0]);
        const char *want = pairs[i][1];
        expect(want == NULL ? got == NULL
                            : got != NULL && strcmp(got, want) == 0,
               line, pairs[i][0]);
    }
}

static void bad(const char *line, size_t len, const char *reason)
{
    struct pd_pmi1_reply r;
    char err[128] = "";
    int rc = pd_pmi1_parse_reply(line, len, &r, err, sizeof err);
    expect(rc < 0, line, "accepted");
    expect(rc < 0 && strstr(err, reason) != NULL, line, reason);
    if (verbose && rc < 0)
        printf("refused '%.30s': %s\n", line, err);
}

static void hydra_lines(void)
{
    const char *const init[][2] = { { "cmd", "response_to_init" },
                                    { "rc", "0" },
                                    { "pmi_version", "1" } };
    good("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n", init,
         3);
    const char *const get[][2] = { { "cmd", "get_result" },
                                   { "rc", "0" },
                                   { "msg", "success" },
                                   { "value", "127.0.0.1:50001" } };
    good("cmd=get_result rc=0 msg=success value=127.0.0.1:50001\n", get, 4);
    const char *const miss[][2] = { { "rc", "-1" },
                                    { "msg", "key_addr-1_not_found" },
                                    { "value", "unknown" } };
    good("cmd=get_result rc=-1 msg=key_addr-1_not_found value=unknown", miss,
         3);
    const char *const out[][2] = { { "cmd", "barrier_out" }, { "rc", NULL } };
    good("cmd=barrier_out\n", out, 2);
    const char *const set[][2] = { { "cmd", "set" }, { "size", "4" } };
    good("cmd=set size=4\n", set, 2);
}

static void slurm_lines(void)
{
    const char *const init[][2] = { { "cmd", "response_to_init" },
                                    { "rc", "0" },
                                    { "pmi_subversion", "1" } };
    good("cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n", init,
         3);
    const char *const maxes[][2] = { { "kvsname_max", "256" },
                                     { "keylen_max", "64" },
                                     { "vallen_max", "1024" } };
    good("cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n",
         maxes, 3);
    const char *const miss[][2] = { { "rc", "1" },
                                    { "value", NULL },
                                    { "msg", NULL } };
    good("cmd=get_result rc=1\n", miss, 3);
    const char *const kvs[][2] = { { "kvsname", "6.0" } };
    good("cmd=my_kvsname rc=0 kvsname=6.0\r\n", kvs, 1);
}

static void odd_but_valid(void)
{
    const char *const eq[][2] = { { "value", "a=b" } };
    good("cmd=get_result rc=0 value=a=b\n", eq, 1);
    const char *const empty[][2] = { { "value", "" }, { "rc", "0" } };
    good("cmd=get_result value= rc=0", empty, 2);
    const char *const spaces[][2] = { { "cmd", "x" }, { "a", "1" } };
    good("  cmd=x   a=1  \n", spaces, 2);
    const char *const dup[][2] = { { "a", "1" } };
    good("cmd=x a=1 a=2", dup, 1);
}

static void garbage(void)
{
    char big[PD_PMI1_MAX_LINE + 2];
    bad("", 0, "empty line");
    bad("\n", 1, "empty line");
    bad("hello world\n", 12, "does not start with cmd=");
    bad("rc=0 cmd=x\n", 11, "does not start with cmd=");
    bad("cmd= rc=0", 9, "does not start with cmd=");
    bad("cmd=x rc\n", 9, "has no '='");
    bad("cmd=x =v\n", 9, "empty key");
    bad("cmd=x a=1\0b=2", 13, "NUL");
    bad("cmd=x a=1\nb=2", 13, "newline");

    memset(big, 'v', sizeof big);
    memcpy(big, "cmd=x v=", 8);
    bad(big, PD_PMI1_MAX_LINE + 1, "longer than 4096");
    bad(big, 1100, "value of");
    memset(big, 'k', sizeof big);
    memcpy(big, "cmd=x ", 6);
    big[6 + 64] = '=';
    bad(big, 6 + 64 + 2, "key of");

    char many[512] = "cmd=x";
    for (int i = 0; i < PD_PMI1_MAX_ATTRS; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), " a%d=1", i);
    bad(many, strlen(many), "more than 16");
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    hydra_lines();
    slurm_lines();
    odd_but_valid();
    garbage();
    if (failures) {
        fprintf(stderr, "pmi1_parse_check: %d failure(s)\n", failures);
        return 1;
    }
    printf("pmi1_parse_check: ok\n");
    return 0;
}
