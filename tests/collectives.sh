#!/bin/sh
# Every collective, datatype, op, root and MPI_IN_PLACE variant of the
# conformance program, at every world size, against values the program
# computes independently on each rank.
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    check_tap "coll_check at np $np" run_np "$np" "$top_builddir/tests/coll_check"
done

# Over gloo alone (on one host the shared-memory path would take these
# calls): the default, where calls of up to 64 KiB per rank ride in the
# agreement and larger ones run pipelined, and each allreduce algorithm
# forced (the small calls then run it too); a bad value is refused.
for algo in auto pipelined ring bcube; do
    for np in 2 3 4; do
        check_tap "coll_check at np $np over gloo with PDMPI_ALGO_ALLREDUCE=$algo" \
            env PDMPI_SHM=0 PDMPI_ALGO_ALLREDUCE=$algo "$PDMPIRUN" -np "$np" \
            "$top_builddir/tests/coll_check" --big 65536
    done
done
# Blocks of a prime count split in several pieces each (the pipelined
# ring and chain move 60 KiB at a time).
for np in 2 3 4; do
    check_tap "coll_check at np $np over gloo, 300007 elements" \
        env PDMPI_SHM=0 "$PDMPIRUN" -np "$np" \
        "$top_builddir/tests/coll_check" --big 300007
done
check "PDMPI_ALGO_ALLREDUCE=tree is refused with a message" \
    sh -c "PDMPI_ALGO_ALLREDUCE=tree '$top_builddir/tests/world_check' 2>&1 |
           grep -q 'PDMPI_ALGO_ALLREDUCE=tree is not one of auto, pipelined, ring, bcube'"
finish
