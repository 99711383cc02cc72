#!/bin/sh
# Unit check of the datatype pack engine on its own: every byte range of
# a few layouts, packed and unpacked, against a reference stream.
. "$top_srcdir/tests/lib.sh"

check "pack engine: byte ranges of leaves, items and nested sequences" \
    "$top_builddir/tests/typemap_check"

finish
