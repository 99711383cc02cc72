#!/bin/sh
# libFuzzer targets for the parsers that read bytes from outside the
# process (tests/fuzz/*.c): the rendezvous store's request frames, PMI-1
# replies, Slurm's host and task lists, and the launcher environment.
#
# Each target is built with clang (-fsanitize=fuzzer,address,undefined)
# and run for PD_FUZZ_SECONDS (default 20; 0 runs the seed corpus only)
# on a copy of its seed corpus, tests/fuzz/corpus/<target>/. A crash,
# a sanitizer report or a failed check fails the test; the input that
# did it is kept in tests/fuzz-crashes/ of the build tree and shown.
. "$top_srcdir/tests/lib.sh"

PD_FUZZ_SECONDS=${PD_FUZZ_SECONDS:-20}
PD_FUZZ_CC=${PD_FUZZ_CC:-clang}
bindir="$top_builddir/tests/fuzz-bin"
crashdir="$top_builddir/tests/fuzz-crashes"
boot="$top_srcdir/src/boot"
# Job keys and HELLO proofs (HMAC-SHA256).
auth="$boot/store_auth.c $boot/sha256.c $top_srcdir/src/base/hex.c"

case $PD_FUZZ_SECONDS in
    ''|*[!0-9]*)
        echo "fuzz: PD_FUZZ_SECONDS=$PD_FUZZ_SECONDS is not a number of seconds"
        exit 1 ;;
esac

# target: the sources of pdmpi it links (besides tests/fuzz/<target>.c).
sources_of() {
    case $1 in
        fuzz_store_frame) echo "$boot/store_frame.c $auth" ;;
        fuzz_pmi1_reply) echo "$boot/pmi1_parse.c" ;;
        fuzz_slurm_lists) echo "$boot/world_slurm.c $boot/env.c $auth" ;;
        fuzz_launcher_env)
            echo "$boot/world_paddle.c $boot/world_slurm.c $boot/env.c $boot/net.c $auth" ;;
    esac
}
targets="fuzz_store_frame fuzz_pmi1_reply fuzz_slurm_lists fuzz_launcher_env"

pd_tmpdir
mkdir -p "$bindir"

# Building a fuzzer needs clang and its libFuzzer runtime.
cat > "$PD_TMP/probe.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    return 0;
}
EOF
if ! "$PD_FUZZ_CC" -fsanitize=fuzzer,address,undefined "$PD_TMP/probe.c" \
        -o "$PD_TMP/probe" > "$PD_TMP/probe.log" 2>&1; then
    cat "$PD_TMP/probe.log"
    echo "fuzz: cannot build a libFuzzer target with '$PD_FUZZ_CC'" \
         "(-fsanitize=fuzzer,address,undefined)."
    echo "fuzz: install clang and its runtimes, libFuzzer among them: on" \
         "Debian 'apt-get install clang libclang-rt-dev', which" \
         "scripts/install-deps.sh does; or point PD_FUZZ_CC at a clang" \
         "that has libFuzzer."
    exit 1
fi

# -O1 keeps the sanitizers fast; every UBSan finding aborts, so libFuzzer
# reports it as a crash with its input.
FUZZ_CFLAGS="-std=c11 -g -O1 -Wall -Wextra \
-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
-fno-omit-frame-pointer -D_GNU_SOURCE -include $top_builddir/config.h \
-I$top_srcdir/src -I$top_srcdir/src/boot"

build() {
    # shellcheck disable=SC2086  # the flag and source lists split on purpose
    "$PD_FUZZ_CC" $FUZZ_CFLAGS -o "$bindir/$1" \
        "$top_srcdir/tests/fuzz/$1.c" $(sources_of "$1") \
        > "$PD_TMP/$1.build.log" 2>&1
    status=$?
    cat "$PD_TMP/$1.build.log"
    return $status
}

# The figures libFuzzer gives at the end of a run.
report() {
    target=$1
    log=$2
    units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
    corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1)
    echo "# $target: ${units:-?} executions, ${cov:-cov: ?}, ${corp:-corp: ?}"
}

# Show what libFuzzer found and keep the input for a rerun.
show_crash() {
    target=$1
    log=$2
    tail -n 60 "$log" | sed 's/^/#   /'
    mkdir -p "$crashdir"
    for f in "$PD_TMP/artifacts-$target"/*; do
        [ -f "$f" ] || continue
        kept="$crashdir/$target-$(basename "$f")"
        cp "$f" "$kept"
        echo "#   reproducer ($(wc -c < "$f") bytes): $kept"
        od -A d -t x1z -v "$f" | head -n 32 | sed 's/^/#     /'
        echo "#   rerun: $bindir/$target $kept"
    done
}

for t in $targets; do
    if ! build "$t"; then
        not_ok "$t: build"
        continue
    fi
    corpus="$PD_TMP/corpus-$t"
    mkdir -p "$corpus" "$PD_TMP/artifacts-$t"
    cp "$top_srcdir/tests/fuzz/corpus/$t"/* "$corpus"/
    if [ "$PD_FUZZ_SECONDS" -eq 0 ]; then
        limit="-runs=0"
    else
        limit="-max_total_time=$PD_FUZZ_SECONDS"
    fi
    log="$PD_TMP/$t.log"
    # A run that hangs is a failure too: libFuzzer's own -timeout catches
    # one slow input, timeout(1) the rest.
    if timeout -k 10 $((PD_FUZZ_SECONDS + 120)) "$bindir/$t" "$limit" \
            -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$PD_TMP/artifacts-$t/" "$corpus" \
            > "$log" 2>&1; then
        if [ "$PD_FUZZ_SECONDS" -eq 0 ]; then
            ok "$t: seed corpus runs clean"
        else
            ok "$t: no crash in $PD_FUZZ_SECONDS s"
        fi
        report "$t" "$log"
    else
        not_ok "$t: libFuzzer found a failing input"
        show_crash "$t" "$log"
    fi
done

finish
