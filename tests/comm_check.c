/*
 * comm_check.c - communicators, groups, names and attributes.
 *
 * MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type, MPI_Comm_create,
 * MPI_Comm_create_group, MPI_Comm_free, MPI_Comm_compare, MPI_Comm_group,
 * the MPI_Group calls, MPI_Comm_set_name/get_name, the attribute calls with
 * copy and delete callbacks, and MPI_TAG_UB. Every derived communicator is
 * then used: its size and rank, MPI_Allreduce, MPI_Bcast from every root,
 * MPI_Allgather and MPI_Barrier, against the membership each rank computes
 * on its own from the split's colors and keys or the group's rank list.
 *
 * A plain MPI program: it must give the same output under Open MPI's
 * mpirun and under pdmpirun. Output is TAP-like and printed by rank 0 only
 * after the ranks agree on the verdict; the exit status is non-zero when
 * any check failed. The run uses MPI_ERRORS_RETURN on MPI_COMM_WORLD (and
 * so on every communicator derived from it), so a refused call is a failed
 * check.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap_harness.h"

/* ------------------------------------------------------------------ */
/* Membership by formula                                                */
/* ------------------------------------------------------------------ */

typedef int (*rank_fn)(int world_rank);

/* The world ranks of the communicator MPI_Comm_split(color, key) gives the
 * caller, in their new rank order (key, then old rank); returns the count,
 * 0 when the caller's color is MPI_UNDEFINED. */
static int split_members(rank_fn color, rank_fn key, int me, int *out)
{
    int mine = color(me);
    if (mine == MPI_UNDEFINED)
        return 0;
    int n = 0;
    for (int r = 0; r < world_size; r++)
        if (color(r) == mine)
            out[n++] = r;
    /* Insertion sort on (key, world rank): stable, and r is ascending. */
    for (int i = 1; i < n; i++) {
        int x = out[i], j = i - 1;
        while (j >= 0 && key(out[j]) > key(x)) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = x;
    }
    return n;
}

static int index_of(const int *list, int n, int value)
{
    for (int i = 0; i < n; i++)
        if (list[i] == value)
            return i;
    return MPI_UNDEFINED;
}

/* ------------------------------------------------------------------ */
/* Collectives on a communicator of known membership                   */
/* ------------------------------------------------------------------ */

/* members[i] is the world rank of rank i of comm. Checks size and rank,
 * then MPI_Allreduce, MPI_Bcast from every root, MPI_Allgather and
 * MPI_Barrier, each against values computed from members alone. */
static void verify_collectives(struct verdict *v, MPI_Comm comm,
                               const int *members, int n, const char *label)
{
    int size = -1, rank = -1;
    check_rc(v, "MPI_Comm_size", MPI_Comm_size(comm, &size));
    check_rc(v, "MPI_Comm_rank", MPI_Comm_rank(comm, &rank));
    int want_rank = index_of(members, n, world_rank);
    int bad = size != n || rank != want_rank, any_bad = 1;
    if (bad)
        fail(v, "%s: size %d rank %d, expected size %d rank %d", label, size,
             rank, n, want_rank);
    /* The members agree before going on, so that a wrong membership ends
     * the check instead of mismatching the collectives below. */
    check_rc(v, "MPI_Allreduce",
             MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm));
    if (any_bad) {
        fail(v, "%s: another member has the wrong size or rank", label);
        return;
    }

    /* Allreduce: the sum of (world rank + 1) and the max of a value that
     * depends on both the world rank and the new rank. */
    long long in[2] = {world_rank + 1, (long long)world_rank * 1000 + rank};
    long long sum_max[2] = {-1, -1};
    long long want_sum = 0, want_max = -1;
    for (int i = 0; i < n; i++) {
        want_sum += members[i] + 1;
        long long x = (long long)members[i] * 1000 + i;
        if (x > want_max)
            want_max = x;
    }
    int rc = MPI_Allreduce(&in[0], &sum_max[0], 1, MPI_LONG_LONG, MPI_SUM,
                           comm);
    check_rc(v, "MPI_Allreduce", rc);
    rc = MPI_Allreduce(&in[1], &sum_max[1], 1, MPI_LONG_LONG, MPI_MAX, comm);
    check_rc(v, "MPI_Allreduce", rc);
    if (sum_max[0] != want_sum || sum_max[1] != want_max)
        fail(v, "%s: allreduce gave sum %lld max %lld, expected %lld and "
             "%lld", label, sum_max[0], sum_max[1], want_sum, want_max);

    /* Bcast from every root. */
    for (int root = 0; root < n; root++) {
        int buf[3] = {-1, -1, -1};
        if (rank == root) {
            buf[0] = root;
            buf[1] = members[root];
            buf[2] = 0x5eed + root;
        }
        check_rc(v, "MPI_Bcast", MPI_Bcast(buf, 3, MPI_INT, root, comm));
        if (buf[0] != root || buf[1] != members[root]
            || buf[2] != 0x5eed + root)
            fail(v, "%s: bcast from root %d gave {%d, %d, %d}", label, root,
                 buf[0], buf[1], buf[2]);
    }

    /* Allgather of world ranks: the membership list itself. */
    int *all = malloc(((size_t)n + 1) * sizeof(int));
    for (int i = 0; i <= n; i++)
        all[i] = -7;
    check_rc(v, "MPI_Allgather",
             MPI_Allgather(&world_rank, 1, MPI_INT, all, 1, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        if (all[i] != members[i]) {
            fail(v, "%s: allgather slot %d holds world rank %d, expected %d",
                 label, i, all[i], members[i]);
            break;
        }
    if (all[n] != -7)
        fail(v, "%s: allgather wrote past the end", label);
    free(all);

    check_rc(v, "MPI_Barrier", MPI_Barrier(comm));
}

/* ------------------------------------------------------------------ */
/* Dup, compare, names                                                  */
/* ------------------------------------------------------------------ */

static int *world_members(void)
{
    int *m = malloc((size_t)world_size * sizeof(int));
    for (int r = 0; r < world_size; r++)
        m[r] = r;
    return m;
}

static const char *compare_name(int result)
{
    if (result == MPI_IDENT) return "MPI_IDENT";
    if (result == MPI_CONGRUENT) return "MPI_CONGRUENT";
    if (result == MPI_SIMILAR) return "MPI_SIMILAR";
    if (result == MPI_UNEQUAL) return "MPI_UNEQUAL";
    return "something else";
}

static void expect_compare(struct verdict *v, MPI_Comm a, MPI_Comm b,
                           int want, const char *label)
{
    int result = -1;
    check_rc(v, "MPI_Comm_compare", MPI_Comm_compare(a, b, &result));
    if (result != want)
        fail(v, "%s: MPI_Comm_compare gave %s, expected %s", label,
             compare_name(result), compare_name(want));
}

static void check_world_and_self(void)
{
    struct verdict v = {""};
    int *all = world_members();
    verify_collectives(&v, MPI_COMM_WORLD, all, world_size, "MPI_COMM_WORLD");
    int self = world_rank;
    verify_collectives(&v, MPI_COMM_SELF, &self, 1, "MPI_COMM_SELF");
    report(&v, "collectives on MPI_COMM_WORLD and MPI_COMM_SELF");

    v.detail[0] = '\0';
    expect_compare(&v, MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT,
                   "world, world");
    expect_compare(&v, MPI_COMM_SELF, MPI_COMM_SELF, MPI_IDENT, "self, self");
    expect_compare(&v, MPI_COMM_WORLD, MPI_COMM_SELF,
                   world_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                   "world, self");
    report(&v, "MPI_Comm_compare of the predefined communicators");
    free(all);
}

static void check_dup(void)
{
    struct verdict v = {""};
    MPI_Comm dup = MPI_COMM_NULL, dup2 = MPI_COMM_NULL, sdup = MPI_COMM_NULL;
    int *all = world_members();
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (dup == MPI_COMM_NULL || dup == MPI_COMM_WORLD)
        fail(&v, "MPI_Comm_dup gave %s",
             dup == MPI_COMM_NULL ? "MPI_COMM_NULL" : "MPI_COMM_WORLD");
    if (v.detail[0] == '\0') {
        verify_collectives(&v, dup, all, world_size, "dup of world");
        check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(dup, &dup2));
        verify_collectives(&v, dup2, all, world_size, "dup of dup");
        expect_compare(&v, MPI_COMM_WORLD, dup, MPI_CONGRUENT, "world, dup");
        expect_compare(&v, dup, dup2, MPI_CONGRUENT, "dup, dup of dup");
        expect_compare(&v, dup, dup, MPI_IDENT, "dup, dup");
    }
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_SELF, &sdup));
    int self = world_rank;
    if (sdup != MPI_COMM_NULL) {
        verify_collectives(&v, sdup, &self, 1, "dup of self");
        expect_compare(&v, MPI_COMM_SELF, sdup, MPI_CONGRUENT, "self, dup");
    }
    report(&v, "MPI_Comm_dup of world, of a dup and of self: collectives "
           "and MPI_Comm_compare (MPI_CONGRUENT)");

    v.detail[0] = '\0';
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup2));
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&sdup));
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup));
    if (dup != MPI_COMM_NULL || dup2 != MPI_COMM_NULL
        || sdup != MPI_COMM_NULL)
        fail(&v, "a freed handle is not MPI_COMM_NULL");
    /* The parent still works after its dups are freed. */
    verify_collectives(&v, MPI_COMM_WORLD, all, world_size,
                       "world after freeing its dups");
    report(&v, "MPI_Comm_free sets the handle to MPI_COMM_NULL");
    free(all);
}

