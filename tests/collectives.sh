#!/bin/sh
# Every collective, datatype, op, root and MPI_IN_PLACE variant of the
# conformance program, at every world size, against values the program
# computes independently on each rank.
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    check_tap "coll_check at np $np" run_np "$np" "$top_builddir/tests/coll_check"
done
finish
