# Shared helpers for the test scripts (sourced, not run).
#
# Every multi-rank run goes through pdmpirun, which binds its store to a
# kernel-chosen port, and through timeout(1), so no test can hang.
set -u

: "${top_builddir:?run the tests through make check}"
: "${top_srcdir:?run the tests through make check}"
PDMPIRUN="$top_builddir/pdmpirun"
PD_TEST_TIMEOUT=${PD_TEST_TIMEOUT:-180}
PD_SIZES=${PD_SIZES:-"1 2 3 4"}

pd_pass=0
pd_fail=0
pd_num=0

ok() {
    pd_num=$((pd_num + 1))
    pd_pass=$((pd_pass + 1))
    echo "ok $pd_num - $*"
}

not_ok() {
    pd_num=$((pd_num + 1))
    pd_fail=$((pd_fail + 1))
    echo "not ok $pd_num - $*"
}

# check DESCRIPTION COMMAND...: ok if COMMAND succeeds.
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# check_tap DESCRIPTION COMMAND...: ok if a TAP-printing test program
# succeeds (counting its checks); its failing lines are shown otherwise.
check_tap() {
    desc=$1
    shift
    if pd_out=$("$@" 2>&1); then
        ok "$desc ($(echo "$pd_out" | grep -c '^ok') checks)"
    else
        echo "$pd_out" | grep -v '^ok' | head -40
        not_ok "$desc"
    fi
}

# run_np N PROGRAM ARGS...: PROGRAM on N ranks under pdmpirun, bounded.
run_np() {
    np=$1
    shift
    timeout -k 10 "$PD_TEST_TIMEOUT" "$PDMPIRUN" -np "$np" "$@"
}

# A scratch directory removed on exit.
pd_tmpdir() {
    PD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pdmpi-test.XXXXXX")
    trap 'rm -rf "$PD_TMP"' EXIT
}

# The plain summary line, and the exit status automake's driver reads.
finish() {
    echo "$pd_pass passed, $pd_fail failed"
    [ "$pd_fail" -eq 0 ]
}
