#!/bin/sh
# PDMPI_STATS=1: rank 0 prints one table at MPI_Finalize, summed over the
# ranks. world_check makes a known number of calls per rank: 11
# allreduces (10 of a long, 1 of an int), 2 allgathers, 1 bcast, 1 barrier.
# On one host the collectives go through shared memory ("shm"); with
# PDMPI_SHM=0 through gloo, with the algorithms gloo ran in brackets.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

for np in $PD_SIZES; do
    PDMPI_STATS=1 run_np "$np" "$top_builddir/tests/world_check" \
        > "$PD_TMP/out" 2>&1
    way=shm
    [ "$np" -eq 1 ] && way=self
    check "np $np: one table, from rank 0" \
        test "$(grep -c '^pdmpi stats:' "$PD_TMP/out")" -eq 1
    check "np $np: MPI_Allreduce $((11 * np)) calls, $((84 * np)) B, via $way" \
        grep -Eq "^  MPI_Allreduce +$((11 * np)) +$((84 * np)) B +[0-9.]+ +[0-9.]+  $way\$" "$PD_TMP/out"
    check "np $np: MPI_Allgather $((2 * np)), MPI_Bcast $np, MPI_Barrier $np calls" \
        sh -c "grep -Eq '^  MPI_Allgather +$((2 * np)) ' '$PD_TMP/out' &&
               grep -Eq '^  MPI_Bcast +$np ' '$PD_TMP/out' &&
               grep -Eq '^  MPI_Barrier +$np ' '$PD_TMP/out'"
done
# The other collectives of one host go through shared memory too.
PDMPI_STATS=1 run_np 3 "$top_builddir/tests/colls_check" > "$PD_TMP/out" 2>&1
for call in Gather Scatter Alltoall; do
    check "np 3: MPI_$call(v) via shm" \
        grep -Eq "^  MPI_$call\\(v\\) +[0-9]+ .*  shm\$" "$PD_TMP/out"
done
# A communicator on one host moves no data over gloo, whatever the call
# (calls with nothing to move, such as zero counts, name no way).
sed 's/^/# /' "$PD_TMP/out" | grep '^#   MPI_'
check "np 3, colls_check on one host: no call went over gloo" \
    sh -c "grep -q '^  MPI_Alltoall' '$PD_TMP/out' && ! grep -E '^  MPI_' '$PD_TMP/out' | grep -q gloo"
PDMPI_SHM=0 PDMPI_STATS=1 run_np 2 "$top_builddir/tests/world_check" \
    > "$PD_TMP/out" 2>&1
check "np 2, PDMPI_SHM=0: MPI_Allreduce via gloo, 4-8 B in the agreement" \
    grep -Eq "^  MPI_Allreduce +22 +168 B +[0-9.]+ +[0-9.]+  gloo \\(in the agreement\\)\$" "$PD_TMP/out"
PDMPI_SHM=0 PDMPI_ALGO_ALLREDUCE=bcube PDMPI_STATS=1 \
    run_np 3 "$top_builddir/tests/world_check" > "$PD_TMP/out" 2>&1
check "np 3, PDMPI_ALGO_ALLREDUCE=bcube: the table names it" \
    grep -Eq "^  MPI_Allreduce +33 +252 B +[0-9.]+ +[0-9.]+  gloo \\(bcube\\)\$" "$PD_TMP/out"
PDMPI_STATS=2 "$top_builddir/tests/world_check" > "$PD_TMP/bad" 2>&1
check "PDMPI_STATS=2 is refused with a message" \
    grep -q "PDMPI_STATS=2 is not 0 or 1" "$PD_TMP/bad"

finish
