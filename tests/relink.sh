#!/bin/sh
# Binary compatibility with Open MPI's toolchain: an object compiled by
# Open MPI's own mpicc is linked with -lpdmpi and runs; and pdmpicc
# builds the same program from source. Both at every size.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

mpicc=${PD_OMPI_MPICC:-}
[ -n "$mpicc" ] || mpicc=$(command -v mpicc.openmpi || command -v mpicc || true)
if [ -z "$mpicc" ]; then
    echo "Open MPI's mpicc is not installed; this test needs it (apt-get install libopenmpi-dev)"
    exit 99
fi

expected() {  # the lines a run of N ranks must print, sorted
    n=$1
    r=0
    while [ "$r" -lt "$n" ]; do
        echo "rank $r of $n: sum $((n * (n + 1) / 2)).0 bcast 42 gathered $((n * (n - 1) / 2))"
        r=$((r + 1))
    done
}

verify_runs() {  # verify_runs LABEL PROGRAM
    for np in $PD_SIZES; do
        expected "$np" > "$PD_TMP/want"
        if run_np "$np" "$2" > "$PD_TMP/got" 2>&1 &&
            sort "$PD_TMP/got" | cmp -s - "$PD_TMP/want"; then
            ok "$1 at np $np"
        else
            head -20 "$PD_TMP/got"
            not_ok "$1 at np $np"
        fi
    done
}

if "$mpicc" -c "$top_srcdir/tests/relink_prog.c" -o "$PD_TMP/prog.o" &&
    $CC ${PD_SANITIZE_FLAGS:-} "$PD_TMP/prog.o" -o "$PD_TMP/relinked" -L"$top_builddir/.libs" \
        -Wl,-rpath,"$top_builddir/.libs" -lpdmpi; then
    ok "object from $(basename "$mpicc") -c links with -lpdmpi"
    check "relinked binary needs libpdmpi.so.0, not libmpi" \
        sh -c "readelf -d '$PD_TMP/relinked' | grep -q 'libpdmpi.so.0' && ! readelf -d '$PD_TMP/relinked' | grep -q 'libmpi.so'"
    verify_runs "mpicc -c + -lpdmpi" "$PD_TMP/relinked"
else
    not_ok "object from $mpicc -c links with -lpdmpi"
fi

# (A sanitizer build's library needs the sanitizer runtime in the program.)
if PDMPICC_CC="$CC ${PD_SANITIZE_FLAGS:-}" \
    PDMPICC_LIBDIR="$top_builddir/.libs" PDMPICC_INCDIR="$top_builddir/include" \
    "$top_builddir/pdmpicc" "$top_srcdir/tests/relink_prog.c" -o "$PD_TMP/viawrapper"; then
    ok "pdmpicc compiles and links from source"
    verify_runs "pdmpicc-built program" "$PD_TMP/viawrapper"
else
    not_ok "pdmpicc compiles and links from source"
fi
finish
