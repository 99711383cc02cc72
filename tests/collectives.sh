#!/bin/sh
# Every collective, datatype, op, root and MPI_IN_PLACE variant of the
# conformance program, at every world size, against values the program
# computes independently on each rank.
. "$top_srcdir/tests/lib.sh"

for np in $PD_SIZES; do
    check_tap "coll_check at np $np" run_np "$np" "$top_builddir/tests/coll_check"
done

# Each gloo algorithm forced, over gloo alone (on one host the shared
# memory path would take these calls): every allreduce, broadcast and
# allgather algorithm runs in one of the combinations, at sizes where the
# tables pick others too. Bad values are refused.
for combo in ring:binomial:ring bcube:one-to-all:classic-ring \
             ring-chunked:binomial:classic-ring \
             halving-doubling:one-to-all:ring; do
    ar=${combo%%:*} rest=${combo#*:}
    bc=${rest%%:*} ag=${rest#*:}
    for np in 2 3 4; do
        check_tap "coll_check at np $np over gloo, allreduce $ar, broadcast $bc, allgather $ag" \
            env PDMPI_SHM=0 PDMPI_ALGO_ALLREDUCE=$ar PDMPI_ALGO_BCAST=$bc \
            PDMPI_ALGO_ALLGATHER=$ag "$PDMPIRUN" -np "$np" \
            "$top_builddir/tests/coll_check" --big 65536
    done
done
for bad in "ALLREDUCE=tree:auto, ring, bcube, ring-chunked, halving-doubling" \
           "BCAST=ring:auto, binomial, one-to-all" \
           "ALLGATHER=bcube:auto, ring, classic-ring"; do
    setting=PDMPI_ALGO_${bad%%:*} choices=${bad#*:}
    check "$setting is refused with a message" \
        sh -c "env $setting '$top_builddir/tests/world_check' 2>&1 |
               grep -q '$setting is not one of $choices'"
done
finish
