#!/bin/sh
# The documentation's examples: every code block of README.md and
# docs/*.md runs (tests/docs_check.py; docs/testing.md says how each kind
# of block is taken), with this build's pdmpirun, pdmpi_info and
# compiler wrappers first on PATH and the wrappers pointed at a folder
# laid out as make install lays out $libdir, so each block runs as it
# would after make install.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

# The examples use Debian's mpi4py through the drop-in, which a
# sanitized library cannot stand in for (tests/dropin.sh skips it too);
# what they show does not change with the build.
if [ -n "${PD_SANITIZE_FLAGS:-}" ]; then
    echo "1..0 # SKIP the documentation's examples run in the normal build"
    exit 77
fi
command -v python3 > /dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 77; }

mkdir "$PD_TMP/bin" "$PD_TMP/lib" "$PD_TMP/scratch"
for prog in pdmpirun pdmpi_info pdmpicc pdmpicxx pdmpic++; do
    ln -s "$top_builddir/$prog" "$PD_TMP/bin/$prog"
done
# Debian's python3 holds Debian's mpi4py, built against Open MPI.
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import mpi4py, numpy' 2> /dev/null; then
    ln -s /usr/bin/python3 "$PD_TMP/bin/python3"
fi
for lib in "$top_builddir"/.libs/libpdmpi.so*; do
    ln -s "$lib" "$PD_TMP/lib/"
done
ln -s "$top_builddir/dropin" "$PD_TMP/lib/pdmpi"

PATH="$PD_TMP/bin:$PATH"
PDMPICC_LIBDIR="$PD_TMP/lib"
PDMPICC_INCDIR="$top_builddir/include"
# Open MPI's mpirun as root and with more ranks than processors, as the
# other tests run it.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_rmaps_base_oversubscribe=1
export PATH PDMPICC_LIBDIR PDMPICC_INCDIR OMPI_ALLOW_RUN_AS_ROOT \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_rmaps_base_oversubscribe
unset PDMPI_CC PDMPI_CXX PDMPICC_CC
export top_builddir

python3 "$top_srcdir/tests/docs_check.py" "$top_srcdir" "$PD_TMP/scratch" \
    "$top_srcdir/README.md" "$top_srcdir"/docs/*.md
