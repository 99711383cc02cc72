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

# All 1 000 set-ups at once (a thread each) under the soft descriptor
# limit most systems start with: pdmpirun's store needs about 4 000
# descriptors meanwhile (it ran out at 1 024 and the clients waited out
# their whole deadline on one attempt each: past 100 s; 8 s now).
check_tap "many_comms_check at np 4: 1000 threads set up at once, soft limit 1024" \
    sh -c 'ulimit -Sn 1024 && exec "$0" "$@"' timeout -k 10 120 "$PDMPIRUN" \
    -np 4 "$top_builddir/tests/many_comms_check" 1000 1000 1
finish
