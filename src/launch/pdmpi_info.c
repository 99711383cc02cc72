/*
 * pdmpi_info: what this pdmpi was built with, what it finds on this
 * machine now, and every PDMPI_* variable with its default, its value
 * here and whether MPI_Init would accept it -- the variables from the
 * library's own table (core/config.c), so the list cannot drift from what
 * MPI_Init reads.
 *
 *   pdmpi_info              for a person
 *   pdmpi_info --parsable   section:key:value lines, like ompi_info's
 *   pdmpi_info --json       one JSON object
 *
 * It starts no job and needs no launcher: the device libraries are only
 * loaded and asked their version and device count.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "core/config.h"

#ifdef PD_HAVE_CUDA_H
#include <cuda_runtime_api.h>
#define PD_CUDART_BUILT CUDART_VERSION
#else
#define PD_CUDART_BUILT 13000       /* the soname pdmpi looks for first */
#endif

enum format { PD_HUMAN, PD_PARSABLE, PD_JSON };

/* One fact: a section ("build", "runtime") and a key with its value. */
struct fact {
    const char *section;
    char key[48];
    char value[400];
};

static struct fact facts[64];
static int nfacts;

__attribute__((format(printf, 3, 4)))
static void add(const char *section, const char *key, const char *fmt, ...)
{
    if (nfacts == (int)(sizeof(facts) / sizeof(facts[0])))
        return;
    struct fact *f = &facts[nfacts++];
    f->section = section;
    snprintf(f->key, sizeof(f->key), "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->value, sizeof(f->value), fmt, ap);
    va_end(ap);
}

/* ---- what the build found ------------------------------------------- */

static void build_facts(void)
{
    add("build", "version", "%s", PACKAGE_VERSION);
#if defined(__clang__)
    add("build", "c_compiler", "clang %s", __clang_version__);
#elif defined(__GNUC__)
    add("build", "c_compiler", "gcc %s", __VERSION__);
#endif
    add("build", "mpi_interface", "Open MPI %d.%d.%d (its mpi.h and ABI)",
        OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
#ifdef PD_HAVE_GLOO
    add("build", "gloo", "%s (host memory; built in)", PD_GLOO_VERSION);
#else
    add("build", "gloo", "not built");
#endif
#ifdef PD_HAVE_NCCL_BINDING
    add("build", "nccl_binding", "yes (CUDA memory; libnccl loaded at run "
        "time)");
#else
    add("build", "nccl_binding", "no");
#endif
#ifdef PD_HAVE_CUDA_H
    add("build", "cuda_headers", "yes (CUDA runtime %d.%d)",
        PD_CUDART_BUILT / 1000, PD_CUDART_BUILT % 1000 / 10);
#else
    add("build", "cuda_headers", "no");
#endif
#ifdef PD_HAVE_NCCL_H
    add("build", "nccl_headers", "yes");
#else
    add("build", "nccl_headers", "no");
#endif
#ifdef PD_HAVE_PMIX_H
    add("build", "pmix_headers", "yes (libpmix loaded under a PMIx launcher)");
#else
    add("build", "pmix_headers", "no");
#endif
    add("build", "bkcl_binding", "yes (Kunlun XPU memory; libbkcl loaded at "
        "run time)");
}

/* ---- what this machine has now -------------------------------------- */

/* dlopen name, the library's path override from the environment; NULL
 * with why (dlerror) when it does not load. */
static void *load(const char *var, const char *fallback, char *why,
                  size_t len)
{
    const char *name = getenv(var);
    if (name == NULL || name[0] == '\0')
        name = fallback;
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(why, len, "%s", e != NULL ? e : name);
    }
    return lib;
}

/* What the CUDA runtime and NCCL say; the number of GPUs into *gpus. */
static void cuda_facts(int *gpus, int *nccl)
{
    char why[300];
    *gpus = 0;
    *nccl = 0;
    char name[64];
    snprintf(name, sizeof(name), "libcudart.so.%d", PD_CUDART_BUILT / 1000);
    void *rt = load("PDMPI_CUDART_LIB", name, why, sizeof(why));
    if (rt == NULL)
        rt = load("PDMPI_CUDART_LIB", "libcudart.so", why, sizeof(why));
    if (rt == NULL) {
        add("runtime", "cuda_runtime", "not found (%s)", why);
    } else {
        int (*version)(int *) =
            (int (*)(int *))dlsym(rt, "cudaRuntimeGetVersion");
        int (*count)(int *) = (int (*)(int *))dlsym(rt, "cudaGetDeviceCount");
        int v = 0, n = 0;
        if (version != NULL)
            version(&v);
        int rc = count != NULL ? count(&n) : -1;
        add("runtime", "cuda_runtime", "found, version %d.%d", v / 1000,
            v % 1000 / 10);
        if (rc == 0)
            add("runtime", "gpus", "%d", n);
        else
            add("runtime", "gpus", "0 (cudaGetDeviceCount returned error "
                "%d: no usable driver or device)", rc);
        *gpus = rc == 0 ? n : 0;
    }
    void *lib = load("PDMPI_NCCL_LIB", "libnccl.so.2", why, sizeof(why));
    if (lib == NULL) {
        add("runtime", "nccl", "not found (%s)", why);
        return;
    }
    int (*version)(int *) = (int (*)(int *))dlsym(lib, "ncclGetVersion");
    int v = 0;
    if (version != NULL)
        version(&v);
    /* NCCL's code: major * 10000 + minor * 100 + patch since 2.9. */
    add("runtime", "nccl", "found, version %d.%d.%d", v / 10000,
        v / 100 % 100, v % 100);
    *nccl = 1;
}

static void xpu_facts(int *bkcl, int *xpurt)
{
    char why[300];
    *xpurt = load("PDMPI_XPURT_LIB", "libxpurt.so", why, sizeof(why)) != NULL;
    add("runtime", "xpu_runtime", "%s%s%s", *xpurt ? "found" : "not found (",
        *xpurt ? "" : why, *xpurt ? "" : ")");
    *bkcl = load("PDMPI_BKCL_LIB", "libbkcl.so", why, sizeof(why)) != NULL;
    add("runtime", "bkcl", "%s%s%s", *bkcl ? "found" : "not found (",
        *bkcl ? "" : why, *bkcl ? "" : ")");
}

static void pmix_facts(void)
{
    char why[300];
    void *lib = dlopen("libpmix.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(why, sizeof(why), "%s", e != NULL ? e : "libpmix.so.2");
        add("runtime", "pmix", "not found (%s)", why);
        return;
    }
    const char *(*version)(void) =
        (const char *(*)(void))dlsym(lib, "PMIx_Get_version");
    add("runtime", "pmix", "found, %s",
        version != NULL ? version() : "version unknown");
}

static void shm_facts(void)
{
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0) {
        add("runtime", "dev_shm", "not available: shared-memory collectives "
            "and point-to-point go over gloo");
        return;
    }
    double mib = 1024.0 * 1024.0;
    add("runtime", "dev_shm", "%.0f MiB free of %.0f MiB",
        (double)vfs.f_bavail * (double)vfs.f_frsize / mib,
        (double)vfs.f_blocks * (double)vfs.f_frsize / mib);
}

