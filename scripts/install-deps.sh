#!/bin/sh
# Install what building and testing pdmpi needs on Debian 12 (bookworm):
# the toolchain, autotools, gloo, Open MPI (whose mpi.h is pdmpi's ABI,
# and whose mpicc/mpirun the compatibility tests and side-by-side
# benchmarks use), PMIx headers (the PMIx client; libpmix itself is
# loaded at run time), MPICH (mpiexec for the PMI-1 tests) and iproute2
# (network namespaces for the multi-host tests), gnuplot (the plots of
# bench/compare), clang with its sanitizer and libFuzzer runtimes
# (tests/fuzz.sh; libclang-rt-dev is only recommended by clang, and
# recommends are not installed here), Debian's mpi4py and numpy (the
# drop-in tests and examples/trainer.py) and the HPC Challenge suite
# (hpcc, built against Open MPI: a drop-in test), and groff and man-db
# (the man pages are checked by rendering them), debhelper and lintian
# (the Debian packages are built and checked). Runs apt-get as root, or
# through sudo.
set -e

packages="build-essential autoconf automake libtool pkg-config \
libgloo-dev libopenmpi-dev openmpi-bin libpmix-dev mpich iproute2 procps \
gnuplot-nox valgrind clang libclang-rt-dev python3-mpi4py python3-numpy \
hpcc groff-base man-db debhelper lintian"

missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "install-deps: need root (or sudo) to install:$missing" >&2
    exit 1
fi
$as_root apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends $missing
