#!/bin/sh
# Device-memory collectives and PaddlePaddle's backend semantics, on this
# GPU-less machine: the BKCL binding runs against test doubles of libbkcl
# and the XPU runtime (tests/bkcl_double), so unique-id exchange through
# the store, datatype/op mapping, routing and staging run for real; so
# does the NCCL binding, against doubles of libnccl and the CUDA runtime
# (tests/nccl_double) whose device memory faults when the host touches it;
# and the real NCCL is checked for its refusal where there is no GPU.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/launch_lib.sh"
pd_tmpdir

device_check="$top_builddir/tests/device_check"
doubles="$top_builddir/tests/bkcl_double/.libs"
PDMPI_BKCL_LIB="$doubles/libbkcl.so"
PDMPI_XPURT_LIB="$doubles/libxpurt.so"
export PDMPI_BKCL_LIB PDMPI_XPURT_LIB

# The doubles themselves, against answers computed independently.
check_tap "the BKCL and XPU runtime doubles pass their own checks (2 ranks)" \
    timeout -k 5 "$PD_TEST_TIMEOUT" \
    "$top_builddir/tests/bkcl_double/double_selftest" 2

for np in $PD_SIZES; do
    check_tap "np $np: XPU buffers go to BKCL (double), the rest is staged" \
        env PDMPI_BACKEND=bkcl "$PDMPIRUN" -np "$np" "$device_check" routed
done
check_tap "np 3, --backend gloo: XPU buffers are staged, BKCL untouched" \
    run_np 3 --backend gloo "$device_check" staged
check_tap "np 2, PDMPI_DEVICE_FALLBACK=error: a call BKCL cannot take fails" \
    env PDMPI_BACKEND=bkcl PDMPI_DEVICE_FALLBACK=error \
    "$PDMPIRUN" -np 2 "$device_check" refused
check_tap "np 2, pdmpirun --devices 1,0: one device per rank" \
    run_np 2 --backend bkcl --devices 1,0 "$device_check" routed

# auto: NCCL cannot run here, BKCL (the double) can; with one XPU for two
# ranks, auto falls back to gloo and says why.
PDMPI_DEBUG=info run_np 2 "$device_check" routed > "$PD_TMP/auto" 2>&1
check "auto chooses BKCL when an XPU per rank is there" \
    grep -q "policy auto (auto chose bkcl)" "$PD_TMP/auto"
XPU_DOUBLE_DEVICES=1 PDMPI_DEBUG=info run_np 2 "$device_check" staged \
    > "$PD_TMP/auto1" 2>&1
check "auto with 1 XPU for 2 ranks falls back to gloo and says why" \
    sh -c "grep -q 'bkcl not usable: 2 local ranks share 1 XPU device' '$PD_TMP/auto1' &&
           grep -q 'XPU memory -> staged through host memory to gloo' '$PD_TMP/auto1' &&
           grep -q '^1\.\.' '$PD_TMP/auto1'"
env -u PDMPI_BKCL_LIB -u PDMPI_XPURT_LIB PDMPI_DEBUG=info \
    "$PDMPIRUN" -np 2 "$top_builddir/tests/world_check" > "$PD_TMP/auto0" 2>&1
check "auto without any device library: gloo, and the reasons are logged" \
    sh -c "grep -q 'host path (gloo)' '$PD_TMP/auto0' &&
           [ \$(grep -c ': ok\$' '$PD_TMP/auto0') -eq 2 ]"

# refuses NAME EXPECTED COMMAND...: non-zero exit, EXPECTED on stderr.
refuses() {
    name=$1 expected=$2
    shift 2
    "$@" > "$PD_TMP/out" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ] && grep -qF -- "$expected" "$PD_TMP/out"; then
        ok "$name: exit $rc: $(grep -F -- "$expected" "$PD_TMP/out" | head -1 | cut -c1-150)"
    else
        sed 's/^/# /' "$PD_TMP/out" | head -5
        not_ok "$name (exit $rc; wanted '$expected')"
    fi
}