/* The launcher whose variables this environment has, in the order
 * MPI_Init looks for them (boot/world.c). */
static void launcher_facts(void)
{
    static const struct {
        const char *launcher, *var;
    } signs[] = {
        { "pdmpirun", "PDMPI_RANK" },
        { "paddle (PaddlePaddle's launcher)", "PADDLE_TRAINER_ID" },
        { "pmix (Open MPI's mpirun, PMIx-aware launchers)", "PMIX_RANK" },
        { "pmi1 (MPICH's mpiexec, Slurm's srun --mpi=pmi2 and others)",
          "PMI_RANK" },
        { "slurm (srun without PMI)", "SLURM_PROCID" },
    };
    const char *forced = getenv("PDMPI_LAUNCHER");
    if (forced != NULL && forced[0] != '\0' && strcmp(forced, "auto") != 0) {
        add("runtime", "launcher", "%s (PDMPI_LAUNCHER)", forced);
        return;
    }
    for (size_t i = 0; i < sizeof(signs) / sizeof(signs[0]); i++) {
        if (getenv(signs[i].var) != NULL) {
            add("runtime", "launcher", "%s (%s is set)", signs[i].launcher,
                signs[i].var);
            return;
        }
    }
    add("runtime", "launcher", "singleton (no launcher's variables: a "
        "world of one process)");
}

