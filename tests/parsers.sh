#!/bin/sh
# Unit checks of the launcher parsers that take text from outside: PMI-1
# replies and Slurm's compressed host and task lists.
. "$top_srcdir/tests/lib.sh"

check "PMI-1 reply parser (Hydra and Slurm formats, garbage)" \
    "$top_builddir/tests/pmi1_parse_check"
check "Slurm host list and tasks-per-node parsers" \
    "$top_builddir/tests/slurm_parse_check"

finish
