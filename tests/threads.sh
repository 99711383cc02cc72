#!/bin/sh
# MPI_THREAD_MULTIPLE: threads issuing collectives on different
# communicators at once get right results and never deadlock; 1 000 live
# communicators per process, first used by up to 500 threads at once (each
# set-up meets the others' in the rendezvous store and in /dev/shm).
# Threads per process are 500 up to np 2 and 1 000 over the job beyond:
# 2 000 runnable threads on the suite's 2 cores (np 4, beside the other
# test make runs at the same time) starved the store's own thread of
# the time to greet new connections, and the run outlived its bound.
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    threads=500
    [ "$np" -gt 2 ] && threads=$((1000 / np))
    check_tap "threads_check at np $np" run_np "$np" "$top_builddir/tests/threads_check"
    check_tap "many_comms_check at np $np: 1000 communicators, $threads threads" \
        run_np "$np" "$top_builddir/tests/many_comms_check" 1000 "$threads" 2
done
finish
