#!/bin/sh
# MPI_THREAD_MULTIPLE: threads issuing collectives on different
# communicators at once get right results and never deadlock; 1 000 live
# communicators per process, first used by 500 threads at once (each
# set-up meets the others' in the rendezvous store and in /dev/shm).
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    check_tap "threads_check at np $np" run_np "$np" "$top_builddir/tests/threads_check"
    check_tap "many_comms_check at np $np: 1000 communicators, 500 threads" \
        run_np "$np" "$top_builddir/tests/many_comms_check" 1000 500 2
done
finish