static void check_names(void)
{
    struct verdict v = {""};
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;

    check_rc(&v, "MPI_Comm_get_name",
             MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    if (strcmp(name, "MPI_COMM_WORLD") != 0 || len != (int)strlen(name))
        fail(&v, "world is called \"%s\" (length %d)", name, len);
    check_rc(&v, "MPI_Comm_get_name",
             MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    if (strcmp(name, "MPI_COMM_SELF") != 0 || len != (int)strlen(name))
        fail(&v, "self is called \"%s\" (length %d)", name, len);
    report(&v, "default names MPI_COMM_WORLD and MPI_COMM_SELF");

    v.detail[0] = '\0';
    MPI_Comm dup = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    check_rc(&v, "MPI_Comm_set_name",
             MPI_Comm_set_name(dup, "pdmpi test communicator"));
    check_rc(&v, "MPI_Comm_get_name", MPI_Comm_get_name(dup, name, &len));
    if (strcmp(name, "pdmpi test communicator") != 0
        || len != (int)strlen(name))
        fail(&v, "the dup is called \"%s\" (length %d)", name, len);

    /* The longest name that fits. */
    char longest[MPI_MAX_OBJECT_NAME];
    memset(longest, 'n', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    longest[0] = (char)('a' + world_rank % 26);
    check_rc(&v, "MPI_Comm_set_name", MPI_Comm_set_name(dup, longest));
    check_rc(&v, "MPI_Comm_get_name", MPI_Comm_get_name(dup, name, &len));
    if (strcmp(name, longest) != 0 || len != MPI_MAX_OBJECT_NAME - 1)
        fail(&v, "a name of %d characters came back with length %d",
             MPI_MAX_OBJECT_NAME - 1, len);

    /* Naming world, then naming it back. */
    check_rc(&v, "MPI_Comm_set_name",
             MPI_Comm_set_name(MPI_COMM_WORLD, "renamed world"));
    check_rc(&v, "MPI_Comm_get_name",
             MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    if (strcmp(name, "renamed world") != 0)
        fail(&v, "world renamed is called \"%s\"", name);
    MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    MPI_Comm_free(&dup);
    report(&v, "MPI_Comm_set_name / MPI_Comm_get_name (local names, the "
           "longest that fits, renaming world)");
}

/* ------------------------------------------------------------------ */
/* Split                                                                */
/* ------------------------------------------------------------------ */

static int color_parity(int r) { return r % 2; }
static int key_reverse(int r) { return -r; }
static int color_zero(int r) { (void)r; return 0; }
static int key_zero(int r) { (void)r; return 0; }
static int key_rank(int r) { return r; }
static int color_pairs(int r) { return 1000003 + r / 2; }
static int key_ties(int r) { return (r * 7) % 3; }
static int color_some_undefined(int r)
{
    return r % 3 == 2 || r == world_size - 1 ? MPI_UNDEFINED : 5;
}
static int color_all_undefined(int r) { (void)r; return MPI_UNDEFINED; }

struct split_case {
    const char *label;
    rank_fn color, key;
};

static void check_splits(void)
{
    const struct split_case cases[] = {
        {"parity colors, reversed keys", color_parity, key_reverse},
        {"one color, all keys 0 (old order)", color_zero, key_zero},
        {"one color, reversed keys", color_zero, key_reverse},
        {"pairs of ranks, large colors, tied keys", color_pairs, key_ties},
        {"some ranks MPI_UNDEFINED", color_some_undefined, key_rank},
        {"every rank MPI_UNDEFINED", color_all_undefined, key_rank},
    };
    int *members = malloc((size_t)world_size * sizeof(int));
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct verdict v = {""};
        MPI_Comm comm = MPI_COMM_NULL;
        int n = split_members(cases[c].color, cases[c].key, world_rank,
                              members);
        check_rc(&v, "MPI_Comm_split",
                 MPI_Comm_split(MPI_COMM_WORLD, cases[c].color(world_rank),
                                cases[c].key(world_rank), &comm));
        if (n == 0) {
            if (comm != MPI_COMM_NULL)
                fail(&v, "MPI_UNDEFINED color gave a communicator");
        } else if (comm == MPI_COMM_NULL) {
            fail(&v, "got MPI_COMM_NULL, expected %d members", n);
        } else {
            verify_collectives(&v, comm, members, n, cases[c].label);
        }
        if (comm != MPI_COMM_NULL)
            check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&comm));
        report(&v, "MPI_Comm_split %s: ranks and collectives",
               cases[c].label);
    }

    /* MPI_Comm_compare of splits with world. */
    struct verdict v = {""};
    MPI_Comm same = MPI_COMM_NULL, reversed = MPI_COMM_NULL,
             parity = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &same));
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(MPI_COMM_WORLD, 0, -world_rank, &reversed));
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, 0, &parity));
    if (v.detail[0] == '\0') {
        expect_compare(&v, MPI_COMM_WORLD, same, MPI_CONGRUENT,
                       "world, split in the same order");
        expect_compare(&v, MPI_COMM_WORLD, reversed,
                       world_size == 1 ? MPI_CONGRUENT : MPI_SIMILAR,
                       "world, split in reverse order");
        expect_compare(&v, MPI_COMM_WORLD, parity,
                       world_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                       "world, split by parity");
    }
    MPI_Comm_free(&same);
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&parity);
    report(&v, "MPI_Comm_compare of splits with world (MPI_CONGRUENT, "
           "MPI_SIMILAR, MPI_UNEQUAL)");

    /* A split of a split: parity, then halves of each parity class. */
    v.detail[0] = '\0';
    MPI_Comm first = MPI_COMM_NULL, second = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank,
                            &first));
    int n1 = split_members(color_parity, key_reverse, world_rank, members);
    int r1 = index_of(members, n1, world_rank);
    /* In first, color = (rank in first) / 2, key = rank in first. */
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(first, r1 / 2, r1, &second));
    int *sub = malloc((size_t)world_size * sizeof(int));
    int n2 = 0;
    for (int i = 0; i < n1; i++)
        if (i / 2 == r1 / 2)
            sub[n2++] = members[i];
    if (second != MPI_COMM_NULL)
        verify_collectives(&v, second, sub, n2, "split of a split");
    else
        fail(&v, "the split of a split is MPI_COMM_NULL");
    MPI_Comm_free(&second);
    MPI_Comm_free(&first);
    report(&v, "MPI_Comm_split of a split communicator");
    free(sub);
    free(members);
}

