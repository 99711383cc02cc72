/* Groups: size, rank, subsets, set operations, rank translation. */
#include <stdlib.h>

#include "api/api.h"
#include "core/group.h"

#pragma weak MPI_Group_size = PMPI_Group_size
#pragma weak MPI_Group_rank = PMPI_Group_rank
#pragma weak MPI_Group_incl = PMPI_Group_incl
#pragma weak MPI_Group_excl = PMPI_Group_excl
#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
#pragma weak MPI_Group_union = PMPI_Group_union
#pragma weak MPI_Group_intersection = PMPI_Group_intersection
#pragma weak MPI_Group_difference = PMPI_Group_difference
#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
#pragma weak MPI_Group_compare = PMPI_Group_compare
#pragma weak MPI_Group_free = PMPI_Group_free

static int pd_check_group(const char *call, MPI_Group group)
{
    if (!pd_group_is_valid(group))
        return pd_raise(NULL, call, MPI_ERR_GROUP,
                        group == MPI_GROUP_NULL ? "group is MPI_GROUP_NULL"
                                                : "not a valid group handle");
    return MPI_SUCCESS;
}

static int pd_new_group(const char *call, int n, const int *members,
                        MPI_Group *out)
{
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    *out = pd_group_new(n, members);
    if (*out == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
    static const char call[] = "MPI_Group_size";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group));
    if (size == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "size is NULL");
    *size = group->size;
    return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    static const char call[] = "MPI_Group_rank";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group));
    if (rank == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "rank is NULL");
    *rank = group->rank;
    return MPI_SUCCESS;
}

/* ranks[0..n) must be distinct ranks of group. */
static int pd_check_rank_list(const char *call, MPI_Group group, int n,
                              const int ranks[])
{
    if (n < 0 || n > group->size)
        return pd_raise(NULL, call, MPI_ERR_ARG,
                        "n = %d is not in [0, %d]", n, group->size);
    if (n > 0 && ranks == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "ranks is NULL");
    char *seen = calloc((size_t)group->size + 1, 1);
    if (seen == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (ranks[i] < 0 || ranks[i] >= group->size)
            rc = pd_raise(NULL, call, MPI_ERR_RANK,
                          "ranks[%d] = %d is not a rank of the group (size %d)",
                          i, ranks[i], group->size);
        else if (seen[ranks[i]]++)
            rc = pd_raise(NULL, call, MPI_ERR_RANK,
                          "rank %d appears twice in ranks", ranks[i]);
    }
    free(seen);
    return rc;
}

static int pd_group_incl(const char *call, MPI_Group group, int n,
                         const int ranks[], MPI_Group *newgroup)
{
    PD_CHECK(pd_check_rank_list(call, group, n, ranks));
    int *members = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (members == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < n; i++)
        members[i] = group->members[ranks[i]];
    int rc = pd_new_group(call, n, members, newgroup);
    free(members);
    return rc;
}

static int pd_group_excl(const char *call, MPI_Group group, int n,
                         const int ranks[], MPI_Group *newgroup)
{
    PD_CHECK(pd_check_rank_list(call, group, n, ranks));
    char *excluded = calloc((size_t)group->size + 1, 1);
    int *members = malloc((size_t)group->size * sizeof(int) + 1);
    if (excluded == NULL || members == NULL) {
        free(excluded);
        free(members);
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        excluded[ranks[i]] = 1;
    int kept = 0;
    for (int r = 0; r < group->size; r++)
        if (!excluded[r])
            members[kept++] = group->members[r];
    int rc = pd_new_group(call, kept, members, newgroup);
    free(excluded);
    free(members);
    return rc;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
                    MPI_Group *newgroup)
{
    static const char call[] = "MPI_Group_incl";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group));
    return pd_group_incl(call, group, n, ranks, newgroup);
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
                    MPI_Group *newgroup)
{
    static const char call[] = "MPI_Group_excl";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group));
    return pd_group_excl(call, group, n, ranks, newgroup);
}

/* How many of first, first + stride, ... lie between first and last
 * (stride not 0, leading toward last). */
static long pd_range_length(int first, int last, int stride)
{
    return ((long)last - first) / stride + 1;
}

/* The ranks that ranges[0..n) (first, last, stride) name, in order, in a
 * new array *ranks of *count. Every first and last must be a rank of
 * group, its stride not 0 nor leading away from last (Open MPI refuses
 * those as MPI_ERR_RANK too); repeated ranks are left to the rank-list
 * check. */
