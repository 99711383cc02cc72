/*
 * trainer.c - a small data-parallel trainer written as a plain MPI program.
 *
 * It fits a linear model y = w.x + b by minibatch SGD on a synthetic
 * dataset, the way data-parallel deep-learning trainers do:
 *   - rank 0 initialises the weights and broadcasts them (MPI_Bcast);
 *   - each step's global batch of B samples is cut into contiguous shards,
 *     one per rank (B need not divide evenly);
 *   - each rank sums the gradient over its shard, the sums are added with
 *     MPI_Allreduce(MPI_IN_PLACE, ..., MPI_SUM) and divided by B;
 *   - every rank applies the same SGD update to its own copy of the weights;
 *   - the per-rank loss sums are exchanged with MPI_Allgather and added in
 *     rank order, so every rank knows the same global loss.
 * At the end rank 0 repeats the training in one process, without MPI, over
 * the same batches and compares the weights; and all ranks compare hashes
 * of their weights, which must be bitwise identical.
 *
 * Usage: trainer [--steps N] [--batch B] [--features F] [--lr X]
 *                [--print-every K]
 */
#include <mpi.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
    int steps;
    int batch;
    int features;
    double learning_rate;
    int print_every;
};

/* The dataset has this many samples; step s uses samples s*B .. s*B+B-1,
 * wrapping around, so long runs revisit data like epochs do. */
#define DATASET_SIZE 8192
#define DATA_SEED 0x5eed2024u
#define INIT_SEED 0x1417u

/* ------------------------------------------------------------------ */
/* Deterministic random numbers                                         */
/* ------------------------------------------------------------------ */