static void check_split_type(void)
{
    struct verdict v = {""};
    MPI_Comm node = MPI_COMM_NULL;
    int *members = malloc((size_t)world_size * sizeof(int));

    /* All ranks of these tests run on one host. */
    check_rc(&v, "MPI_Comm_split_type",
             MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED,
                                 world_rank, MPI_INFO_NULL, &node));
    int n = split_members(color_zero, key_rank, world_rank, members);
    if (node == MPI_COMM_NULL)
        fail(&v, "got MPI_COMM_NULL");
    else
        verify_collectives(&v, node, members, n, "shared, keys = rank");
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);

    check_rc(&v, "MPI_Comm_split_type",
             MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED,
                                 -world_rank, MPI_INFO_NULL, &node));
    n = split_members(color_zero, key_reverse, world_rank, members);
    if (node == MPI_COMM_NULL)
        fail(&v, "got MPI_COMM_NULL");
    else
        verify_collectives(&v, node, members, n, "shared, reversed keys");
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);

    /* MPI_UNDEFINED as the split type gives MPI_COMM_NULL. */
    int type = world_rank % 2 == 1 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED;
    check_rc(&v, "MPI_Comm_split_type",
             MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, MPI_INFO_NULL,
                                 &node));
    n = split_members(color_parity, key_rank, world_rank, members);
    if (type == MPI_UNDEFINED) {
        if (node != MPI_COMM_NULL)
            fail(&v, "MPI_UNDEFINED split type gave a communicator");
    } else if (node == MPI_COMM_NULL) {
        fail(&v, "got MPI_COMM_NULL");
    } else {
        verify_collectives(&v, node, members, n, "shared, odd ranks out");
    }
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    report(&v, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) holds every rank "
           "(one host), keys order it, MPI_UNDEFINED gives MPI_COMM_NULL");
    free(members);
}

/* ------------------------------------------------------------------ */
/* Groups, MPI_Comm_create, MPI_Comm_create_group                       */
/* ------------------------------------------------------------------ */

/* The even world ranks, highest first. */
static int evens_reversed(int *out)
{
    int n = 0;
    for (int r = world_size - 1; r >= 0; r--)
        if (r % 2 == 0)
            out[n++] = r;
    return n;
}

