#!/bin/sh
# The part of Open MPI's API pdmpi does not implement: every function
# mpi.h declares is in the library anyway (a strong PMPI_ with a weak MPI_
# alias), so programs linked against Open MPI load even with -z now; the
# unimplemented ones fail with MPI_ERR_UNSUPPORTED_OPERATION, returned
# under MPI_ERRORS_RETURN, one line naming the function and the end of the
# job under MPI_ERRORS_ARE_FATAL.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

lib="$top_builddir/.libs/libpdmpi.so"
[ -f "$lib" ] || { echo "no $lib"; exit 99; }
mpi_h=""
for flag in $PD_OMPI_CPPFLAGS; do
    dir=${flag#-I}
    [ -z "$mpi_h" ] && [ -f "$dir/mpi.h" ] && mpi_h="$dir/mpi.h"
done
[ -n "$mpi_h" ] || { echo "Open MPI's mpi.h not found in '$PD_OMPI_CPPFLAGS'"; exit 99; }

# Every PMPI_ function mpi.h declares, whatever #if it sits under (the
# removed MPI-1 ones too: Open MPI's libmpi exports them). A prototype
# may span lines, but its name is on its first, after OMPI_DECLSPEC. This
# reading is independent of scripts/gen-unsupported.sh, which it checks.
sed -n 's/^[[:blank:]]*OMPI_DECLSPEC[^(]*[[:blank:]*]\(PMPI_[A-Za-z0-9_]*\)[[:blank:]]*(.*/\1/p' \
    "$mpi_h" | sort -u > "$PD_TMP/declared"
declared=$(wc -l < "$PD_TMP/declared")

nm -D --defined-only "$lib" > "$PD_TMP/syms"
awk '$2 == "T" && $3 ~ /^PMPI_/ { print $3 }' "$PD_TMP/syms" | sort > "$PD_TMP/strong"
awk '$2 == "W" && $3 ~ /^MPI_/ { print "P" $3 }' "$PD_TMP/syms" | sort > "$PD_TMP/weak"
comm -23 "$PD_TMP/declared" "$PD_TMP/strong" > "$PD_TMP/no_strong"
comm -23 "$PD_TMP/declared" "$PD_TMP/weak" > "$PD_TMP/no_weak"
exported=$(comm -12 "$PD_TMP/strong" "$PD_TMP/weak" | comm -12 - "$PD_TMP/declared" | wc -l)
if [ "$declared" -ge 300 ] && [ "$exported" -eq "$declared" ]; then
    ok "$exported of $declared mpi.h functions exported (T PMPI_, W MPI_)"
else
    sed 's/^/# not T: /' "$PD_TMP/no_strong" | head -20
    sed 's/^P/# no weak alias: /' "$PD_TMP/no_weak" | head -20
    not_ok "$exported of $declared mpi.h functions exported (T PMPI_, W MPI_)"
fi
check "the removed MPI-1 functions are exported too (PMPI_Address, MPI_Type_struct)" \
    sh -c "grep -q ' T PMPI_Address\$' '$PD_TMP/syms' && grep -q ' W MPI_Type_struct\$' '$PD_TMP/syms'"

# A program calling every one of them, linked with -z now: the loader
# resolves all of its calls before main, so it only starts if every name
# is there. (The calls sit behind a test that is false at run time.)
{
    sed 's/^\(.*\)$/void \1(void);/' "$PD_TMP/declared"
    sed 's/^P\(.*\)$/void \1(void);/' "$PD_TMP/declared"
    echo 'int main(int argc, char **argv)'
    echo '{'
    echo '    (void)argv;'
    echo '    if (argc > 1000) {'
    sed 's/^\(.*\)$/        \1();/' "$PD_TMP/declared"
    sed 's/^P\(.*\)$/        \1();/' "$PD_TMP/declared"
    echo '    }'
    echo '    return 0;'
    echo '}'
} > "$PD_TMP/every_function.c"
# (A sanitizer build's library needs the sanitizer runtime in the program.)
if $CC ${PD_SANITIZE_FLAGS:-} -Wl,-z,now "$PD_TMP/every_function.c" \
        -o "$PD_TMP/every_function" -L"$top_builddir/.libs" \
        -Wl,-rpath,"$top_builddir/.libs" -lpdmpi > "$PD_TMP/link" 2>&1; then
    check "a program calling all $((declared * 2)) MPI_/PMPI_ functions, linked -z now, loads" \
        timeout 30 "$PD_TMP/every_function"
else
    head -20 "$PD_TMP/link"
    not_ok "a program calling all $((declared * 2)) MPI_/PMPI_ functions links with -z now"
fi

prog="$top_builddir/tests/unsupported_check"
check "unsupported_check is linked with -z now" \
    sh -c "readelf -d '$prog' | grep -Eq 'BIND_NOW|FLAGS_1.*NOW'"

# Under MPI_ERRORS_RETURN each call returns the class.
for np in 1 2; do
    check_tap "unsupported calls return MPI_ERR_UNSUPPORTED_OPERATION at np $np" \
        run_np "$np" "$prog" return
done

# Under the default handler: one line naming the function, then the end
# of the job. MPI_Win_create's first argument is no communicator, so
# MPI_COMM_WORLD's handler applies; MPI_Comm_spawn is called on
# MPI_COMM_SELF, whose name the line must carry.
for case in "MPI_Win_create MPI_COMM_WORLD" "MPI_Comm_spawn MPI_COMM_SELF"; do
    set -- $case
    run_np 1 "$prog" fatal "$1" > "$PD_TMP/fatal" 2>&1
    rc=$?
    check "$1 under MPI_ERRORS_ARE_FATAL: non-zero exit (status $rc), not a signal" \
        sh -c "[ $rc -ne 0 ] && [ $rc -lt 128 ]"
    if grep -qx "pdmpi: rank 0: $1 on $2: MPI_ERR_UNSUPPORTED_OPERATION: $1 is not supported by pdmpi" \
            "$PD_TMP/fatal"; then
        ok "$1 under MPI_ERRORS_ARE_FATAL: one line naming the function and $2"
    else
        head -10 "$PD_TMP/fatal"
        not_ok "$1 under MPI_ERRORS_ARE_FATAL: one line naming the function and $2"
    fi
done
finish
