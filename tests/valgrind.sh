#!/bin/sh
# The singleton and np 2 runs under valgrind's memcheck: no invalid read
# or write, no use of uninitialized memory, no definite leak (third-party
# noise is suppressed in tests/valgrind.supp, each entry saying why).
# Skipped in the sanitizer build (valgrind cannot run ASan binaries).
. "$top_srcdir/tests/lib.sh"

if [ -n "${PD_SANITIZE_FLAGS:-}" ]; then
    echo "1..0 # SKIP the sanitizer build checks memory itself"
    exit 77
fi
if ! command -v valgrind >/dev/null 2>&1; then
    not_ok "valgrind is not installed (scripts/install-deps.sh installs it)"
    finish
    exit 1
fi

vg="valgrind -q --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite --show-leak-kinds=definite
    --suppressions=$top_srcdir/tests/valgrind.supp"
world_check="$top_builddir/tests/world_check"
coll_check="$top_builddir/tests/coll_check"
shm_check="$top_builddir/tests/shm_check"

check_tap "singleton coll_check under valgrind" $vg "$coll_check"
check "singleton world_check under valgrind" $vg "$world_check"
for shm in 1 0; do
    check_tap "np 2 coll_check under valgrind, PDMPI_SHM=$shm" \
        env PDMPI_SHM=$shm PDMPI_TIMEOUT=300 timeout -k 10 900 "$PDMPIRUN" \
        -np 2 $vg "$coll_check"
done
check_tap "np 2 shm_check under valgrind" \
    env PDMPI_TIMEOUT=300 timeout -k 10 900 "$PDMPIRUN" -np 2 $vg "$shm_check"
finish