static void check_groups(void)
{
    struct verdict v = {""};
    MPI_Group world_group = MPI_GROUP_NULL, evens = MPI_GROUP_NULL,
              others = MPI_GROUP_NULL, empty = MPI_GROUP_NULL;
    int size = -1, rank = -1;
    int *list = malloc((size_t)world_size * sizeof(int));
    int *out = malloc((size_t)world_size * sizeof(int) + sizeof(int));

    check_rc(&v, "MPI_Comm_group", MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    check_rc(&v, "MPI_Group_size", MPI_Group_size(world_group, &size));
    check_rc(&v, "MPI_Group_rank", MPI_Group_rank(world_group, &rank));
    if (size != world_size || rank != world_rank)
        fail(&v, "world group: size %d rank %d", size, rank);

    int n = evens_reversed(list);
    check_rc(&v, "MPI_Group_incl", MPI_Group_incl(world_group, n, list, &evens));
    check_rc(&v, "MPI_Group_size", MPI_Group_size(evens, &size));
    check_rc(&v, "MPI_Group_rank", MPI_Group_rank(evens, &rank));
    if (size != n || rank != index_of(list, n, world_rank))
        fail(&v, "even ranks reversed: size %d rank %d, expected %d and %d",
             size, rank, n, index_of(list, n, world_rank));

    /* Exclude rank 0: world ranks 1.. in order. */
    int zero = 0;
    check_rc(&v, "MPI_Group_excl", MPI_Group_excl(world_group, 1, &zero, &others));
    check_rc(&v, "MPI_Group_size", MPI_Group_size(others, &size));
    check_rc(&v, "MPI_Group_rank", MPI_Group_rank(others, &rank));
    int want_rank = world_rank == 0 ? MPI_UNDEFINED : world_rank - 1;
    if (size != world_size - 1 || rank != want_rank)
        fail(&v, "all but rank 0: size %d rank %d, expected %d and %d", size,
             rank, world_size - 1, want_rank);

    check_rc(&v, "MPI_Group_incl", MPI_Group_incl(world_group, 0, list, &empty));
    check_rc(&v, "MPI_Group_size", MPI_Group_size(empty, &size));
    check_rc(&v, "MPI_Group_rank", MPI_Group_rank(empty, &rank));
    if (size != 0 || rank != MPI_UNDEFINED)
        fail(&v, "empty group: size %d rank %d", size, rank);
    report(&v, "MPI_Comm_group, MPI_Group_incl (reordered, empty), "
           "MPI_Group_excl, MPI_Group_size, MPI_Group_rank");

    /* Ranges: the even ranks from the top down with stride -2 are the
     * reversed evens; excluding the odd ranks leaves the evens in order. */
    v.detail[0] = '\0';
    MPI_Group ranged = MPI_GROUP_NULL;
    int top_even = (world_size - 1) / 2 * 2, result = -1;
    int down[1][3] = { { top_even, 0, -2 } };
    check_rc(&v, "MPI_Group_range_incl",
             MPI_Group_range_incl(world_group, 1, down, &ranged));
    check_rc(&v, "MPI_Group_compare", MPI_Group_compare(ranged, evens, &result));
    if (result != MPI_IDENT)
        fail(&v, "range (%d, 0, -2) is not the reversed evens (%d)", top_even,
             result);
    MPI_Group_free(&ranged);
    if (world_size > 1) {
        int odds[1][3] = { { 1, world_size - 1, 2 } };
        check_rc(&v, "MPI_Group_range_excl",
                 MPI_Group_range_excl(world_group, 1, odds, &ranged));
        check_rc(&v, "MPI_Group_compare",
                 MPI_Group_compare(ranged, evens, &result));
        if (result != (n > 1 ? MPI_SIMILAR : MPI_IDENT))
            fail(&v, "excluding range (1, %d, 2) does not leave the evens "
                 "in order (%d)", world_size - 1, result);
        MPI_Group_free(&ranged);
    }
    /* Open MPI refuses a stride of 0 and one leading away from the
     * range's end as MPI_ERR_RANK; so does pdmpi. */
    int zero_stride[1][3] = { { 0, 0, 0 } };
    int backwards[1][3] = { { 1, 0, 1 } };
    int cls = -1;
    MPI_Error_class(MPI_Group_range_incl(world_group, 1, zero_stride, &ranged),
                    &cls);
    if (cls != MPI_ERR_RANK)
        fail(&v, "a range of stride 0: error class %d, expected MPI_ERR_RANK",
             cls);
    if (world_size > 1) {
        MPI_Error_class(MPI_Group_range_incl(world_group, 1, backwards,
                                             &ranged), &cls);
        if (cls != MPI_ERR_RANK)
            fail(&v, "range (1, 0, 1): error class %d, expected "
                 "MPI_ERR_RANK", cls);
    }
    report(&v, "MPI_Group_range_incl and MPI_Group_range_excl (negative "
           "stride; stride 0 and a range leading away from its end "
           "refused)");

    /* Translate: from the subgroup to world, and back (non-members are
     * MPI_UNDEFINED, MPI_PROC_NULL stays MPI_PROC_NULL). */
    v.detail[0] = '\0';
    int *pos = malloc(((size_t)world_size + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        pos[i] = i;
    check_rc(&v, "MPI_Group_translate_ranks",
             MPI_Group_translate_ranks(evens, n, pos, world_group, out));
    for (int i = 0; i < n; i++)
        if (out[i] != list[i])
            fail(&v, "evens rank %d is world rank %d, expected %d", i, out[i],
                 list[i]);
    for (int r = 0; r < world_size; r++)
        pos[r] = r;
    pos[world_size] = MPI_PROC_NULL;
    check_rc(&v, "MPI_Group_translate_ranks",
             MPI_Group_translate_ranks(world_group, world_size + 1, pos, evens,
                                       out));
    for (int r = 0; r < world_size; r++) {
        int want = index_of(list, n, r);
        if (out[r] != want)
            fail(&v, "world rank %d is evens rank %d, expected %d", r, out[r],
                 want);
    }
    if (out[world_size] != MPI_PROC_NULL)
        fail(&v, "MPI_PROC_NULL translated to %d", out[world_size]);
    report(&v, "MPI_Group_translate_ranks (MPI_UNDEFINED for non-members, "
           "MPI_PROC_NULL kept)");

    /* MPI_Comm_create: collective over world, non-members get null. */
    v.detail[0] = '\0';
    MPI_Comm comm = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_create",
             MPI_Comm_create(MPI_COMM_WORLD, evens, &comm));
    bool member = index_of(list, n, world_rank) != MPI_UNDEFINED;
    if (!member && comm != MPI_COMM_NULL)
        fail(&v, "a non-member got a communicator");
    else if (member && comm == MPI_COMM_NULL)
        fail(&v, "a member got MPI_COMM_NULL");
    else if (member)
        verify_collectives(&v, comm, list, n, "create from even ranks");
    if (comm != MPI_COMM_NULL) {
        MPI_Group g = MPI_GROUP_NULL;
        int result = -1;
        check_rc(&v, "MPI_Comm_group", MPI_Comm_group(comm, &g));
        check_rc(&v, "MPI_Group_compare", MPI_Group_compare(g, evens, &result));
        if (result != MPI_IDENT)
            fail(&v, "the new communicator's group is not the one given");
        MPI_Group_free(&g);
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&comm));
    }
    report(&v, "MPI_Comm_create from the even ranks in reverse order");

    /* MPI_Comm_create with the whole group and with the empty group. */
    v.detail[0] = '\0';
    check_rc(&v, "MPI_Comm_create",
             MPI_Comm_create(MPI_COMM_WORLD, world_group, &comm));
    int *all = world_members();
    if (comm == MPI_COMM_NULL)
        fail(&v, "the whole group gave MPI_COMM_NULL");
    else
        verify_collectives(&v, comm, all, world_size, "create from world");
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    check_rc(&v, "MPI_Comm_create",
             MPI_Comm_create(MPI_COMM_WORLD, empty, &comm));
    if (comm != MPI_COMM_NULL)
        fail(&v, "the empty group gave a communicator");
    report(&v, "MPI_Comm_create with the whole group and the empty group");

    /* MPI_Comm_create with disjoint groups (MPI-2.2): each rank passes
     * the ranks of its own parity; two communicators come out of one
     * call, and their messages must not mix. */
    v.detail[0] = '\0';
    int same = 0;
    for (int r = world_rank % 2; r < world_size; r += 2)
        list[same++] = r;
    MPI_Group parity = MPI_GROUP_NULL;
    check_rc(&v, "MPI_Group_incl",
             MPI_Group_incl(world_group, same, list, &parity));
    check_rc(&v, "MPI_Comm_create",
             MPI_Comm_create(MPI_COMM_WORLD, parity, &comm));
    if (comm == MPI_COMM_NULL)
        fail(&v, "a member got MPI_COMM_NULL");
    else
        verify_collectives(&v, comm, list, same, "create by parity");
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    MPI_Group_free(&parity);
    report(&v, "MPI_Comm_create with a disjoint group per parity of rank");

    /* MPI_Comm_create_group: only members call it. */
    v.detail[0] = '\0';
    if (world_rank != 0) {
        check_rc(&v, "MPI_Comm_create_group",
                 MPI_Comm_create_group(MPI_COMM_WORLD, others, 77, &comm));
        for (int r = 1; r < world_size; r++)
            list[r - 1] = r;
        if (comm == MPI_COMM_NULL)
            fail(&v, "a member got MPI_COMM_NULL");
        else
            verify_collectives(&v, comm, list, world_size - 1,
                               "create_group without rank 0");
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
    }
    n = evens_reversed(list);
    if (world_rank % 2 == 0) {
        check_rc(&v, "MPI_Comm_create_group",
                 MPI_Comm_create_group(MPI_COMM_WORLD, evens, 78, &comm));
        if (comm == MPI_COMM_NULL)
            fail(&v, "a member got MPI_COMM_NULL");
        else
            verify_collectives(&v, comm, list, n,
                               "create_group of even ranks reversed");
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
    }
    report(&v, "MPI_Comm_create_group, called by the members only");

    v.detail[0] = '\0';
    check_rc(&v, "MPI_Group_free", MPI_Group_free(&evens));
    check_rc(&v, "MPI_Group_free", MPI_Group_free(&others));
    if (empty != MPI_GROUP_EMPTY)
        check_rc(&v, "MPI_Group_free", MPI_Group_free(&empty));
    check_rc(&v, "MPI_Group_free", MPI_Group_free(&world_group));
    if (evens != MPI_GROUP_NULL || others != MPI_GROUP_NULL
        || world_group != MPI_GROUP_NULL)
        fail(&v, "a freed group is not MPI_GROUP_NULL");
    report(&v, "MPI_Group_free sets the handle to MPI_GROUP_NULL");
    free(all);
    free(pos);
    free(list);
    free(out);
}

/* ------------------------------------------------------------------ */
/* Attributes                                                           */
/* ------------------------------------------------------------------ */

static int extra_marker;
static int copy_calls, delete_calls;
static intptr_t last_deleted;
static bool bad_extra_state;