/* What PDMPI_BACKEND=auto picks for device memory here (route/backends.c's
 * rule: one device per local rank; here, at least one). */
static void backend_facts(int gpus, int nccl, int bkcl, int xpurt)
{
    if (gpus > 0 && nccl)
        add("runtime", "auto_backend", "nccl for CUDA memory (%d GPU%s, "
            "CUDA runtime and libnccl found), gloo for host memory", gpus,
            gpus == 1 ? "" : "s");
    else if (bkcl && xpurt)
        add("runtime", "auto_backend", "bkcl for XPU memory (XPU runtime "
            "and libbkcl found), gloo for host memory");
    else
        add("runtime", "auto_backend", "gloo (%s)",
            gpus > 0 ? "GPUs but no libnccl"
                     : nccl ? "libnccl but no GPU or CUDA runtime"
                            : "no device library with a device");
}

/* ---- output ------------------------------------------------------------ */

/* s as a JSON string's contents. */
static void json_text(const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
}

/* The value a variable has here; "" when unset. Whether MPI_Init would
 * accept it, and why not, in err. */
static const char *var_state(const struct pd_config_var *v, char *err,
                             size_t len)
{
    const char *value = getenv(v->name);
    err[0] = '\0';
    if (value == NULL)
        return "";
    if (v->load != NULL && value[0] != '\0') {
        struct pd_config scratch;
        char why[512] = "";
        /* Loaders write into a config; defaults do not matter here. */
        memset(&scratch, 0, sizeof(scratch));
        if (v->load(v->name, value, &scratch, why, sizeof(why)) != 0)
            snprintf(err, len, "%s", why);
    }
    return value;
}

/* Each printer returns how many variables hold a value MPI_Init would
 * refuse. */
static int print_human(const struct pd_config_var *vars, size_t nvars)
{
    int invalid = 0;
    const char *section = "";
    for (int i = 0; i < nfacts; i++) {
        if (strcmp(facts[i].section, section) != 0) {
            section = facts[i].section;
            printf("%s%s\n", i == 0 ? "" : "\n",
                   strcmp(section, "build") == 0 ? "Built with"
                                                 : "On this machine now");
        }
        printf("  %-16s %s\n", facts[i].key, facts[i].value);
    }
    printf("\nVariables (default; value here, when set)\n");
    for (size_t i = 0; i < nvars; i++) {
        char err[600];
        const char *value = var_state(&vars[i], err, sizeof(err));
        printf("  %-22s %s%s%s\n", vars[i].name,
               vars[i].default_text[0] != '\0' ? vars[i].default_text
                                               : "unset",
               value[0] != '\0' ? "; now " : "", value);
        printf("      %s\n", vars[i].meaning);
        if (err[0] != '\0') {
            printf("      INVALID: %s (MPI_Init would fail)\n", err);
            invalid++;
        }
    }
    return invalid;
}

