#!/bin/sh
# The built library against Open MPI's ABI, read from the binary itself:
# every predefined object mpi.h declares exists at Open MPI's size, every
# function is a strong PMPI_ with a weak MPI_ at the same address, the
# soname is libpdmpi.so.0, and nothing forbids binding to an executable's
# copy of an object (-Bsymbolic) or versions the symbols.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

lib="$top_builddir/.libs/libpdmpi.so"
[ -f "$lib" ] || { echo "no $lib"; exit 99; }
mpi_h=""
for flag in $PD_OMPI_CPPFLAGS; do
    dir=${flag#-I}
    [ -z "$mpi_h" ] && [ -f "$dir/mpi.h" ] && mpi_h="$dir/mpi.h"
done
[ -n "$mpi_h" ] || { echo "Open MPI's mpi.h not found in '$PD_OMPI_CPPFLAGS'"; exit 99; }

nm -D -S --defined-only "$lib" > "$PD_TMP/syms"

# Open MPI's object sizes per kind (ompi/*/*.h PREDEFINED_*_PAD).
size_of_kind() {
    case $1 in
        communicator|datatype|win) echo 512 ;;
        op) echo 2048 ;;
        errhandler) echo 1024 ;;
        group|info|request|message) echo 256 ;;
        file) echo 1536 ;;
        *) echo unknown ;;
    esac
}

# Every object declared in mpi.h, whatever #if it sits under.
sed -n 's/.*extern struct ompi_predefined_\([a-z]*\)_t \([a-z_0-9]*\);.*/\1 \2/p' \
    "$mpi_h" | sort -u > "$PD_TMP/declared"
declared=$(wc -l < "$PD_TMP/declared")
bad=0
while read -r kind sym; do
    want=$(size_of_kind "$kind")
    got=$(awk -v s="$sym" '$4 == s { print $2 }' "$PD_TMP/syms")
    if [ -z "$got" ]; then
        echo "# missing: $sym ($kind)"
        bad=$((bad + 1))
    elif [ "$((0x$got))" -ne "$want" ]; then
        echo "# $sym is $((0x$got)) bytes, Open MPI's is $want"
        bad=$((bad + 1))
    fi
done < "$PD_TMP/declared"
if [ "$declared" -ge 100 ] && [ "$bad" -eq 0 ]; then
    ok "all $declared predefined objects of mpi.h exported at Open MPI's sizes"
else
    not_ok "predefined objects: $bad of $declared wrong or missing"
fi

status=$(awk '$4 == "ompi_status_empty" { print $2 }' "$PD_TMP/syms")
check "ompi_status_empty is 24 bytes" test "$((0x${status:-0}))" -eq 24

# If the real libmpi.so.40 is installed, every ompi_mpi_* object it
# exports that a C binary can name exists here with the same size.
real=$(ls /usr/lib/*/libmpi.so.40 /usr/lib/*/openmpi/lib/libmpi.so.40 2>/dev/null | head -1)
if [ -n "$real" ]; then
    # The predefined objects are the ones at the handle sizes; the rest
    # of Open MPI's exported data is internal bookkeeping.
    nm -D -S --defined-only "$real" |
        awk '$3 ~ /^[DB]$/ && $4 ~ /^ompi_/ && $4 !~ /_addr$/ &&
             $2 ~ /^0+(18|100|200|400|600|800)$/' > "$PD_TMP/real"
    miss=0
    while read -r _ size _ sym; do
        mine=$(awk -v s="$sym" '$4 == s { print $2 }' "$PD_TMP/syms")
        if [ "$mine" != "$size" ]; then
            echo "# $sym: Open MPI $((0x$size)) bytes, pdmpi ${mine:+$((0x$mine)) bytes}${mine:-missing}"
            miss=$((miss + 1))
        fi
    done < "$PD_TMP/real"
    check "every predefined object of $(basename "$real") present with its size ($(wc -l < "$PD_TMP/real") compared)" test "$miss" -eq 0
fi

# The drop-in: every C function and callback the real libmpi.so.40
# exports, by name, exists here too, so nothing a C program or binding
# linked against it names is missing when pdmpi stands in for it. C names
# are MPI_Xxx/PMPI_Xxx (mixed case) and OMPI_C_MPI_*; the all-capital
# MPI_*_FN and lower-case mpi_* names are Fortran's, the MPIX_ functions
# mpi-ext.h's extensions (not part of pdmpi), the rest Open MPI's insides.
if [ -n "$real" ]; then
    nm -D --defined-only "$real" | awk '$3 ~ /^(P?MPI_[A-Z][a-z0-9_]|OMPI_C_MPI_)/ { print $3 }' |
        sort -u > "$PD_TMP/real_funcs"
    awk '{ print $4 }' "$PD_TMP/syms" | sort -u > "$PD_TMP/mine_names"
    missing=$(comm -23 "$PD_TMP/real_funcs" "$PD_TMP/mine_names")
    [ -z "$missing" ] || echo "# missing: $(echo $missing | head -c 400)"
    check "every C function of $(basename "$real") is exported ($(wc -l < "$PD_TMP/real_funcs") names)" \
        test -z "$missing"
fi

# Strong PMPI_X and weak MPI_X at one address, for every function.
awk '$3 == "T" && $4 ~ /^PMPI_/ { print $1, substr($4, 2) }' "$PD_TMP/syms" | sort > "$PD_TMP/pmpi"
awk '$3 == "W" && $4 ~ /^MPI_/ { print $1, $4 }' "$PD_TMP/syms" | sort > "$PD_TMP/mpi"
npmpi=$(wc -l < "$PD_TMP/pmpi")
if [ "$npmpi" -gt 0 ] && cmp -s "$PD_TMP/pmpi" "$PD_TMP/mpi"; then
    ok "$npmpi functions: each a strong PMPI_ with a weak MPI_ alias at the same address"
else
    diff "$PD_TMP/pmpi" "$PD_TMP/mpi" | head
    not_ok "PMPI_/MPI_ pairs"
fi
check "MPI_Allreduce is W and PMPI_Allreduce is T" \
    sh -c "grep -q ' W MPI_Allreduce\$' '$PD_TMP/syms' && grep -q ' T PMPI_Allreduce\$' '$PD_TMP/syms'"

# Nothing else leaks out of the library.
other=$(awk '$4 !~ /^(MPI_|PMPI_|MPIX_|ompi_|OMPI_C_MPI_|pdmpi_)/ { print $4 }' "$PD_TMP/syms")
check "no internal symbol exported${other:+ (found: $(echo $other | head -c 200))}" test -z "$other"

readelf -d "$lib" > "$PD_TMP/dyn"
check "soname is libpdmpi.so.0" grep -q 'Library soname: \[libpdmpi.so.0\]' "$PD_TMP/dyn"
check "not linked -Bsymbolic" sh -c "! grep -Eq '\\(SYMBOLIC\\)|FLAGS.*SYMBOLIC' '$PD_TMP/dyn'"
check "no symbol version definitions" sh -c "! readelf -V '$lib' | grep -q 'Version definition'"
finish
