#!/bin/sh
# The rendezvous store on its own: set/get/add, timeouts, a wrong job key
# and a malformed frame refused while other clients keep working.
. "$top_srcdir/tests/lib.sh"

if timeout -k 5 120 "$top_builddir/tests/store_selftest"; then
    ok "store self-test"
else
    not_ok "store self-test"
fi
finish
