#!/bin/sh
# Every collective, datatype, op, root and MPI_IN_PLACE variant of the
# conformance program, at every world size, against values the program
# computes independently on each rank.
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    if out=$(run_np "$np" "$top_builddir/tests/coll_check" 2>&1); then
        ok "coll_check at np $np ($(echo "$out" | grep -c '^ok') checks)"
    else
        echo "$out" | grep -v '^ok' | head -40
        not_ok "coll_check at np $np"
    fi
done
finish