/* A counter-based generator: the value depends only on the key, so any
 * rank can produce any sample without generating the ones before it. */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static double uniform_open01(uint64_t key)
{
    return ((double)(splitmix64(key) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t key = splitmix64(seed ^ splitmix64(a * 0x100000001b3ULL + b));
    double u1 = uniform_open01(key);
    double u2 = uniform_open01(key + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ------------------------------------------------------------------ */
/* The model and the data                                               */
/* ------------------------------------------------------------------ */

/* n = features + 1 parameters: the weights, then the bias. */
static int parameter_count(const struct options *o)
{
    return o->features + 1;
}

static double true_parameter(int j)
{
    return normal(DATA_SEED, 1u << 30, (uint64_t)j);
}

/* Sample i: x ~ N(0,1)^F, y = w_true.x + b_true + 0.1 noise. */
static double make_sample(const struct options *o, long i, double *x)
{
    int f = o->features;
    double y = true_parameter(f);
    for (int j = 0; j < f; j++) {
        x[j] = normal(DATA_SEED, (uint64_t)i, (uint64_t)j);
        y += true_parameter(j) * x[j];
    }
    return y + 0.1 * normal(DATA_SEED, (uint64_t)i, (uint64_t)f);
}

static void init_parameters(const struct options *o, double *params)
{
    for (int j = 0; j < parameter_count(o); j++)
        params[j] = 0.1 * normal(INIT_SEED, 0, (uint64_t)j);
}

/* Adds the squared-error gradient of samples [first, first+count) of step
 * `step` to grad (length F+1) and returns their summed loss 0.5*err^2. */
static double accumulate_gradient(const struct options *o, int step,
                                  int first, int count, const double *params,
                                  double *grad, double *x)
{
    int f = o->features;
    double loss = 0.0;
    for (int k = first; k < first + count; k++) {
        long index = ((long)step * o->batch + k) % DATASET_SIZE;
        double y = make_sample(o, index, x);
        double prediction = params[f];
        for (int j = 0; j < f; j++)
            prediction += params[j] * x[j];
        double err = prediction - y;
        for (int j = 0; j < f; j++)
            grad[j] += err * x[j];
        grad[f] += err;
        loss += 0.5 * err * err;
    }
    return loss;
}

static void sgd_update(const struct options *o, double *params,
                       const double *grad_sum)
{
    for (int j = 0; j < parameter_count(o); j++)
        params[j] -= o->learning_rate * grad_sum[j] / o->batch;
}

/* ------------------------------------------------------------------ */
/* Sharding                                                             */
/* ------------------------------------------------------------------ */

/* Contiguous shards; the first B % size ranks take one sample more. */
static void shard_of(int batch, int rank, int size, int *first, int *count)
{
    int base = batch / size, extra = batch % size;
    *first = rank * base + (rank < extra ? rank : extra);
    *count = base + (rank < extra ? 1 : 0);
}

/* ------------------------------------------------------------------ */
/* Training                                                             */
/* ------------------------------------------------------------------ */

static bool should_print(const struct options *o, int step)
{
    return step % o->print_every == 0 || step == o->steps - 1;
}

/* Global loss sum: every rank adds the same numbers in the same (rank)
 * order, so all ranks agree to the bit. */
static double global_loss_sum(double local, int size, double *per_rank)
{
    MPI_Allgather(&local, 1, MPI_DOUBLE, per_rank, 1, MPI_DOUBLE,
                  MPI_COMM_WORLD);
    double total = 0.0;
    for (int r = 0; r < size; r++)
        total += per_rank[r];
    return total;
}

static void train_distributed(const struct options *o, int rank, int size,
                              double *params)
{
    int n = parameter_count(o);
    double *grad = malloc((size_t)n * sizeof(double));
    double *x = malloc((size_t)o->features * sizeof(double));
    double *per_rank = malloc((size_t)size * sizeof(double));
    int first, count;
    shard_of(o->batch, rank, size, &first, &count);

    if (rank == 0)
        init_parameters(o, params);
    MPI_Bcast(params, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    for (int step = 0; step < o->steps; step++) {
        memset(grad, 0, (size_t)n * sizeof(double));
        double local_loss = accumulate_gradient(o, step, first, count, params,
                                                grad, x);
        MPI_Allreduce(MPI_IN_PLACE, grad, n, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        sgd_update(o, params, grad);

        double loss = global_loss_sum(local_loss, size, per_rank) / o->batch;
        if (rank == 0 && should_print(o, step))
            printf("step %5d  loss %.6f\n", step, loss);
    }
    free(grad);
    free(x);
    free(per_rank);
}

/* The same training in one process, over the whole batch at once. */
static void train_single_process(const struct options *o, double *params)
{
    int n = parameter_count(o);
    double *grad = malloc((size_t)n * sizeof(double));
    double *x = malloc((size_t)o->features * sizeof(double));

    init_parameters(o, params);
    for (int step = 0; step < o->steps; step++) {
        memset(grad, 0, (size_t)n * sizeof(double));
        accumulate_gradient(o, step, 0, o->batch, params, grad, x);
        sgd_update(o, params, grad);
    }
    free(grad);
    free(x);
}

/* ------------------------------------------------------------------ */
/* Verification                                                         */
/* ------------------------------------------------------------------ */

/* Sums are added in another order than in the distributed run, so only
 * agreement to rounding is expected. Returns true when within tolerance. */
static bool compare_with_single_process(const struct options *o,
                                        const double *params)
{
    int n = parameter_count(o);
    double *reference = malloc((size_t)n * sizeof(double));
    train_single_process(o, reference);

    double max_diff = 0.0, max_magnitude = 0.0;
    for (int j = 0; j < n; j++) {
        max_diff = fmax(max_diff, fabs(params[j] - reference[j]));
        max_magnitude = fmax(max_magnitude, fabs(reference[j]));
    }
    free(reference);

    double tolerance = 1e-9 * (1.0 + max_magnitude);
    bool match = max_diff <= tolerance;
    printf("%s single-process run (max abs diff %.3g, tolerance %.3g)\n",
           match ? "final weights match" : "MISMATCH: final weights differ from",
           max_diff, tolerance);
    return match;
}

static uint64_t fnv1a_64(const void *data, size_t bytes)
{
    const unsigned char *p = data;
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < bytes; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

/* Replicas must not drift: every rank applied the same update to the same
 * weights, so the bytes must be equal everywhere. */
static bool replicas_identical(const struct options *o, int rank, int size,
                               const double *params)
{
    uint64_t mine = fnv1a_64(params,
                             (size_t)parameter_count(o) * sizeof(double));
    uint64_t *all = malloc((size_t)size * sizeof(uint64_t));
    MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine),
                  MPI_BYTE, MPI_COMM_WORLD);

    int first_different = -1;
    for (int r = 0; r < size && first_different < 0; r++)
        if (all[r] != all[0])
            first_different = r;
    if (rank == 0) {
        if (first_different < 0)
            printf("all %d ranks hold bitwise-identical weights "
                   "(hash %016llx)\n", size, (unsigned long long)all[0]);
        else
            printf("MISMATCH: rank %d weights differ from rank 0's "
                   "(hash %016llx vs %016llx)\n", first_different,
                   (unsigned long long)all[first_different],
                   (unsigned long long)all[0]);
    }
    free(all);
    return first_different < 0;
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static bool parse_positive(const char *text, int *value)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v <= 0 || v > 100000000)
        return false;
    *value = (int)v;
    return true;
}

static bool parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){200, 256, 16, 0.05, 0};
    for (int a = 1; a < argc; a += 2) {   /* every option takes a value */
        const char *name = argv[a];
        const char *value = a + 1 < argc ? argv[a + 1] : NULL;
        bool ok = value != NULL;
        if (ok && strcmp(name, "--steps") == 0)
            ok = parse_positive(value, &o->steps);
        else if (ok && strcmp(name, "--batch") == 0)
            ok = parse_positive(value, &o->batch);
        else if (ok && strcmp(name, "--features") == 0)
            ok = parse_positive(value, &o->features);
        else if (ok && strcmp(name, "--print-every") == 0)
            ok = parse_positive(value, &o->print_every);
        else if (ok && strcmp(name, "--lr") == 0)
            ok = (o->learning_rate = atof(value)) > 0.0;
        else
            ok = false;
        if (!ok)
            return false;
    }
    if (o->print_every == 0)
        o->print_every = o->steps >= 10 ? o->steps / 10 : 1;
    return true;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Every rank sees the same arguments, so all of them stop together. */
    struct options o;
    if (!parse_options(argc, argv, &o)) {
        if (rank == 0)
            fprintf(stderr, "usage: trainer [--steps N] [--batch B] "
                    "[--features F] [--lr X] [--print-every K]\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        printf("# linear regression: %d ranks, %d steps, batch %d, "
               "%d features, lr %g\n", size, o.steps, o.batch, o.features,
               o.learning_rate);

    double *params = calloc((size_t)parameter_count(&o), sizeof(double));
    double start = MPI_Wtime();
    train_distributed(&o, rank, size, params);
    double elapsed = MPI_Wtime() - start;
    if (rank == 0)
        printf("# trained in %.3f s\n", elapsed);

    int reference_ok = 1;
    if (rank == 0)
        reference_ok = compare_with_single_process(&o, params);
    MPI_Bcast(&reference_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    bool identical = replicas_identical(&o, rank, size, params);

    free(params);
    MPI_Finalize();
    return reference_ok && identical ? 0 : 1;
}