/* Copies value v as v + 1, so the copy is recognizable. */
static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra_state,
                         void *attribute_val_in, void *attribute_val_out,
                         int *flag)
{
    (void)oldcomm;
    (void)keyval;
    copy_calls++;
    if (extra_state != &extra_marker)
        bad_extra_state = true;
    *(void **)attribute_val_out = (void *)((intptr_t)attribute_val_in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int record_delete(MPI_Comm comm, int keyval, void *attribute_val,
                         void *extra_state)
{
    (void)comm;
    (void)keyval;
    delete_calls++;
    last_deleted = (intptr_t)attribute_val;
    if (extra_state != &extra_marker)
        bad_extra_state = true;
    return MPI_SUCCESS;
}

static void expect_attr(struct verdict *v, MPI_Comm comm, int keyval,
                        bool present, intptr_t value, const char *label)
{
    void *got = NULL;
    int flag = -1;
    check_rc(v, "MPI_Comm_get_attr", MPI_Comm_get_attr(comm, keyval, &got,
                                                       &flag));
    if (!present && flag)
        fail(v, "%s: attribute present (%ld), expected absent", label,
             (long)(intptr_t)got);
    else if (present && !flag)
        fail(v, "%s: attribute absent, expected %ld", label, (long)value);
    else if (present && (intptr_t)got != value)
        fail(v, "%s: attribute %ld, expected %ld", label, (long)(intptr_t)got,
             (long)value);
}

static void expect_calls(struct verdict *v, int copies, int deletes,
                         intptr_t deleted, const char *label)
{
    if (copy_calls != copies || delete_calls != deletes
        || (deletes > 0 && last_deleted != deleted))
        fail(v, "%s: %d copy and %d delete calls (last deleted %ld), "
             "expected %d, %d (%ld)", label, copy_calls, delete_calls,
             (long)last_deleted, copies, deletes, (long)deleted);
}

/* Keyvals whose attributes delete_neighbours deletes with its own. */
static int neighbour[2];

static int delete_neighbours(MPI_Comm comm, int keyval, void *attribute_val,
                             void *extra_state)
{
    (void)keyval;
    (void)attribute_val;
    (void)extra_state;
    MPI_Comm_delete_attr(comm, neighbour[0]);
    MPI_Comm_delete_attr(comm, neighbour[1]);
    return MPI_SUCCESS;
}

static void check_attributes(void)
{
    struct verdict v = {""};
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;

    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(copy_plus_one, record_delete, &key,
                                    &extra_marker));
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &a));
    expect_attr(&v, a, key, false, 0, "before set");
    check_rc(&v, "MPI_Comm_set_attr", MPI_Comm_set_attr(a, key, (void *)100));
    expect_attr(&v, a, key, true, 100, "after set");
    expect_calls(&v, 0, 0, 0, "after set");

    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(a, &b));
    expect_calls(&v, 1, 0, 0, "after dup");
    expect_attr(&v, b, key, true, 101, "the dup's copy");
    expect_attr(&v, a, key, true, 100, "the original after dup");

    check_rc(&v, "MPI_Comm_set_attr", MPI_Comm_set_attr(a, key, (void *)200));
    expect_calls(&v, 1, 1, 100, "after replacing the value");
    expect_attr(&v, a, key, true, 200, "after replacing");

    check_rc(&v, "MPI_Comm_delete_attr", MPI_Comm_delete_attr(a, key));
    expect_calls(&v, 1, 2, 200, "after MPI_Comm_delete_attr");
    expect_attr(&v, a, key, false, 0, "after MPI_Comm_delete_attr");

    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&b));
    expect_calls(&v, 1, 3, 101, "after freeing the dup");
    if (bad_extra_state)
        fail(&v, "a callback got another extra_state");
    report(&v, "attributes: copy callback on MPI_Comm_dup, delete callback "
           "on replace, MPI_Comm_delete_attr and MPI_Comm_free");

    /* Freeing the keyval while an attribute uses it: the handle becomes
     * MPI_KEYVAL_INVALID, the attribute lives until its communicator goes. */
    v.detail[0] = '\0';
    check_rc(&v, "MPI_Comm_set_attr", MPI_Comm_set_attr(a, key, (void *)300));
    check_rc(&v, "MPI_Comm_free_keyval", MPI_Comm_free_keyval(&key));
    if (key != MPI_KEYVAL_INVALID)
        fail(&v, "the keyval is not MPI_KEYVAL_INVALID after freeing");
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&a));
    expect_calls(&v, 1, 4, 300, "after freeing the communicator");
    report(&v, "MPI_Comm_free_keyval: handle invalid, attribute deleted "
           "with its communicator");

    /* The predefined copy functions, several keyvals on one communicator,
     * and an attribute on world. */
    v.detail[0] = '\0';
    int knull = MPI_KEYVAL_INVALID, kdup = MPI_KEYVAL_INVALID,
        kworld = MPI_KEYVAL_INVALID;
    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                    MPI_COMM_NULL_DELETE_FN, &knull, NULL));
    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN,
                                    &kdup, NULL));
    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                    MPI_COMM_NULL_DELETE_FN, &kworld, NULL));
    if (knull == kdup || knull == kworld || kdup == kworld)
        fail(&v, "two keyvals are equal");
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &a));
    check_rc(&v, "MPI_Comm_set_attr", MPI_Comm_set_attr(a, knull, (void *)7));
    check_rc(&v, "MPI_Comm_set_attr", MPI_Comm_set_attr(a, kdup, (void *)8));
    check_rc(&v, "MPI_Comm_set_attr",
             MPI_Comm_set_attr(MPI_COMM_WORLD, kworld, (void *)9));
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(a, &b));
    expect_attr(&v, b, knull, false, 0, "MPI_COMM_NULL_COPY_FN");
    expect_attr(&v, b, kdup, true, 8, "MPI_COMM_DUP_FN");
    expect_attr(&v, a, knull, true, 7, "the original, null copy");
    expect_attr(&v, MPI_COMM_WORLD, kworld, true, 9, "world");
    expect_attr(&v, a, kworld, false, 0, "world's keyval on a dup");
    check_rc(&v, "MPI_Comm_delete_attr", MPI_Comm_delete_attr(MPI_COMM_WORLD,
                                                              kworld));
    expect_attr(&v, MPI_COMM_WORLD, kworld, false, 0, "world after delete");
    MPI_Comm_free(&b);
    MPI_Comm_free(&a);
    MPI_Comm_free_keyval(&knull);
    MPI_Comm_free_keyval(&kdup);
    MPI_Comm_free_keyval(&kworld);
    report(&v, "MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, attributes on "
           "world");

    /* A delete callback that deletes the attributes set before and
     * after its own, and one that replaces its own value's attribute. */
    v.detail[0] = '\0';
    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                    MPI_COMM_NULL_DELETE_FN, &neighbour[0],
                                    NULL));
    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_neighbours,
                                    &key, NULL));
    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                    MPI_COMM_NULL_DELETE_FN, &neighbour[1],
                                    NULL));
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &a));
    for (int round = 0; round < 2; round++) {
        check_rc(&v, "MPI_Comm_set_attr",
                 MPI_Comm_set_attr(a, neighbour[0], (void *)1));
        check_rc(&v, "MPI_Comm_set_attr", MPI_Comm_set_attr(a, key, (void *)2));
        check_rc(&v, "MPI_Comm_set_attr",
                 MPI_Comm_set_attr(a, neighbour[1], (void *)3));
        /* Deleting, then replacing: the callback runs on the old value
         * both times and takes its neighbours with it. */
        check_rc(&v, round == 0 ? "MPI_Comm_delete_attr" : "MPI_Comm_set_attr",
                 round == 0 ? MPI_Comm_delete_attr(a, key)
                            : MPI_Comm_set_attr(a, key, (void *)4));
        expect_attr(&v, a, neighbour[0], false, 0, "the first neighbour");
        expect_attr(&v, a, neighbour[1], false, 0, "the second neighbour");
        expect_attr(&v, a, key, round == 1, 4, "the attribute itself");
    }
    MPI_Comm_free(&a);
    MPI_Comm_free_keyval(&key);
    MPI_Comm_free_keyval(&neighbour[0]);
    MPI_Comm_free_keyval(&neighbour[1]);
    report(&v, "a delete callback that deletes the attributes beside its "
           "own, on delete and on replace");

    v.detail[0] = '\0';
    void *value = NULL;
    int flag = 0;
    check_rc(&v, "MPI_Comm_get_attr",
             MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag));
    if (!flag || value == NULL)
        fail(&v, "MPI_TAG_UB is not set on MPI_COMM_WORLD");
    else if (*(int *)value < 32767)
        fail(&v, "MPI_TAG_UB is %d, below 32767", *(int *)value);
    report(&v, "MPI_TAG_UB on MPI_COMM_WORLD is at least 32767");
}

