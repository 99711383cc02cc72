#!/bin/sh
# The compiler wrappers as a build system meets them: a small autotools
# project with a C and a C++ program (tests/wrapper_project, which names
# no MPI library) configured with CC=pdmpicc CXX=pdmpicxx builds, every
# program it makes links libpdmpi and no libmpi, and each runs at np 1-4
# under pdmpirun as one job. pdmpic++ is the same wrapper; -showme and its
# -showme:WHAT forms print what Open MPI's do; PDMPI_CC / PDMPI_CXX pick
# the compiler; --version names pdmpi and the compiler.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

# A build tree's library and headers; a sanitizer build's library needs
# the sanitizer runtime in the programs too.
PDMPICC_LIBDIR="$top_builddir/.libs"
PDMPICC_INCDIR="$top_builddir/include"
export PDMPICC_LIBDIR PDMPICC_INCDIR
cxx=$(sed -n 's/^CXX = //p' "$top_builddir/Makefile")
PDMPI_CC="$CC ${PD_SANITIZE_FLAGS:-}"
PDMPI_CXX="$cxx ${PD_SANITIZE_FLAGS:-}"
export PDMPI_CC PDMPI_CXX

cp -R "$top_srcdir/tests/wrapper_project" "$PD_TMP/project"
chmod -R u+w "$PD_TMP/project"
cd "$PD_TMP/project"
if autoreconf -i > build.log 2>&1 &&
    ./configure CC="$top_builddir/pdmpicc" CXX="$top_builddir/pdmpicxx" \
        >> build.log 2>&1 &&
    make >> build.log 2>&1; then
    ok "an autotools project builds with CC=pdmpicc CXX=pdmpicxx"
else
    tail -30 build.log
    not_ok "an autotools project builds with CC=pdmpicc CXX=pdmpicxx"
fi

for prog in ring_c sum_cxx; do
    check "$prog links libpdmpi.so.0 and no libmpi" \
        sh -c "ldd ./$prog | grep -q 'libpdmpi.so.0 => $top_builddir/.libs/' &&
               ! ldd ./$prog | grep -q 'libmpi'"
    for np in $PD_SIZES; do
        out=$(run_np "$np" "./$prog" 2>&1)
        check "$prog runs as one job of $np rank(s)" \
            [ "$(echo "$out" | grep -c " of $np: ok$")" -eq "$np" ]
    done
done

wrap="$top_builddir/pdmpicxx"
check "pdmpic++ is pdmpicxx under its other name" \
    sh -c "[ \"\$('$top_builddir/pdmpic++' -showme x.cc)\" = \"\$('$wrap' -showme x.cc)\" ]"
check "-showme prints the compile-and-link command" \
    sh -c "'$wrap' -showme x.cc -o x | grep -q -- '-DOMPI_SKIP_MPICXX=1 x.cc -o x -L$PDMPICC_LIBDIR .*-lpdmpi\$'"
check "-showme:compile has the include directories, no link flags" \
    sh -c "'$wrap' -showme:compile | grep -q -- '-I$PDMPICC_INCDIR' &&
           ! '$wrap' -showme:compile | grep -q -- '-lpdmpi'"
check "-showme:link has the library, no include directories" \
    sh -c "[ \"\$('$top_builddir/pdmpicc' -showme:link)\" = \"-L$PDMPICC_LIBDIR -Wl,-rpath,$PDMPICC_LIBDIR -lpdmpi\" ]"
check "-showme:libdirs, -showme:libs, -showme:incdirs" \
    sh -c "[ \"\$('$wrap' -showme:libdirs)\" = '$PDMPICC_LIBDIR' ] &&
           [ \"\$('$wrap' -showme:libs)\" = pdmpi ] &&
           '$wrap' -showme:incdirs | grep -q '$PDMPICC_INCDIR'"
check "-showme:version names pdmpi and the Open MPI interface" \
    sh -c "'$wrap' -showme:version | grep -Eq '^pdmpicxx: pdmpi [0-9.]+ \\(Open MPI [0-9]+\\.[0-9]+\\.[0-9]+ interface\\)\$'"
check "-showme:nonsense is an error naming the forms" \
    sh -c "! '$wrap' -showme:nonsense 2> err && grep -q 'unknown option nonsense of -showme' err"
check "PDMPI_CC and PDMPI_CXX pick the compiler (-showme:command)" \
    sh -c "[ \"\$(PDMPI_CC=my-cc '$top_builddir/pdmpicc' -showme:command)\" = my-cc ] &&
           [ \"\$(PDMPI_CXX=my-cxx '$wrap' -showme:command)\" = my-cxx ]"
check "--version names pdmpi, then the compiler's own" \
    sh -c "'$wrap' --version > v && head -1 v | grep -q '^pdmpicxx (pdmpi) ' &&
           [ \$(wc -l < v) -gt 1 ]"
check "no input files is an error" sh -c "! '$wrap' 2> err && grep -q 'no input files' err"
finish
