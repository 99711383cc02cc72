#!/bin/sh
# The Debian packages: dpkg-buildpackage -us -uc -b builds libpdmpi0,
# libpdmpi-dev and pdmpi-bin from a copy of this checkout (without the
# package build's own run of the main job: the trainer runs below, from
# the installed packages), lintian finds nothing at its default level,
# and, as root on a machine where they are not installed, the packages
# install; their pdmpicc and pdmpicxx build the example trainer and a C++
# program, which run under the installed pdmpirun at every size; an Open
# MPI binary runs on the installed drop-in; man finds the pages; and the
# packages purge cleanly. PD_PACKAGE_INSTALL=0 stops before installing.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

for tool in dpkg-buildpackage dh git; do
    command -v $tool > /dev/null 2>&1 ||
        { echo "1..0 # SKIP no $tool (scripts/install-deps.sh installs it)"; exit 77; }
done
# The packages are built from the checkout's files, as from a clone; the
# sanitizer build (a copy made by make distdir) has no checkout of its own.
top=$(git -C "$top_srcdir" rev-parse --show-toplevel 2> /dev/null || true)
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$top_srcdir" && pwd -P)" ]; then
    echo "1..0 # SKIP $top_srcdir is not a git checkout (the packages are built from one)"
    exit 77
fi

version=$(sed -n '1s/^pdmpi (\([^)]*\)).*/\1/p' "$top_srcdir/debian/changelog")
arch=$(dpkg --print-architecture)
src="$PD_TMP/pdmpi-$version"
mkdir "$src"
(cd "$top_srcdir" && git ls-files -co --exclude-standard) |
    (cd "$top_srcdir" && tar -cf - -T -) | tar -xf - -C "$src"

if (cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
        DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
        > "$PD_TMP/build.log" 2>&1; then
    ok "dpkg-buildpackage -us -uc -b"
else
    tail -40 "$PD_TMP/build.log"
    not_ok "dpkg-buildpackage -us -uc -b"
    finish
    exit
fi

deb() { echo "$PD_TMP/${1}_${version}_$arch.deb"; }
# holds PACKAGE PATTERN...: the package's file list has a line for each.
holds() {
    pkg=$1
    shift
    dpkg-deb -c "$(deb "$pkg")" > "$PD_TMP/contents" || return 1
    for pattern in "$@"; do
        grep -q " \./$pattern" "$PD_TMP/contents" || return 1
    done
}
check "libpdmpi0 holds the shared library" \
    holds libpdmpi0 'usr/lib/.*/libpdmpi.so.0 -> '
check "libpdmpi-dev holds the wrappers, pdmpi.h, pdmpi.pc and the link" \
    holds libpdmpi-dev 'usr/bin/pdmpicc$' 'usr/bin/pdmpicxx$' \
    'usr/include/pdmpi.h$' 'usr/lib/.*/pkgconfig/pdmpi.pc$' \
    'usr/lib/.*/libpdmpi.so -> '
check "pdmpi-bin holds pdmpirun, pdmpi_info, the drop-in and pdmpi(7)" \
    holds pdmpi-bin 'usr/bin/pdmpirun$' 'usr/bin/pdmpi_info$' \
    'usr/lib/.*/pdmpi/libmpi.so.40 -> ../libpdmpi.so.0' \
    'usr/share/man/man7/pdmpi.7.gz$'

if command -v lintian > /dev/null 2>&1; then
    lintian "$PD_TMP/pdmpi_${version}_$arch.changes" > "$PD_TMP/lintian" 2> /dev/null
    check "lintian reports no error or warning" \
        sh -c "! grep '^[EW]:' '$PD_TMP/lintian'"
else
    echo "# lintian not installed: not run"
fi

# Installing changes the machine for the test's duration: only as root,
# only where no pdmpi package is installed already, and purged on exit.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' libpdmpi0 libpdmpi-dev \
    pdmpi-bin 2> /dev/null | grep ' installed$' || true)
