#!/bin/sh
# Argument errors: the right class under MPI_ERRORS_RETURN (and the
# library still works afterwards); one clear line and a non-zero exit
# under the default MPI_ERRORS_ARE_FATAL; a clear error, never a crash,
# for calls before MPI_Init or after MPI_Finalize.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

for np in $PD_SIZES; do
    check_tap "errors_check at np $np" run_np "$np" "$top_builddir/tests/errors_check"
done

fatal="$top_builddir/tests/fatal_check"
for np in 1 2; do
    run_np "$np" "$fatal" fatal > "$PD_TMP/fatal" 2>&1
    rc=$?
    check "fatal handler at np $np: non-zero exit (status $rc), not a signal" \
        sh -c "[ $rc -ne 0 ] && [ $rc -lt 128 ]"
    check "fatal handler at np $np: one line naming rank, call, communicator and class" \
        grep -Eq '^pdmpi: rank [0-9]+: MPI_Allreduce on MPI_COMM_WORLD: MPI_ERR_COUNT: count is negative' "$PD_TMP/fatal"
done

run_np 1 "$fatal" no-comm > "$PD_TMP/no-comm" 2>&1
check "a call without a communicator names none" \
    grep -Eq '^pdmpi: rank 0: MPI_Type_size: MPI_ERR_TYPE: datatype is MPI_DATATYPE_NULL' "$PD_TMP/no-comm"
run_np 1 "$fatal" bottom > "$PD_TMP/bottom" 2>&1
check "MPI_BOTTOM with MPI_INT: the message says what MPI_BOTTOM takes" \
    grep -Eq '^pdmpi: rank 0: MPI_Bcast on MPI_COMM_WORLD: MPI_ERR_BUFFER: buffer is NULL but count is 1 \(MPI_BOTTOM, which is NULL, takes only a datatype of absolute addresses, and MPI_INT is not one\)' "$PD_TMP/bottom"
run_np 2 "$fatal" unnamed > "$PD_TMP/unnamed" 2>&1
check "an unnamed communicator is named by its id" \
    grep -Eq '^pdmpi: rank [01]: MPI_Allreduce on communicator [0-9a-z:]+: MPI_ERR_COUNT' "$PD_TMP/unnamed"

for mode in before-init after-finalize; do
    timeout 30 "$fatal" "$mode" > "$PD_TMP/$mode" 2>&1
    rc=$?
    check "$mode: non-zero exit (status $rc), not a signal" sh -c "[ $rc -ne 0 ] && [ $rc -lt 128 ]"
    check "$mode: message says so" grep -Eq "called (before MPI_Init|after MPI_Finalize)" "$PD_TMP/$mode"
done

# Malformed configuration is named, not ignored.
PDMPI_TIMEOUT=soon timeout 30 "$top_builddir/examples/trainer" > "$PD_TMP/cfg" 2>&1
rc=$?
check "PDMPI_TIMEOUT=soon is rejected by name (status $rc)" \
    sh -c "[ $rc -ne 0 ] && grep -q 'PDMPI_TIMEOUT=soon' '$PD_TMP/cfg'"
PDMPI_RANK=7 PDMPI_SIZE=2 timeout 30 "$top_builddir/examples/trainer" > "$PD_TMP/rank" 2>&1
rc=$?
check "PDMPI_RANK out of range is rejected by name (status $rc)" \
    sh -c "[ $rc -ne 0 ] && grep -q 'PDMPI_RANK=7' '$PD_TMP/rank'"
finish