/* ------------------------------------------------------------------ */
/* Many communicators                                                   */
/* ------------------------------------------------------------------ */

static void check_dup_free_cycles(void)
{
    struct verdict v = {""};
    int *all = world_members();
    for (int i = 0; i < 200; i++) {
        MPI_Comm c = MPI_COMM_NULL;
        check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 50 == 49) {
            int x = i, y = -1;
            check_rc(&v, "MPI_Allreduce",
                     MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, c));
            if (y != i)
                fail(&v, "cycle %d: allreduce gave %d", i, y);
        }
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&c));
    }
    MPI_Comm c = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (c != MPI_COMM_NULL) {
        verify_collectives(&v, c, all, world_size, "dup after 200 cycles");
        MPI_Comm_free(&c);
    }
    report(&v, "200 MPI_Comm_dup / MPI_Comm_free cycles, then collectives");

    /* Split/free cycles too, and 64 communicators alive at once. */
    v.detail[0] = '\0';
    for (int i = 0; i < 100; i++) {
        MPI_Comm s = MPI_COMM_NULL;
        check_rc(&v, "MPI_Comm_split",
                 MPI_Comm_split(MPI_COMM_WORLD, (world_rank + i) % 2, i, &s));
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&s));
    }
    MPI_Comm live[64];
    for (int i = 0; i < 64; i++) {
        live[i] = MPI_COMM_NULL;
        check_rc(&v, "MPI_Comm_dup",
                 MPI_Comm_dup(i == 0 ? MPI_COMM_WORLD : live[i - 1], &live[i]));
    }
    for (int i = 63; i >= 0; i--) {
        int x = i * 10 + world_rank, y = -1;
        check_rc(&v, "MPI_Allreduce",
                 MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, live[i]));
        if (y != i * 10 + world_size - 1)
            fail(&v, "dup %d: allreduce gave %d", i, y);
    }
    for (int i = 0; i < 64; i++)
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&live[i]));
    verify_collectives(&v, MPI_COMM_WORLD, all, world_size,
                       "world after the cycles");
    report(&v, "100 split/free cycles, a chain of 64 live dups");
    free(all);
}

/* MPI_Comm_free with operations pending on the communicator: they
 * complete normally (MPI 6.4.3). Even ranks free it with a receive and
 * an allreduce outstanding; the odd rank after each sends to it only
 * once every even one has, then frees it too. */
static void check_free_pending(void)
{
    struct verdict v = {""};
    enum { N = 64 };
    int got[N], sum = -1, mine = world_rank + 1;
    for (int i = 0; i < N; i++)
        got[i] = -1;
    bool receiver = world_rank % 2 == 0 && world_rank + 1 < world_size;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Request reqs[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (receiver)
        check_rc(&v, "MPI_Irecv", MPI_Irecv(got, N, MPI_INT, world_rank + 1,
                                            5, c, &reqs[0]));
    check_rc(&v, "MPI_Iallreduce",
             MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c, &reqs[1]));
    if (world_rank % 2 == 0) {
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&c));
        if (c != MPI_COMM_NULL)
            fail(&v, "the freed handle is not MPI_COMM_NULL");
    }
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    if (world_rank % 2 == 1) {
        int sent[N];
        for (int i = 0; i < N; i++)
            sent[i] = world_rank * 1000 + i;
        check_rc(&v, "MPI_Send",
                 MPI_Send(sent, N, MPI_INT, world_rank - 1, 5, c));
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&c));
    }
    /* A communicator made meanwhile is one of its own. */
    MPI_Comm d = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int *all = world_members();
    if (d != MPI_COMM_NULL)
        verify_collectives(&v, d, all, world_size, "dup after the free");
    free(all);
    MPI_Comm_free(&d);
    check_rc(&v, "MPI_Waitall", MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    if (sum != world_size * (world_size + 1) / 2)
        fail(&v, "allreduce finished after the free gave %d", sum);
    for (int i = 0; receiver && i < N; i++) {
        if (got[i] != (world_rank + 1) * 1000 + i) {
            fail(&v, "receive finished after the free: [%d] = %d", i,
                 got[i]);
            break;
        }
    }
    report(&v, "MPI_Comm_free with a receive and an allreduce pending");
}

/* MPI_Comm_disconnect: collective, and what was pending on the
 * communicator completes; MPI_Comm_get_parent of a process no one
 * spawned is MPI_COMM_NULL. */
