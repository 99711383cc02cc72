#!/bin/sh
# MPI_THREAD_MULTIPLE: threads issuing collectives on different
# communicators at once get right results and never deadlock.
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    check_tap "threads_check at np $np" run_np "$np" "$top_builddir/tests/threads_check"
done
finish
