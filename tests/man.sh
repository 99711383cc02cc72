#!/bin/sh
# The man pages: each renders without a warning from groff; pdmpirun(1)
# has every option of pdmpirun --help (it is made from it); pdmpi(7) has
# every variable pdmpi_info lists; installed (make install-man), man finds
# pdmpirun, pdmpi_info, pdmpicc and -- through its .so line -- pdmpicxx,
# and pdmpi in section 7.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

command -v groff > /dev/null 2>&1 || { echo "1..0 # SKIP no groff"; exit 77; }
for page in "$top_builddir/pdmpirun.1" "$top_builddir/pdmpi_info.1" \
    "$top_builddir/pdmpi.7" "$top_srcdir/man/pdmpicc.1"; do
    groff -man -Tutf8 -ww -z "$page" > "$PD_TMP/warn" 2>&1
    check "$(basename "$page") renders without a warning" \
        sh -c "[ ! -s '$PD_TMP/warn' ] || { cat '$PD_TMP/warn'; false; }"
done

render() { groff -man -Tutf8 -P-cbou "$1" 2> /dev/null; }
render "$top_builddir/pdmpirun.1" > "$PD_TMP/pdmpirun.txt"
missing=""
for opt in $("$PDMPIRUN" --help | sed -n 's/^  \(-[-a-z]*\).*/\1/p'); do
    grep -q -- "$opt" "$PD_TMP/pdmpirun.txt" || missing="$missing $opt"
done
check "pdmpirun(1) has every option of pdmpirun --help${missing:+ (missing:$missing)}" \
    test -z "$missing"

render "$top_builddir/pdmpi.7" > "$PD_TMP/pdmpi.txt"
missing=""
for var in $(env -i PATH="$PATH" "$top_builddir/pdmpi_info" --parsable |
             sed -n 's/^var:\([A-Z0-9_]*\):default:.*/\1/p'); do
    grep -q "^ *$var\$" "$PD_TMP/pdmpi.txt" || missing="$missing $var"
done
check "pdmpi(7) has every variable pdmpi_info lists${missing:+ (missing:$missing)}" \
    test -z "$missing"

if make -C "$top_builddir" install-man DESTDIR="$PD_TMP/root" \
    > "$PD_TMP/install" 2>&1; then
    ok "make install-man"
else
    cat "$PD_TMP/install"
    not_ok "make install-man"
fi
mandir=$(find "$PD_TMP/root" -type d -name man1 | head -n 1)
mandir=${mandir%/man1}
for name in pdmpirun pdmpi_info pdmpicc pdmpicxx "7 pdmpi"; do
    # shellcheck disable=SC2086
    check "man $name finds the installed page" \
        sh -c "MANPAGER=cat man -M '$mandir' $name 2> /dev/null | grep -q 'pdmpi manual'"
done
finish