static int pd_expand_ranges(const char *call, MPI_Group group, int n,
                            int ranges[][3], int **ranks, int *count)
{
    if (n < 0)
        return pd_raise(NULL, call, MPI_ERR_ARG, "n is %d (negative)", n);
    if (n > 0 && ranges == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "ranges is NULL");
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= group->size || last < 0 ||
            last >= group->size)
            return pd_raise(NULL, call, MPI_ERR_RANK, "range %d (%d, %d, "
                            "%d) reaches outside the group's ranks 0..%d",
                            i, first, last, stride, group->size - 1);
        if (stride == 0 || (stride > 0 && first > last) ||
            (stride < 0 && first < last))
            return pd_raise(NULL, call, MPI_ERR_RANK, "range %d (%d, %d, "
                            "%d) never reaches its last rank", i, first, last,
                            stride);
        total += pd_range_length(first, last, stride);
        if (total > group->size)
            return pd_raise(NULL, call, MPI_ERR_RANK, "the ranges name "
                            "more ranks than the group's %d, so some twice",
                            group->size);
    }
    *ranks = malloc((size_t)(total > 0 ? total : 1) * sizeof(int));
    if (*ranks == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        long length = pd_range_length(first, last, stride);
        for (long j = 0; j < length; j++)
            (*ranks)[k++] = (int)(first + j * stride);
    }
    *count = k;
    return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group *newgroup)
{
    static const char call[] = "MPI_Group_range_incl";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group));
    int *ranks, count;
    PD_CHECK(pd_expand_ranges(call, group, n, ranges, &ranks, &count));
    int rc = pd_group_incl(call, group, count, ranks, newgroup);
    free(ranks);
    return rc;
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group *newgroup)
{
    static const char call[] = "MPI_Group_range_excl";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group));
    int *ranks, count;
    PD_CHECK(pd_expand_ranges(call, group, n, ranges, &ranks, &count));
    int rc = pd_group_excl(call, group, count, ranks, newgroup);
    free(ranks);
    return rc;
}

enum pd_set_op { PD_UNION, PD_INTERSECTION, PD_DIFFERENCE };

/* Set operations keep group1's order, then (union) group2's newcomers. */
static int pd_group_set_op(const char *call, MPI_Group g1, MPI_Group g2,
                           enum pd_set_op op, MPI_Group *newgroup)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, g1));
    PD_CHECK(pd_check_group(call, g2));
    if (newgroup == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "newgroup is NULL");
    int *members = malloc((size_t)(g1->size + g2->size + 1) * sizeof(int));
    if (members == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        bool in2 = pd_group_rank_of(g2, g1->members[i]) != MPI_UNDEFINED;
        if (op == PD_UNION || (op == PD_INTERSECTION) == in2)
            members[n++] = g1->members[i];
    }
    if (op == PD_UNION)
        for (int i = 0; i < g2->size; i++)
            if (pd_group_rank_of(g1, g2->members[i]) == MPI_UNDEFINED)
                members[n++] = g2->members[i];
    int rc = pd_new_group(call, n, members, newgroup);
    free(members);
    return rc;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return pd_group_set_op("MPI_Group_union", group1, group2, PD_UNION,
                           newgroup);
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2,
                            MPI_Group *newgroup)
{
    return pd_group_set_op("MPI_Group_intersection", group1, group2,
                           PD_INTERSECTION, newgroup);
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2,
                          MPI_Group *newgroup)
{
    return pd_group_set_op("MPI_Group_difference", group1, group2,
                           PD_DIFFERENCE, newgroup);
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                               MPI_Group group2, int ranks2[])
{
    static const char call[] = "MPI_Group_translate_ranks";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group1));
    PD_CHECK(pd_check_group(call, group2));
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return pd_raise(NULL, call, MPI_ERR_ARG, "bad n (%d) or rank arrays", n);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= group1->size)
            return pd_raise(NULL, call, MPI_ERR_RANK,
                            "ranks1[%d] = %d is not a rank of group1 (size %d)",
                            i, ranks1[i], group1->size);
        ranks2[i] = pd_group_rank_of(group2, group1->members[ranks1[i]]);
    }
    return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char call[] = "MPI_Group_compare";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_group(call, group1));
    PD_CHECK(pd_check_group(call, group2));
    if (result == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "result is NULL");
    bool same_size = group1->size == group2->size;
    bool same_order = same_size, same_set = same_size;
    for (int i = 0; same_size && i < group1->size; i++) {
        if (group1->members[i] != group2->members[i])
            same_order = false;
        if (pd_group_rank_of(group2, group1->members[i]) == MPI_UNDEFINED)
            same_set = false;
    }
    *result = same_order ? MPI_IDENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int PMPI_Group_free(MPI_Group *group)
{
    static const char call[] = "MPI_Group_free";
    PD_CHECK(pd_check_active(call));
    if (group == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "group is NULL");
    PD_CHECK(pd_check_group(call, *group));
    pd_group_release(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