refuses "--backend nccl without a GPU" "backend nccl requested but" \
    run_np 2 --backend nccl "$top_builddir/tests/world_check"
refuses "--backend bkcl with 1 XPU for 2 ranks" \
    "backend bkcl requested but 2 local ranks share 1 XPU device" \
    env XPU_DOUBLE_DEVICES=1 "$PDMPIRUN" -np 2 --backend bkcl "$device_check"
refuses "--backend bkcl with no XPU visible" \
    "backend bkcl requested but no XPU device is visible" \
    env XPU_VISIBLE_DEVICES= "$PDMPIRUN" -np 2 --backend bkcl "$device_check"
refuses "--backend bkcl without libbkcl" "libbkcl cannot be loaded" \
    env PDMPI_BKCL_LIB=/nonexistent/libbkcl.so "$PDMPIRUN" -np 1 \
    --backend bkcl "$device_check"
refuses "a device id that is not a number" \
    "the device id 'gpu0' (PDMPI_DEVICE or FLAGS_selected_xpus) is not a non-negative integer" \
    env PDMPI_DEVICE=gpu0 "$PDMPIRUN" -np 1 --backend bkcl "$device_check"
refuses "two ranks on one XPU (PDMPI_DEVICE=0 on both)" \
    "ranks 0 and 1 of MPI_COMM_WORLD are on the same host and both on XPU device 0" \
    env PDMPI_DEVICE=0 "$PDMPIRUN" -np 2 --backend bkcl "$device_check"

