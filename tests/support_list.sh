#!/bin/sh
# docs/supported.md, the list of MPI functions pdmpi provides and of those
# it does not, is what scripts/gen-support-list.sh makes of the code now:
# an entry point added or removed without `make support-list` fails here.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

mpi_h=""
for flag in $PD_OMPI_CPPFLAGS; do
    dir=${flag#-I}
    [ -z "$mpi_h" ] && [ -f "$dir/mpi.h" ] && mpi_h="$dir/mpi.h"
done
[ -n "$mpi_h" ] || { echo "Open MPI's mpi.h not found in '$PD_OMPI_CPPFLAGS'"; exit 99; }

sh "$top_srcdir/scripts/gen-support-list.sh" "$mpi_h" "$top_srcdir/src/api" \
    > "$PD_TMP/supported.md"
check "docs/supported.md is current (make support-list rewrites it)" \
    diff -u "$top_srcdir/docs/supported.md" "$PD_TMP/supported.md"
# Every function it lists as provided is exported, strong and weak.
lib="$top_builddir/.libs/libpdmpi.so"
nm -D --defined-only "$lib" | awk '$2 == "W" { print $3 }' | sort > "$PD_TMP/weak"
sed -n '/^## Provided/,/^## Not provided/p' "$PD_TMP/supported.md" |
    grep -o 'MPI_[A-Za-z0-9_]*' | sort -u > "$PD_TMP/listed"
check "every function listed as provided is exported by libpdmpi" \
    test -z "$(comm -23 "$PD_TMP/listed" "$PD_TMP/weak")"
finish
