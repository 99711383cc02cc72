#!/bin/sh
# The GPU check: on a machine with one or more CUDA GPUs, build pdmpi (if
# this tree is not built yet), tests/gpu/cuda_check.c and the suite
# tests/cuda_check.c, then run
#   - device-buffer Allreduce (float, fp16, bf16), Bcast, Allgather,
#     Reduce_scatter_block, host buffers and MAXLOC (staged) in the same
#     job, at np 1 and at np = number of GPUs when more than one;
#   - the suite (every NCCL type and op, the moves, every nonblocking
#     collective, point-to-point, derived datatypes, communicators, all
#     on CUDA memory), routed to NCCL at the same sizes and staged
#     through the host to gloo at np 1;
#   - NCCL refusing two ranks on one GPU, named by pdmpi first;
#   - a short device vs host allreduce latency/bandwidth table.
# Prints "N passed, N failed"; bounded to a few minutes by timeouts.
#
#   tests/gpu/check.sh            (from the top of the source tree)
#   tests/gpu/check.sh --double   the same checks, without a GPU, against
#                                 the CUDA runtime and NCCL test doubles
#                                 of a built tree (tests/nccl_double; two
#                                 pretend GPUs); the timing table is left
#                                 out. make check runs it this way, so the
#                                 script itself is tested.
#   CUDA_HOME=/usr/local/cuda     (default)
#   PD_GPU_CHECK_BIN=DIR          run the two programs built on another
#                                 machine of the same kind (DIR/cuda_check
#                                 from tests/gpu/cuda_check.c,
#                                 DIR/cuda_suite from tests/cuda_check.c)
#                                 instead of compiling them here: a GPU
#                                 machine without Open MPI's mpi.h
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
double=false
[ "${1:-}" = --double ] && double=true
out=${TMPDIR:-/tmp}/pdmpi-gpu.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

if $double; then
    # The runtime and library pdmpi loads, and the runtime the program
    # links, are the doubles; they pretend to have CUDA_DOUBLE_DEVICES.
    doubles="$top/tests/nccl_double/.libs"
    if [ ! -f "$doubles/libnccl.so" ] || [ ! -f "$doubles/libcudart.so" ]; then
        not_ok "--double: the doubles are not built (make check builds them)"
        finish
    fi
    CUDA_DOUBLE_DEVICES=2
    PDMPI_NCCL_LIB="$doubles/libnccl.so"
    PDMPI_CUDART_LIB="$doubles/libcudart.so"
    export CUDA_DOUBLE_DEVICES PDMPI_NCCL_LIB PDMPI_CUDART_LIB
    unset CUDA_VISIBLE_DEVICES
    cuda_libdir=$doubles
    ngpu=2
    echo "# --double: 2 pretend GPUs from tests/nccl_double"
else
    cuda_libdir="$CUDA_HOME/lib64"
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    if [ "$ngpu" -lt 1 ]; then
        not_ok "no GPU visible (nvidia-smi -L lists none)"
        finish
    fi
    echo "# $ngpu GPU(s): $(nvidia-smi -L | head -4 | tr '\n' ';')"
fi

if [ ! -x ./pdmpirun ] || [ ! -f .libs/libpdmpi.so ]; then
    echo "# building pdmpi"
    { [ -x ./configure ] || ./autogen.sh; } > "$out/build" 2>&1 &&
        ./configure --with-cuda="$CUDA_HOME" --with-nccl="$CUDA_HOME" \
            >> "$out/build" 2>&1 &&
        make -j"$(nproc)" >> "$out/build" 2>&1
    if [ $? -ne 0 ]; then
        tail -20 "$out/build"
        not_ok "pdmpi builds (configure or make failed; see above)"
        finish
    fi
fi
grep -q "define PD_HAVE_NCCL_BINDING 1" config.h &&
    ok "pdmpi was built with the NCCL binding" ||
    { not_ok "pdmpi was built without the NCCL binding (no nccl.h/cuda_runtime_api.h at configure time)"; finish; }

if [ -n "${PD_GPU_CHECK_BIN:-}" ]; then
    cp "$PD_GPU_CHECK_BIN/cuda_check" "$PD_GPU_CHECK_BIN/cuda_suite" "$out/" &&
        ok "the programs built elsewhere: $PD_GPU_CHECK_BIN" ||
        { not_ok "PD_GPU_CHECK_BIN=$PD_GPU_CHECK_BIN lacks cuda_check or cuda_suite"; finish; }
