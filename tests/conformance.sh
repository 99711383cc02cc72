#!/bin/sh
# The trainer subset against independently computed answers: every
# datatype x op pair the standard allows (and MPI_ERR_OP for the rest),
# every collective with its in-place and v-variants, communicators and
# groups, nonblocking collectives, point-to-point, handle conversions,
# Cartesian and graph topologies with the neighbourhood collectives,
# intercommunicators with their collectives, MPI-1's names for calls
# deprecated in MPI-2 and removed in MPI-3,
# info objects, derived datatypes, files -- at np 1 to 5, so the
# non-power-of-two paths run too.
. "$top_srcdir/tests/lib.sh"

sizes=${PD_CONFORMANCE_SIZES:-"1 2 3 4 5"}
for prog in types_ops_check colls_check comm_check nonblocking_check p2p_check \
    requests_check handles_check topo_check neighbor_check info_check \
    icolls_check datatypes_check intercomm_check mpi1_check; do
    for np in $sizes; do
        check_tap "$prog at np $np" run_np "$np" "$top_builddir/tests/$prog"
    done
done
# MPI-IO: files every rank opens in a directory of this run's own.
pd_tmpdir
for np in $sizes; do
    check_tap "file_check at np $np" run_np "$np" \
        "$top_builddir/tests/file_check" "$PD_TMP"
done
# MPI_Comm_idup where forming a duplicate's connections needs every
# member: on one host, the network path.
for np in $sizes; do
    check_tap "comm_check idup without shared memory at np $np" \
        env PDMPI_SHM=0 timeout -k 10 "$PD_TEST_TIMEOUT" "$PDMPIRUN" \
        -np "$np" "$top_builddir/tests/comm_check" idup
done
# Nonblocking collectives open across blocking ones, over gloo alone
# (the path between hosts).
for np in $sizes; do
    check_tap "icolls_check without shared memory at np $np" \
        env PDMPI_SHM=0 timeout -k 10 "$PD_TEST_TIMEOUT" "$PDMPIRUN" \
        -np "$np" "$top_builddir/tests/icolls_check"
done
# Derived datatypes over the network path (gloo alone, as between
# hosts): large sends packed as they are written.
for np in 1 2 3 4; do
    check_tap "datatypes_check without shared memory at np $np" \
        env PDMPI_SHM=0 timeout -k 10 "$PD_TEST_TIMEOUT" "$PDMPIRUN" \
        -np "$np" "$top_builddir/tests/datatypes_check"
done
# Datatype scratch buffers given back at once instead of kept for the
# next call; a limit that is not a number of bytes is refused.
for np in 1 2 3 4; do
    check_tap "datatypes_check keeping no scratch at np $np" \
        env PDMPI_SCRATCH_KEEP=0 timeout -k 10 "$PD_TEST_TIMEOUT" \
        "$PDMPIRUN" -np "$np" "$top_builddir/tests/datatypes_check"
done
check "PDMPI_SCRATCH_KEEP=-1 is refused with a message" \
    sh -c "env PDMPI_SCRATCH_KEEP=-1 '$top_builddir/tests/world_check' 2>&1 |
           grep -q 'PDMPI_SCRATCH_KEEP=-1 is not a number of bytes'"
finish
