#!/bin/sh
# The example data-parallel trainer reaches the same weights as a
# single-process run over the same global batches, at every size, and
# every rank holds bitwise-identical weights.
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    if out=$(run_np "$np" "$top_builddir/examples/trainer" 2>&1) &&
        echo "$out" | grep -q "match single-process run"; then
        ok "trainer at np $np: $(echo "$out" | grep 'match single-process run')"
    else
        echo "$out" | tail -20
        not_ok "trainer at np $np"
    fi
done
finish
