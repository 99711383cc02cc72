#!/bin/sh
# The drop-in: programs linked against Open MPI's libmpi.so.40 run on
# pdmpi unchanged under `pdmpirun --dropin`, at every size -- a C program
# built by Open MPI's mpicc, Debian's mpi4py (tests/mpi4py_check.py: the
# calls a Python trainer makes), examples/trainer.py and Debian's HPC
# Challenge (hpcc); the library
# each of them reports is pdmpi's. `make install` puts libmpi.so.40 and
# libmpi.so, resolving to pdmpi, in $libdir/pdmpi and nowhere else.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

if [ -n "${PD_SANITIZE_FLAGS:-}" ]; then
    # An unchanged program carries no sanitizer runtime, which an
    # instrumented library needs loaded first.
    echo "# SKIP: the sanitizer build's library cannot stand in for an uninstrumented program's"
    exit 77
fi

dropin() {  # dropin N PROGRAM ARGS...
    np=$1
    shift
    timeout -k 10 "$PD_TEST_TIMEOUT" "$PDMPIRUN" --dropin -np "$np" "$@"
}

check "the build tree's dropin/libmpi.so.40 is pdmpi" \
    sh -c "readelf -d '$top_builddir/dropin/libmpi.so.40' | grep -q 'soname: \[libpdmpi.so.0\]'"

mpicc=${PD_OMPI_MPICC:-}
[ -n "$mpicc" ] || mpicc=$(command -v mpicc.openmpi || command -v mpicc || true)
if [ -n "$mpicc" ] &&
    "$mpicc" "$top_srcdir/tests/relink_prog.c" -o "$PD_TMP/ompi_prog" 2>"$PD_TMP/cc.err" &&
    readelf -d "$PD_TMP/ompi_prog" | grep -q 'NEEDED.*libmpi.so.40'; then
    for np in $PD_SIZES; do
        r=0
        : > "$PD_TMP/want"
        while [ "$r" -lt "$np" ]; do
            echo "rank $r of $np: sum $((np * (np + 1) / 2)).0 bcast 42 gathered $((np * (np - 1) / 2))" >> "$PD_TMP/want"
            r=$((r + 1))
        done
        if PDMPI_DEBUG=info dropin "$np" "$PD_TMP/ompi_prog" > "$PD_TMP/out" 2>"$PD_TMP/err" &&
            sort "$PD_TMP/out" | cmp -s - "$PD_TMP/want" &&
            grep -q "^pdmpi" "$PD_TMP/err"; then
            ok "a program linked against libmpi.so.40 runs on pdmpi at np $np"
        else
            head -20 "$PD_TMP/out" "$PD_TMP/err"
            not_ok "a program linked against libmpi.so.40 runs on pdmpi at np $np"
        fi
    done
else
    cat "$PD_TMP/cc.err" 2>/dev/null
    echo "# SKIP the C program: Open MPI's mpicc is not installed (apt-get install libopenmpi-dev)"
fi

# Debian's mpi4py is built against Open MPI, for Debian's python3.
python=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import mpi4py, numpy' 2>/dev/null; then
        python=$p
        break
    fi
done
if [ -n "$python" ]; then
    for np in $PD_SIZES; do
        check_tap "mpi4py at np $np" \
            dropin "$np" "$python" "$top_srcdir/tests/mpi4py_check.py"
    done
    for np in $PD_SIZES; do
        if dropin "$np" "$python" "$top_srcdir/examples/trainer.py" --steps 80 \
                > "$PD_TMP/trainer" 2>&1 &&
            grep -q "on pdmpi" "$PD_TMP/trainer" &&
            grep -q "final weights match single-process run" "$PD_TMP/trainer" &&
            grep -q "ranks hold bitwise-identical weights" "$PD_TMP/trainer"; then
            ok "examples/trainer.py at np $np: $(grep 'final weights' "$PD_TMP/trainer")"
        else
            tail -20 "$PD_TMP/trainer"
            not_ok "examples/trainer.py at np $np"
        fi
    done
else
    echo "# SKIP mpi4py and examples/trainer.py: no python3 with mpi4py and numpy (apt-get install python3-mpi4py python3-numpy)"
fi

# Debian's HPC Challenge (hpcc, linked against libmpi.so.40): HPL, PTRANS,
# RandomAccess, FFT, STREAM, DGEMM and the latency/bandwidth rings, each
# verified by hpcc itself, on a P x Q grid of every size.
hpcc_input=/usr/share/doc/hpcc/examples/_hpccinf.txt
if command -v hpcc > /dev/null && [ -f "$hpcc_input" ]; then
    for np in $PD_SIZES; do
        case $np in 4) p=2 q=2 ;; *) p=1 q=$np ;; esac
        mkdir -p "$PD_TMP/hpcc$np"
        # Lines 11 and 12 are the grid's Ps and Qs.
        sed -e "11s/^[0-9]*/$p/" -e "12s/^[0-9]*/$q/" "$hpcc_input" \
            > "$PD_TMP/hpcc$np/hpccinf.txt"
        if (cd "$PD_TMP/hpcc$np" && dropin "$np" hpcc > run.out 2>&1) &&
            grep -q '^Success=1$' "$PD_TMP/hpcc$np/hpccoutf.txt" &&
            grep -q "^CommWorldProcs=$np\$" "$PD_TMP/hpcc$np/hpccoutf.txt" &&
            ! grep -q 'FAILED' "$PD_TMP/hpcc$np/hpccoutf.txt"; then
            ok "hpcc at np $np ($p x $q): every section ran and passed its own checks"
        else
            tail -5 "$PD_TMP/hpcc$np/run.out"
            grep -E 'FAILED|^Success' "$PD_TMP/hpcc$np/hpccoutf.txt" 2>/dev/null | head -5
            not_ok "hpcc at np $np"
        fi
    done
else
    echo "# SKIP hpcc: Debian's HPC Challenge is not installed (apt-get install hpcc)"
fi

# pdmpirun --dropin without a drop-in folder says where it looked.
PDMPI_DROPIN_DIR="$PD_TMP/none" "$PDMPIRUN" --dropin -np 1 true > "$PD_TMP/nodir" 2>&1
check "--dropin with a PDMPI_DROPIN_DIR lacking libmpi.so.40 is refused with a message" \
    grep -q "PDMPI_DROPIN_DIR=$PD_TMP/none has no libmpi.so.40" "$PD_TMP/nodir"

# make install: the links in $libdir/pdmpi, resolving to the library.
if ${MAKE:-make} -C "$top_builddir" install-exec DESTDIR="$PD_TMP/root" > "$PD_TMP/install" 2>&1; then
    libdir=$(sed -n "s/^libdir='\(.*\)'$/\1/p" "$top_builddir/libpdmpi.la")
    dir="$PD_TMP/root$libdir/pdmpi"
    check "make install: $libdir/pdmpi/libmpi.so.40 and libmpi.so resolve to pdmpi" \
        sh -c "[ \"\$(readlink -f '$dir/libmpi.so.40')\" = \"\$(readlink -f '$PD_TMP/root$libdir/libpdmpi.so.0')\" ] &&
               [ \"\$(readlink -f '$dir/libmpi.so')\" = \"\$(readlink -f '$dir/libmpi.so.40')\" ] &&
               [ \$(ls '$dir' | wc -l) -eq 2 ]"
else
    tail -20 "$PD_TMP/install"
    not_ok "make install-exec DESTDIR=..."
fi
finish
