#!/bin/sh
# Regenerate the build system from configure.ac, Makefile.am and m4/.
set -e
cd "$(dirname "$0")"
autoreconf --force --install --verbose
