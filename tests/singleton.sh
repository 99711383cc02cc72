#!/bin/sh
# A program started with no launcher at all is a world of one and needs
# no network: the same conformance checks pass.
. "$top_srcdir/tests/lib.sh"

unset PDMPI_RANK PDMPI_SIZE PDMPI_STORE PDMPI_JOBKEY PDMPI_LOCAL_RANK \
    PDMPI_LOCAL_SIZE PDMPI_LAUNCHER
check_tap "coll_check as a singleton" \
    timeout -k 10 "$PD_TEST_TIMEOUT" "$top_builddir/tests/coll_check"
if out=$(PDMPI_DEBUG=info timeout 60 "$top_builddir/examples/trainer" 2>&1) &&
    echo "$out" | grep -q "world of 1 formed by singleton"; then
    ok "PDMPI_DEBUG=info reports a singleton world"
else
    echo "$out" | tail -5
    not_ok "PDMPI_DEBUG=info reports a singleton world"
fi
finish
