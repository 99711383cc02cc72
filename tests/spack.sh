#!/bin/sh
# The Spack package (contrib/spack): it compiles as Python, every
# configure option it passes is one configure has, and, where Spack is
# installed, it builds this checkout (spack dev-build, with a private
# Spack configuration) and the installed pdmpirun runs the trainer.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

repo="$top_srcdir/contrib/spack/spack_repo/pdmpi"
pkg="$repo/packages/pdmpi/package.py"
command -v python3 > /dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 77; }
check "package.py compiles" \
    python3 -c "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')" "$pkg"

"$top_srcdir/configure" --help > "$PD_TMP/help"
missing=""
for opt in $(grep -o '"--with[a-z-]*' "$pkg" | tr -d '"' | sort -u); do
    case $opt in
    --without-*) want="--with-${opt#--without-}" ;;
    *) want=$opt ;;
    esac
    grep -q -- "^ *$want\([ =[]\|$\)" "$PD_TMP/help" || missing="$missing $opt"
done
check "configure has every option package.py passes${missing:+ (missing:$missing)}" \
    test -z "$missing"

if ! command -v spack > /dev/null 2>&1; then
    echo "# no spack here: the package is not built"
    finish
    exit
fi
version=$(sed -n '1s/^pdmpi (\([^)]*\)).*/\1/p' "$top_srcdir/debian/changelog")
SPACK_USER_CONFIG_PATH="$PD_TMP/spack-config"
export SPACK_USER_CONFIG_PATH
mkdir "$PD_TMP/src"
(cd "$top_srcdir" && git ls-files -co --exclude-standard) |
    (cd "$top_srcdir" && tar -cf - -T -) | tar -xf - -C "$PD_TMP/src"
if spack repo add "$repo" > "$PD_TMP/spack.log" 2>&1 &&
    (cd "$PD_TMP/src" && spack dev-build pdmpi@="$version") \
        >> "$PD_TMP/spack.log" 2>&1; then
    ok "spack dev-build pdmpi@=$version"
    prefix=$(spack location -i pdmpi@="$version")
    out=$("$prefix/bin/pdmpicc" "$top_srcdir/examples/trainer.c" -o "$PD_TMP/trainer" -lm &&
        timeout -k 10 "$PD_TEST_TIMEOUT" "$prefix/bin/pdmpirun" -np 2 "$PD_TMP/trainer" 2>&1)
    check "its pdmpicc and pdmpirun build and run the trainer" \
        sh -c "echo \"\$1\" | grep -q '^all 2 ranks hold bitwise-identical weights'" sh "$out"
    spack uninstall -y pdmpi@="$version" > /dev/null 2>&1 || true
else
    tail -40 "$PD_TMP/spack.log"
    not_ok "spack dev-build pdmpi@=$version"
fi
finish