# CUDA: the NCCL binding against the doubles of libnccl and the CUDA
# runtime (tests/nccl_double), whose device memory faults when the host
# touches it; built where the toolkit's headers are.
cuda_doubles="$top_builddir/tests/nccl_double/.libs"
cuda_check="$top_builddir/tests/cuda_check"
if [ -x "$cuda_check" ] && [ -f "$cuda_doubles/libnccl.so" ]; then
    counts="$PD_TMP/nccl_double_counts"
    cuda_env="PDMPI_NCCL_LIB=$cuda_doubles/libnccl.so PDMPI_CUDART_LIB=$cuda_doubles/libcudart.so NCCL_DOUBLE_COUNTS=$counts"
    bounded="timeout -k 10 $PD_TEST_TIMEOUT"
    for np in $PD_SIZES; do
        check_tap "np $np: CUDA buffers go to NCCL (double), the rest is staged" \
            env $cuda_env PDMPI_BACKEND=nccl $bounded "$PDMPIRUN" -np "$np" \
            "$cuda_check" routed
    done
    check_tap "np 3, --backend gloo: CUDA buffers are staged, NCCL untouched" \
        env $cuda_env $bounded "$PDMPIRUN" -np 3 --backend gloo "$cuda_check" staged
    check_tap "np 2, PDMPI_DEVICE_FALLBACK=error: a call NCCL cannot take fails" \
        env $cuda_env PDMPI_BACKEND=nccl PDMPI_DEVICE_FALLBACK=error \
        $bounded "$PDMPIRUN" -np 2 "$cuda_check" refused
    check_tap "np 2, pdmpirun --devices 1,0: one CUDA device per rank" \
        env $cuda_env $bounded "$PDMPIRUN" -np 2 --backend nccl --devices 1,0 \
        "$cuda_check" routed
    # (without the XPU doubles, which auto would take next)
    env -u PDMPI_BKCL_LIB -u PDMPI_XPURT_LIB $cuda_env PDMPI_DEBUG=info \
        $bounded "$PDMPIRUN" -np 2 "$cuda_check" routed \
        > "$PD_TMP/cuda_auto" 2>&1
    check "auto chooses NCCL when a CUDA device per rank is there" \
        grep -q "policy auto (auto chose nccl)" "$PD_TMP/cuda_auto"
    env -u PDMPI_BKCL_LIB -u PDMPI_XPURT_LIB $cuda_env CUDA_DOUBLE_DEVICES=1 \
        PDMPI_DEBUG=info $bounded "$PDMPIRUN" -np 2 \
        "$cuda_check" staged > "$PD_TMP/cuda_auto1" 2>&1
    check "auto with 1 CUDA device for 2 ranks falls back to gloo and says why" \
        sh -c "grep -q 'nccl not usable: 2 local ranks share 1 CUDA device' '$PD_TMP/cuda_auto1' &&
               grep -q 'CUDA memory -> staged through host memory to gloo' '$PD_TMP/cuda_auto1' &&
               grep -q '^1\.\.' '$PD_TMP/cuda_auto1'"
    refuses "--backend nccl with 1 CUDA device for 2 ranks" \
        "backend nccl requested but 2 local ranks share 1 CUDA device" \
        env $cuda_env CUDA_DOUBLE_DEVICES=1 $bounded "$PDMPIRUN" -np 2 --backend nccl \
        "$cuda_check"
    refuses "two ranks on one CUDA device (PDMPI_DEVICE=0 on both)" \
        "ranks 0 and 1 of MPI_COMM_WORLD are on the same host and both on CUDA device 0" \
        env $cuda_env PDMPI_DEVICE=0 $bounded "$PDMPIRUN" -np 2 --backend nccl \
        "$cuda_check"
    # Faults inside NCCL calls end like host faults: a rank of this host
    # that dies is named within about a second (the waits watch the
    # ranks' pids, then abort the NCCL communicator), a rank in another
    # call at PDMPI_TIMEOUT with every rank's last call, an asynchronous
    # NCCL error on the rank that sees it. The ranks run PaddlePaddle-
    # style, so no launcher ends the others first.
    # faulty NAME MAX PATTERN COMMAND...: with $fault_env exported too.
    fault_env=
    faulty() {
        name=$1 max=$2 pattern=$3
        shift 3
        start=$(date +%s)
        # paddle_run is a function of this shell: export in a subshell.
        (export $cuda_env $fault_env PDMPI_BACKEND=nccl
         PDMPI_TIMEOUT=${fault_timeout:-3}
         export PDMPI_TIMEOUT
         "$@") > "$PD_TMP/fault" 2>&1
        rc=$?
        took=$(($(date +%s) - start))
        grep '^pdmpi:' "$PD_TMP/fault" | head -4 | cut -c1-400 | sed 's/^/# /'
        check "$name: exit $rc in ${took}s (wanted non-zero within ${max}s)" \
            sh -c "[ $rc -ne 0 ] && [ $took -le $max ]"
        check "$name: the message names the call, communicator and cause" \
            grep -Eq "$pattern" "$PD_TMP/fault"
    }
    for np in 2 3 4; do
        fault_timeout=30    # well before it
        faulty "np $np, NCCL: rank 1 killed inside a run of allreduces" 6 \
            "rank [02-9]: MPI_Allreduce on MPI_COMM_WORLD: MPI_ERR_OTHER: allreduce via nccl on MPI_COMM_WORLD failed: the nccl operation cannot complete: a rank it waits for has ended; rank 1 \([^,]+, pid [0-9]+\) is gone" \
            paddle_run master 127.0.0.1 "$np" "$cuda_check" die 1
        fault_timeout=
        faulty "np $np, NCCL: rank 1 skips an allreduce for a barrier" 15 \
            "rank [02-9]: MPI_Allreduce on MPI_COMM_WORLD: .*via nccl .*did not complete within 3 s; last calls of the other ranks: .*rank 1: MPI_Barrier" \
            paddle_run master 127.0.0.1 "$np" "$cuda_check" skip 1
        # NCCL itself compares no counts: the ranks of one host note each
        # device call in shared memory and compare them as they wait.
        faulty "np $np, NCCL: rank 1 passes another count" 8 \
            "rank [0-9]: MPI_Allreduce on MPI_COMM_WORLD: MPI_ERR_OTHER: allreduce via nccl on MPI_COMM_WORLD failed: ranks are in different collectives: rank [0-9] is in allreduce of 4194304 bytes, rank 1 in allreduce of 4190304 bytes" \
            paddle_run master 127.0.0.1 "$np" "$cuda_check" count 1
        # Across hosts only PDMPI_CHECK's host round trip compares them.
        fault_env=PDMPI_CHECK=1
        faulty "np $np, NCCL, PDMPI_CHECK=1: rank 1 passes another count" 8 \
            "MPI_Allreduce on MPI_COMM_WORLD: MPI_ERR_OTHER: PDMPI_CHECK: the ranks of MPI_COMM_WORLD are in different calls: .*rank 1: MPI_Allreduce of 4190304 bytes" \
            paddle_run master 127.0.0.1 "$np" "$cuda_check" count 1
        fault_env=NCCL_DOUBLE_FAIL=1:5
        faulty "np $np, NCCL: an asynchronous NCCL error on rank 1" 8 \
            "rank 1: MPI_Allreduce on MPI_COMM_WORLD: MPI_ERR_OTHER: allreduce via nccl on MPI_COMM_WORLD failed: the NCCL operation failed: remote process exited" \
            paddle_run master 127.0.0.1 "$np" "$cuda_check" loop
        fault_env=
    done
    refuses "--backend nccl with no CUDA device visible" \
        "backend nccl requested but no CUDA device is visible (cudaGetDeviceCount: no CUDA-capable device is detected" \
        env $cuda_env CUDA_VISIBLE_DEVICES= $bounded "$PDMPIRUN" -np 1 \
        --backend nccl "$cuda_check"
    # The GPU check itself, its functional part against the doubles (it
    # builds its program in the tree it is given: an in-tree build).
    if [ "$top_srcdir" = "$top_builddir" ]; then
        if sh "$top_srcdir/tests/gpu/check.sh" --double > "$PD_TMP/gpu" 2>&1 &&
            grep -q ' 0 failed$' "$PD_TMP/gpu"; then
            ok "tests/gpu/check.sh --double: $(tail -1 "$PD_TMP/gpu")"
        else
            grep -v '^# np' "$PD_TMP/gpu" | tail -8
            not_ok "tests/gpu/check.sh --double"
        fi
    else
        echo "# SKIP tests/gpu/check.sh --double: it needs an in-tree build"
    fi
    # Every entry point the binding resolves ran in the runs above: the
    # doubles' call counters, summed over every process.
    missing=""
    for fn in $(sed -n 's/^ *{ "\(nccl[A-Za-z]*\|cuda[A-Za-z]*\)".*/\1/p;s/.*dlsym([^"]*"\(nccl[A-Za-z]*\)").*/\1/p' \
                    "$top_srcdir/src/backend/dccl/nccl.c"); do
        n=$(cat "$counts".* 2>/dev/null |
            awk -v f="$fn" '$1 == f { s += $2 } END { print s + 0 }')
        echo "# $fn: $n calls"
        [ "$n" -gt 0 ] || missing="$missing $fn"
    done
    check "every NCCL and CUDA entry point the binding resolves was called${missing:+ (never:$missing)}" \
        test -z "$missing"
    check "no NCCL double segment left in /dev/shm" \
        sh -c "! ls /dev/shm 2>/dev/null | grep -i nccl_double"
else
    echo "# SKIP the CUDA runtime and NCCL doubles: not built (no CUDA or NCCL headers at configure time)"
fi

# No device library is a link dependency of the library.
lib="$top_builddir/.libs/libpdmpi.so"
check "ldd libpdmpi.so lists no CUDA, NCCL, BKCL, XPU or PMIx library" \
    sh -c "! ldd '$lib' | grep -iE 'cuda|nccl|bkcl|xpu|pmix'"

# The double leaves nothing behind in /dev/shm.
check "no BKCL double segment left in /dev/shm" \
    sh -c "! ls /dev/shm 2>/dev/null | grep -i bkcl"

finish