static int print_parsable(const struct pd_config_var *vars, size_t nvars)
{
    int invalid = 0;
    for (int i = 0; i < nfacts; i++)
        printf("%s:%s:%s\n", facts[i].section, facts[i].key, facts[i].value);
    for (size_t i = 0; i < nvars; i++) {
        char err[600];
        const char *value = var_state(&vars[i], err, sizeof(err));
        printf("var:%s:default:%s\n", vars[i].name, vars[i].default_text);
        printf("var:%s:value:%s\n", vars[i].name, value);
        printf("var:%s:valid:%s\n", vars[i].name, err[0] ? "no" : "yes");
        if (err[0] != '\0') {
            printf("var:%s:error:%s\n", vars[i].name, err);
            invalid++;
        }
        printf("var:%s:meaning:%s\n", vars[i].name, vars[i].meaning);
    }
    return invalid;
}

static int print_json(const struct pd_config_var *vars, size_t nvars)
{
    int invalid = 0;
    printf("{");
    const char *section = "";
    for (int i = 0; i < nfacts; i++) {
        if (strcmp(facts[i].section, section) != 0) {
            printf("%s\"%s\": {", section[0] ? "}, " : "", facts[i].section);
            section = facts[i].section;
        } else {
            printf(", ");
        }
        printf("\"%s\": \"", facts[i].key);
        json_text(facts[i].value);
        printf("\"");
    }
    printf("%s\"variables\": [", section[0] ? "}, " : "");
    for (size_t i = 0; i < nvars; i++) {
        char err[600];
        const char *value = var_state(&vars[i], err, sizeof(err));
        printf("%s{\"name\": \"%s\", \"default\": \"", i ? ", " : "",
               vars[i].name);
        json_text(vars[i].default_text);
        printf("\", \"value\": ");
        if (getenv(vars[i].name) == NULL) {
            printf("null");
        } else {
            printf("\"");
            json_text(value);
            printf("\"");
        }
        printf(", \"valid\": %s", err[0] ? "false" : "true");
        if (err[0] != '\0') {
            printf(", \"error\": \"");
            json_text(err);
            printf("\"");
            invalid++;
        }
        printf(", \"meaning\": \"");
        json_text(vars[i].meaning);
        printf("\"}");
    }
    printf("]}\n");
    return invalid;
}

int main(int argc, char **argv)
{
    enum format format = PD_HUMAN;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--parsable") == 0 ||
            strcmp(argv[i], "--parseable") == 0) {
            format = PD_PARSABLE;
        } else if (strcmp(argv[i], "--json") == 0) {
            format = PD_JSON;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            printf("Usage: pdmpi_info [--parsable | --json]\n\n"
                   "What this pdmpi was built with, what it finds on this "
                   "machine now\n(device libraries and devices, /dev/shm, "
                   "the launcher, the backend\nPDMPI_BACKEND=auto would "
                   "choose), and every PDMPI_* variable with\nits default, "
                   "its value here and whether MPI_Init would accept it.\n"
                   "\nOptions:\n"
                   "  --parsable   section:key:value lines, like ompi_info's\n"
                   "  --json       one JSON object\n"
                   "  -h, --help   show this help and exit\n"
                   "  --version    show the version and exit\n"
                   "\nExit status: 0; 1 when a variable holds a value "
                   "MPI_Init would refuse;\n2 for bad usage.\n");
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("pdmpi_info (pdmpi) %s\n", PACKAGE_VERSION);
            return 0;
        } else {
            fprintf(stderr, "pdmpi_info: unknown option '%s' (try "
                    "--help)\n", argv[i]);
            return 2;
        }
    }
    build_facts();
    int gpus, nccl, bkcl, xpurt;
    cuda_facts(&gpus, &nccl);
    xpu_facts(&bkcl, &xpurt);
    pmix_facts();
    shm_facts();
    launcher_facts();
    backend_facts(gpus, nccl, bkcl, xpurt);
    size_t nvars;
    const struct pd_config_var *vars = pd_config_vars(&nvars);
    int invalid = format == PD_PARSABLE ? print_parsable(vars, nvars)
                  : format == PD_JSON   ? print_json(vars, nvars)
                                        : print_human(vars, nvars);
    /* A variable MPI_Init would refuse: said in the status too. */
    return invalid > 0 ? 1 : 0;
}