if [ "${PD_PACKAGE_INSTALL:-1}" = 0 ]; then
    echo "# PD_PACKAGE_INSTALL=0: the packages are not installed"
    finish
    exit
elif [ "$(id -u)" -ne 0 ]; then
    echo "# not root: the packages are not installed"
    finish
    exit
elif [ -n "$installed" ]; then
    echo "# pdmpi packages already installed here ($installed): not touched"
    finish
    exit
fi
purge() {
    dpkg --purge pdmpi-bin libpdmpi-dev libpdmpi0 > "$PD_TMP/purge" 2>&1
}
trap 'purge; rm -rf "$PD_TMP"' EXIT
if dpkg -i "$(deb libpdmpi0)" "$(deb libpdmpi-dev)" "$(deb pdmpi-bin)" \
    > "$PD_TMP/install" 2>&1; then
    ok "the three packages install"
else
    cat "$PD_TMP/install"
    not_ok "the three packages install"
    finish
    exit
fi

# From here on, only what the packages installed: no build tree.
unset LD_LIBRARY_PATH PDMPICC_LIBDIR PDMPICC_INCDIR PDMPI_CC PDMPI_CXX PDMPICC_CC
cd "$PD_TMP"
check "the installed pdmpicc builds the example trainer" \
    /usr/bin/pdmpicc "$top_srcdir/examples/trainer.c" -o trainer -lm
check "the trainer links the installed libpdmpi" \
    sh -c "ldd ./trainer | grep -q 'libpdmpi.so.0 => /lib/.*/libpdmpi.so.0\|libpdmpi.so.0 => /usr/lib/.*/libpdmpi.so.0'"
for np in $PD_SIZES; do
    out=$(timeout -k 10 "$PD_TEST_TIMEOUT" /usr/bin/pdmpirun -np "$np" \
        ./trainer --steps 50 2>&1)
    check "the trainer runs under the installed pdmpirun at np $np" \
        sh -c "echo \"\$1\" | grep -q '^final weights match single-process run' &&
               echo \"\$1\" | grep -q '^all $np ranks hold bitwise-identical weights'" \
        sh "$out"
done

check "the installed pdmpicxx builds a C++ program" \
    /usr/bin/pdmpicxx "$top_srcdir/tests/wrapper_project/sum.cc" -o sum_cxx
out=$(timeout -k 10 "$PD_TEST_TIMEOUT" /usr/bin/pdmpirun -np 2 ./sum_cxx 2>&1)
check "it runs as one job of 2 ranks" \
    [ "$(echo "$out" | grep -c ' of 2: ok$')" -eq 2 ]

if command -v mpicc.openmpi > /dev/null 2>&1; then
    mpicc.openmpi "$top_srcdir/tests/relink_prog.c" -o openmpi_prog
    out=$(timeout -k 10 "$PD_TEST_TIMEOUT" /usr/bin/pdmpirun --dropin -np 2 \
        ./openmpi_prog 2>&1)
    check "a program built by Open MPI's mpicc runs on the installed drop-in" \
        [ "$(echo "$out" | grep -c '^rank [01] of 2: sum 3.0 bcast 42 gathered 1$')" -eq 2 ]
fi

check "pdmpi_info names this version" \
    sh -c "/usr/bin/pdmpi_info --parsable | grep -q '^build:version:$version\$'"
if command -v man > /dev/null 2>&1; then
    check "man finds pdmpirun(1), pdmpicc(1), pdmpi_info(1) and pdmpi(7)" \
        sh -c "{ man -w pdmpirun && man -w pdmpicc && man -w pdmpicxx &&
                 man -w pdmpi_info && man -w 7 pdmpi; } > /dev/null"
fi

purge
check "the packages purge, leaving no pdmpirun" \
    sh -c "[ ! -e /usr/bin/pdmpirun ] && [ ! -e /usr/include/pdmpi.h ]"
finish