else
    ompi_inc=$(sed -n 's/^PD_OMPI_CPPFLAGS = //p' Makefile)
    # CC and PD_SANITIZE_FLAGS: as the tree was built (make check sets them).
    build() {
        ${CC:-cc} -std=gnu11 -O2 ${PD_SANITIZE_FLAGS:-} $ompi_inc -Iinclude \
            -Itests -I"$CUDA_HOME/include" "$@" -L.libs -lpdmpi \
            -Wl,-rpath,"$top/.libs" -L"$cuda_libdir" -lcudart \
            -Wl,-rpath,"$cuda_libdir" -ldl -lm -lpthread 2> "$out/cc"
    }
    if build tests/gpu/cuda_check.c -o "$out/cuda_check" &&
        build tests/cuda_check.c tests/tap_harness.c -o "$out/cuda_suite"; then
        ok "tests/gpu/cuda_check.c and tests/cuda_check.c build against pdmpi and the CUDA runtime"
    else
        cat "$out/cc"
        not_ok "tests/gpu/cuda_check.c and tests/cuda_check.c build"
        finish
    fi
fi
export LD_LIBRARY_PATH="$cuda_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# run_check NP: the correctness program on NP ranks, one GPU each.
run_check() {
    np=$1
    devices=$(seq -s, 0 $((np - 1)))
    timeout -k 5 120 ./pdmpirun -np "$np" --backend nccl --devices "$devices" \
        "$out/cuda_check" > "$out/run$np" 2>&1
    rc=$?
    grep -E '^(ok|not ok) ' "$out/run$np" | sed "s/^/# np $np: /"
    if [ "$rc" -eq 0 ] && grep -q ' 0 failed$' "$out/run$np"; then
        ok "np $np: $(tail -1 "$out/run$np")"
    else
        tail -5 "$out/run$np"
        not_ok "np $np: cuda_check (exit $rc)"
    fi
}

PDMPI_DEBUG=info timeout -k 5 60 ./pdmpirun -np 1 --backend nccl \
    "$out/cuda_check" > "$out/info" 2>&1
grep "backends:" "$out/info" | sed 's/^/# /'
grep -q "CUDA memory -> nccl" "$out/info" &&
    ok "--backend nccl: CUDA memory goes to NCCL" ||
    not_ok "--backend nccl: CUDA memory goes to NCCL"
PDMPI_DEBUG=info timeout -k 5 60 ./pdmpirun -np 1 "$out/cuda_check" \
    > "$out/auto" 2>&1
grep -q "auto chose nccl" "$out/auto" && ok "auto chooses NCCL with a GPU" ||
    not_ok "auto chooses NCCL with a GPU"

run_check 1
[ "$ngpu" -gt 1 ] && run_check "$ngpu"

# run_suite NP MODE OPTIONS...: tests/cuda_check.c on NP ranks.
run_suite() {
    np=$1 mode=$2
    shift 2
    timeout -k 5 180 ./pdmpirun -np "$np" "$@" "$out/cuda_suite" "$mode" \
        > "$out/suite$np$mode" 2>&1
    rc=$?
    grep -E '^not ok ' "$out/suite$np$mode" | sed "s/^/# np $np $mode: /"
    passed_here=$(grep -c '^ok ' "$out/suite$np$mode")
    if [ "$rc" -eq 0 ]; then
        ok "np $np: the suite $mode, $passed_here checks"
    else
        tail -3 "$out/suite$np$mode"
        not_ok "np $np: the suite $mode (exit $rc)"
    fi
}
run_suite 1 routed --backend nccl
[ "$ngpu" -gt 1 ] && run_suite "$ngpu" routed --backend nccl \
    --devices "$(seq -s, 0 $((ngpu - 1)))"
run_suite 1 staged --backend gloo

# Two ranks on one GPU: pdmpi says so before NCCL does.
timeout -k 5 60 ./pdmpirun -np 2 --backend nccl "$out/cuda_check" \
    > "$out/dup" 2>&1
if [ "$ngpu" -eq 1 ] && grep -q "2 local ranks share 1 CUDA device" "$out/dup"; then
    ok "2 ranks on 1 GPU: refused at MPI_Init with pdmpi's message"
elif [ "$ngpu" -gt 1 ]; then
    PDMPI_DEVICE=0 timeout -k 5 60 ./pdmpirun -np 2 --backend nccl \
        "$out/cuda_check" > "$out/dup" 2>&1
    if grep -q "both on CUDA device 0" "$out/dup"; then
        ok "2 ranks on GPU 0: refused with pdmpi's message"
    else
        tail -3 "$out/dup"
        not_ok "2 ranks on GPU 0: refused with pdmpi's message"
    fi
else
    tail -3 "$out/dup"
    not_ok "2 ranks on 1 GPU: refused with pdmpi's message"
fi

# Timings of the doubles mean nothing.
$double && finish
np=1
[ "$ngpu" -gt 1 ] && np=$ngpu
if timeout -k 5 150 ./pdmpirun -np "$np" --backend nccl \
    --devices "$(seq -s, 0 $((np - 1)))" "$out/cuda_check" bench \
    > "$out/bench" 2>&1; then
    cat "$out/bench"
    ok "device vs host allreduce table at np $np"
else
    tail -5 "$out/bench"
    not_ok "device vs host allreduce table at np $np"
fi
finish
