#!/bin/sh
# pdmpi_info: it runs anywhere (no launcher, no device), its variable list
# is the table of docs/configuration.md and the README's list, a value
# MPI_Init would refuse is flagged with MPI_Init's own words (and a
# non-zero status), and its --parsable and --json forms carry the same
# variables.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

info="$top_builddir/pdmpi_info"
"$info" > "$PD_TMP/human" 2>&1
check "pdmpi_info runs here (status 0) with its three sections" \
    sh -c "grep -q '^Built with' '$PD_TMP/human' &&
           grep -q '^On this machine now' '$PD_TMP/human' &&
           grep -q '^Variables' '$PD_TMP/human'"
check "it names the Open MPI interface and what auto would choose" \
    sh -c "grep -Eq '^  mpi_interface +Open MPI [0-9]+\\.[0-9]+\\.[0-9]+' '$PD_TMP/human' &&
           grep -Eq '^  auto_backend +(gloo|nccl|bkcl)' '$PD_TMP/human'"

# The documented table, first column, against pdmpi_info's list.
grep '^| `' "$top_srcdir/docs/configuration.md" | cut -d'|' -f2 |
    grep -o '`[A-Z0-9_]*`' | tr -d '`' | LC_ALL=C sort > "$PD_TMP/documented"
"$info" --parsable | sed -n 's/^var:\([A-Z0-9_]*\):default:.*/\1/p' | LC_ALL=C sort \
    > "$PD_TMP/listed"
check "its variables are the table of docs/configuration.md" \
    diff -u "$PD_TMP/documented" "$PD_TMP/listed"
sed -n '/^- \[Configuration\]/,/^- \[/p' "$top_srcdir/README.md" |
    grep -o '`[A-Z][A-Z0-9_]*`' | tr -d '`' | LC_ALL=C sort > "$PD_TMP/readme"
check "the README names each of them" \
    diff -u "$PD_TMP/listed" "$PD_TMP/readme"

# A bad value: pdmpi_info and MPI_Init say the same.
PDMPI_TIMEOUT=soon "$info" > "$PD_TMP/bad" 2>&1
rc=$?
PDMPI_TIMEOUT=soon run_np 1 "$top_builddir/tests/world_check" \
    > "$PD_TMP/init" 2>&1
why="PDMPI_TIMEOUT=soon is not a number of seconds in (0, 604800]"
check "a value MPI_Init refuses is flagged (status $rc), in its words" \
    sh -c "[ $rc -eq 1 ] && grep -qF 'INVALID: $why' '$PD_TMP/bad' &&
           grep -qF '$why' '$PD_TMP/init'"

PDMPI_SHM_P2P=copy "$info" --json > "$PD_TMP/json"
check "--json is one JSON object with every variable, values as set" \
    python3 -c "
import json, sys
d = json.load(open('$PD_TMP/json'))
names = sorted(v['name'] for v in d['variables'])
listed = open('$PD_TMP/listed').read().split()
p2p = [v for v in d['variables'] if v['name'] == 'PDMPI_SHM_P2P'][0]
sys.exit(0 if names == listed and p2p['value'] == 'copy' and p2p['valid']
         and 'build' in d and 'runtime' in d else 1)"
check "an unknown option is an error" sh -c "! '$info' --bogus 2> /dev/null"
finish