static void check_disconnect(void)
{
    struct verdict v = {""};
    MPI_Comm parent = MPI_COMM_WORLD;
    check_rc(&v, "MPI_Comm_get_parent", MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL)
        fail(&v, "MPI_Comm_get_parent did not give MPI_COMM_NULL");
    MPI_Comm c = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int next = (world_rank + 1) % world_size,
        prev = (world_rank + world_size - 1) % world_size;
    int sent = 1000 + world_rank, got = -1;
    MPI_Request reqs[2];
    check_rc(&v, "MPI_Irecv", MPI_Irecv(&got, 1, MPI_INT, prev, 3, c,
                                        &reqs[0]));
    check_rc(&v, "MPI_Isend", MPI_Isend(&sent, 1, MPI_INT, next, 3, c,
                                        &reqs[1]));
    check_rc(&v, "MPI_Comm_disconnect", MPI_Comm_disconnect(&c));
    if (c != MPI_COMM_NULL)
        fail(&v, "the disconnected handle is not MPI_COMM_NULL");
    check_rc(&v, "MPI_Waitall", MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    if (got != 1000 + prev)
        fail(&v, "the receive pending at the disconnect gave %d", got);
    MPI_Comm null = MPI_COMM_NULL;
    if (error_class(MPI_Comm_disconnect(&null)) != MPI_ERR_COMM)
        fail(&v, "MPI_Comm_disconnect(MPI_COMM_NULL) is not MPI_ERR_COMM");
    report(&v, "MPI_Comm_disconnect with messages pending, and "
           "MPI_Comm_get_parent");
}

/* Several communicators made in the same order everywhere, used one after
 * another in an interleaved sequence. */
static void check_interleaved(void)
{
    struct verdict v = {""};
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL, c = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &a));
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &b));
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(a, &c));
    if (v.detail[0] != '\0') {
        report(&v, "interleaved collectives on three communicators");
        return;
    }
    int *bm = malloc((size_t)world_size * sizeof(int));
    int nb = split_members(color_parity, key_reverse, world_rank, bm);
    int brank = index_of(bm, nb, world_rank);
    int *gathered = malloc((size_t)world_size * sizeof(int));
    int bsize = -1, bgot = -1;
    MPI_Comm_size(b, &bsize);
    MPI_Comm_rank(b, &bgot);
    if (bsize != nb || bgot != brank)
        fail(&v, "b: size %d rank %d, expected %d and %d", bsize, bgot, nb,
             brank);
    int bad = v.detail[0] != '\0', any_bad = 1;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

    for (int it = 0; it < 100 && !any_bad; it++) {
        /* a: allreduce sum of (rank + it) */
        int x = world_rank + it, sum = -1;
        check_rc(&v, "MPI_Allreduce",
                 MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, a));
        int want = world_size * (world_size - 1) / 2 + it * world_size;
        if (sum != want)
            fail(&v, "iteration %d on a: sum %d, expected %d", it, sum, want);
        /* b: bcast from a root that moves */
        int root = it % nb;
        int val = brank == root ? bm[root] * 1000 + it : -1;
        check_rc(&v, "MPI_Bcast", MPI_Bcast(&val, 1, MPI_INT, root, b));
        if (val != bm[root] * 1000 + it)
            fail(&v, "iteration %d on b: bcast gave %d", it, val);
        /* c: allgather */
        int mine = world_rank * 7 + it;
        check_rc(&v, "MPI_Allgather",
                 MPI_Allgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, c));
        for (int r = 0; r < world_size; r++)
            if (gathered[r] != r * 7 + it) {
                fail(&v, "iteration %d on c: slot %d is %d", it, r,
                     gathered[r]);
                break;
            }
        if (it % 10 == 0)
            check_rc(&v, "MPI_Barrier", MPI_Barrier(it % 20 ? b : a));
    }
    MPI_Comm_free(&c);
    MPI_Comm_free(&b);
    MPI_Comm_free(&a);
    free(bm);
    free(gathered);
    report(&v, "interleaved collectives on three communicators (100 rounds)");
}

/* MPI_Comm_idup: the duplicate is usable once the request completes, and
 * is a communicator of its own (a message on it does not match a receive
 * on its parent). */
static void check_idup(void)
{
    struct verdict v = {""};
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req;
    check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    int result = -1, rank = -1, sum = 0;
    check_rc(&v, "MPI_Comm_compare",
             MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    MPI_Comm_rank(dup, &rank);
    check_rc(&v, "MPI_Allreduce",
             MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    if (result != MPI_CONGRUENT || rank != world_rank ||
        sum != world_size * (world_size - 1) / 2)
        fail(&v, "the duplicate compares %d, rank %d, sums %d", result, rank,
             sum);
    int to = (world_rank + 1) % world_size;
    int from = (world_rank + world_size - 1) % world_size;
    int on_world = -1, on_dup = -1, a = 1, b = 2;
    MPI_Request r[2];
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(&on_world, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &r[0]));
    check_rc(&v, "MPI_Irecv", MPI_Irecv(&on_dup, 1, MPI_INT, from, 9, dup,
                                        &r[1]));
    check_rc(&v, "MPI_Send", MPI_Send(&b, 1, MPI_INT, to, 9, dup));
    check_rc(&v, "MPI_Send", MPI_Send(&a, 1, MPI_INT, to, 9, MPI_COMM_WORLD));
    check_rc(&v, "MPI_Waitall", MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    if (on_world != 1 || on_dup != 2)
        fail(&v, "messages crossed communicators: %d on world, %d on the "
             "duplicate", on_world, on_dup);
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup));
    report(&v, "MPI_Comm_idup: congruent, usable after MPI_Wait, its "
           "messages its own");
}

/* MPI_Comm_idup never waits for the other members: ranks start idups of
 * two communicators in opposite orders, and rank 0 sends to rank 1 after
 * its idup of the world while rank 1 receives that message before its
 * own. A blocking idup deadlocks in both where forming a duplicate's
 * connections needs every member (PDMPI_SHM=0, or more than one host). */
static void check_idup_overlap(void)
{
    struct verdict v = {""};
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    MPI_Comm da = MPI_COMM_NULL, db = MPI_COMM_NULL, dw = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &a));
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &b));
    MPI_Request r[3];
    if (world_rank % 2 == 0) {
        check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(a, &da, &r[0]));
        check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(b, &db, &r[1]));
    } else {
        check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(b, &db, &r[1]));
        check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(a, &da, &r[0]));
    }
    int token = 0;
    if (world_rank == 0) {
        check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(MPI_COMM_WORLD, &dw, &r[2]));
        if (world_size > 1)
            check_rc(&v, "MPI_Send",
                     MPI_Send(&(int){ 41 }, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    } else {
        if (world_rank == 1)
            check_rc(&v, "MPI_Recv", MPI_Recv(&token, 1, MPI_INT, 0, 5,
                                              MPI_COMM_WORLD,
                                              MPI_STATUS_IGNORE));
        check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(MPI_COMM_WORLD, &dw, &r[2]));
    }
    check_rc(&v, "MPI_Waitall", MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    if (world_rank == 1 && token != 41)
        fail(&v, "rank 1 received %d from rank 0, expected 41", token);
    /* Each duplicate works, and is its own: sums of ranks plus a
     * communicator's number over the three at once. */
    MPI_Comm dups[3] = { da, db, dw };
    for (int i = 0; i < 3; i++) {
        int mine = world_rank + 1000 * i, sum = -1;
        check_rc(&v, "MPI_Allreduce",
                 MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, dups[i]));
        int expect = world_size * (world_size - 1) / 2 + 1000 * i * world_size;
        if (sum != expect)
            fail(&v, "duplicate %d sums %d, expected %d", i, sum, expect);
    }
    for (int i = 0; i < 3; i++)
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dups[i]));
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&a));
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&b));
    report(&v, "MPI_Comm_idup waits for nobody: two in opposite orders, "
           "one across a message");
}

/* An intercommunicator's MPI_Comm_idup waits for nobody either: world
 * rank 0 (the lower half) sends to the upper half's first rank after its
 * idup, and that rank receives it before its own. The duplicate then
 * reduces each side's world ranks for the other. */
static void check_idup_inter(void)
{
    if (world_size < 2) {
        report_skip("one rank makes one group",
                    "MPI_Comm_idup of an intercommunicator");
        return;
    }
    struct verdict v = {""};
    int half = world_size / 2;
    bool upper = world_rank >= half;
    MPI_Comm local = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    MPI_Comm dup = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(MPI_COMM_WORLD, upper, world_rank, &local));
    check_rc(&v, "MPI_Intercomm_create",
             MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, upper ? 0 : half,
                                  11, &inter));
    MPI_Request r = MPI_REQUEST_NULL;
    int token = 0;
    if (world_rank == half)
        check_rc(&v, "MPI_Recv", MPI_Recv(&token, 1, MPI_INT, 0, 6,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_rc(&v, "MPI_Comm_idup", MPI_Comm_idup(inter, &dup, &r));
    if (world_rank == 0)
        check_rc(&v, "MPI_Send",
                 MPI_Send(&(int){ 41 }, 1, MPI_INT, half, 6, MPI_COMM_WORLD));
    check_rc(&v, "MPI_Wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (world_rank == half && token != 41)
        fail(&v, "rank %d received %d from rank 0, expected 41", half, token);
    int remote = -1, sum = -1, lower_sum = half * (half - 1) / 2;
    int upper_sum = world_size * (world_size - 1) / 2 - lower_sum;
    check_rc(&v, "MPI_Comm_remote_size", MPI_Comm_remote_size(dup, &remote));
    check_rc(&v, "MPI_Allreduce", MPI_Allreduce(&world_rank, &sum, 1, MPI_INT,
                                                MPI_SUM, dup));
    if (remote != (upper ? half : world_size - half) ||
        sum != (upper ? lower_sum : upper_sum))
        fail(&v, "the duplicate's remote group has %d ranks, its allreduce "
             "gave %d", remote, sum);
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup));
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&inter));
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&local));
    report(&v, "MPI_Comm_idup of an intercommunicator waits for nobody");
}

/* Datatype attributes: a copy callback that stores value + 1 in a
 * duplicate, a delete callback that counts, on a derived type and on
 * MPI_INT; a communicator's keyval is not one of a datatype's. */
static int type_deletes;

static int copy_type_attr(MPI_Datatype type, int keyval, void *extra,
                          void *in, void *out, int *flag)
{
    (void)type;
    (void)keyval;
    (void)extra;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_type_attr(MPI_Datatype type, int keyval, void *value,
                            void *extra)
{
    (void)type;
    (void)keyval;
    (void)value;
    (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

static void check_type_attributes(void)
{
    struct verdict v = {""};
    int key = MPI_KEYVAL_INVALID, comm_key = MPI_KEYVAL_INVALID, flag = 0;
    void *value = NULL;
    MPI_Datatype t, d;
    check_rc(&v, "MPI_Type_create_keyval",
             MPI_Type_create_keyval(copy_type_attr, delete_type_attr, &key,
                                    NULL));
    check_rc(&v, "MPI_Type_contiguous", MPI_Type_contiguous(2, MPI_INT, &t));
    check_rc(&v, "MPI_Type_set_attr", MPI_Type_set_attr(t, key, (void *)40));
    check_rc(&v, "MPI_Type_dup", MPI_Type_dup(t, &d));
    check_rc(&v, "MPI_Type_get_attr", MPI_Type_get_attr(d, key, &value, &flag));
    if (!flag || value != (void *)41)
        fail(&v, "the duplicate's attribute is %p (flag %d), expected 41",
             value, flag);
    check_rc(&v, "MPI_Type_delete_attr", MPI_Type_delete_attr(d, key));
    check_rc(&v, "MPI_Type_get_attr", MPI_Type_get_attr(d, key, &value, &flag));
    if (flag || type_deletes != 1)
        fail(&v, "after MPI_Type_delete_attr: flag %d, %d deletes", flag,
             type_deletes);
    check_rc(&v, "MPI_Type_free", MPI_Type_free(&t));
    check_rc(&v, "MPI_Type_free", MPI_Type_free(&d));
    if (type_deletes != 2)
        fail(&v, "%d delete callbacks after freeing both types, expected 2",
             type_deletes);
    check_rc(&v, "MPI_Type_set_attr",
             MPI_Type_set_attr(MPI_INT, key, (void *)7));
    check_rc(&v, "MPI_Type_get_attr",
             MPI_Type_get_attr(MPI_INT, key, &value, &flag));
    if (!flag || value != (void *)7)
        fail(&v, "MPI_INT's attribute is %p (flag %d)", value, flag);
    check_rc(&v, "MPI_Type_delete_attr", MPI_Type_delete_attr(MPI_INT, key));
    check_rc(&v, "MPI_Comm_create_keyval",
             MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                    MPI_COMM_NULL_DELETE_FN, &comm_key, NULL));
    int cls = -1;
    MPI_Error_class(MPI_Type_set_attr(MPI_INT, comm_key, NULL), &cls);
    /* Open MPI refuses it as MPI_ERR_OTHER. */
    if (cls == MPI_SUCCESS || (!on_open_mpi && cls != MPI_ERR_KEYVAL))
        fail(&v, "a communicator's keyval on a datatype: class %d, expected "
             "MPI_ERR_KEYVAL", cls);
    MPI_Comm_free_keyval(&comm_key);
    check_rc(&v, "MPI_Type_free_keyval", MPI_Type_free_keyval(&key));
    if (key != MPI_KEYVAL_INVALID)
        fail(&v, "MPI_Type_free_keyval left the keyval set");
    report(&v, "datatype attributes: copied by MPI_Type_dup, deleted by "
           "MPI_Type_delete_attr and MPI_Type_free, on MPI_INT too; a "
           "communicator's keyval refused");
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, newest first,
 * while MPI is still usable: each delete callback records its value,
 * whether MPI_Finalized was still false, and frees its own keyval (as
 * language bindings do). Checked after MPI_Finalize, by each rank. */
#define SELF_ATTRS 3
static int self_deleted[SELF_ATTRS], self_deletes, self_delete_errors;

static int delete_self_attr(MPI_Comm comm, int keyval, void *value,
                            void *extra)
{
    (void)comm;
    (void)extra;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized)
        self_delete_errors++;
    if (self_deletes < SELF_ATTRS)
        self_deleted[self_deletes] = (int)(intptr_t)value;
    self_deletes++;
    if (MPI_Comm_free_keyval(&keyval) != MPI_SUCCESS)
        self_delete_errors++;
    return MPI_SUCCESS;
}

static void set_self_attributes(void)
{
    for (int i = 0; i < SELF_ATTRS; i++) {
        int key;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_self_attr, &key,
                               NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, key, (void *)(intptr_t)(i + 1));
    }
}

static int check_self_deleted(void)
{
    bool reversed = self_deletes == SELF_ATTRS;
    for (int i = 0; reversed && i < SELF_ATTRS; i++)
        reversed = self_deleted[i] == SELF_ATTRS - i;
    if (reversed && self_delete_errors == 0)
        return 0;
    fprintf(stderr, "comm_check: rank %d: MPI_Finalize ran %d of %d delete "
            "callbacks of MPI_COMM_SELF's attributes (values %d %d %d, "
            "expected %d %d %d), %d of them saw MPI finalized or could not "
            "free their keyval\n", world_rank, self_deletes, SELF_ATTRS,
            self_deleted[0], self_deleted[1], self_deleted[2], 3, 2, 1,
            self_delete_errors);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();

    if (world_rank == 0)
        printf("# comm_check on %d rank(s)\n", world_size);
    /* "idup": those checks alone (the suite runs them on the network
     * path too, where the whole program would take a minute). */
    bool all = !(argc > 1 && strcmp(argv[1], "idup") == 0);
    if (all) {
        check_world_and_self();
        check_names();
        check_dup();
        check_splits();
        check_split_type();
        check_groups();
        check_attributes();
        check_type_attributes();
    }
    check_idup();
    check_idup_overlap();
    check_idup_inter();
    if (all) {
        check_dup_free_cycles();
        check_free_pending();
        check_disconnect();
        check_interleaved();
        set_self_attributes();
    }

    int status = finish();
    MPI_Finalize();
    return status | (all ? check_self_deleted() : 0);
}
