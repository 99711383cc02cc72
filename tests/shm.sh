#!/bin/sh
# The shared-memory host path on one host: every collective at np 1..5
# (coll_check), with chunks small enough that large messages take many
# steps, with messages large enough for non-temporal copies, with
# spinning off (every wait sleeps), and with the path off (PDMPI_SHM=0:
# pure gloo); bit-exact rank-order sums and descriptor
# hygiene (shm_check); no segment left in /dev/shm, also when rank 0 is
# killed mid set-up, and a dead rank's segment reclaimed at once; a rank killed with
# SIGKILL in the middle of an allreduce is noticed by the others within
# seconds, under pdmpirun and under a launcher that does not kill the
# others itself (PaddlePaddle-style); ranks bound to a processor each are
# not taken for oversubscribed; a small /dev/shm; bad settings refused.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/launch_lib.sh"
pd_tmpdir

coll_check="$top_builddir/tests/coll_check"
shm_check="$top_builddir/tests/shm_check"

for np in 1 2 3 4 5; do
    check_tap "coll_check at np $np over shared memory" \
        run_np "$np" "$coll_check" --big 65536
done
for np in 2 3 5; do
    check_tap "coll_check at np $np, PDMPI_SHM_CHUNK=4096 (many chunks)" \
        env PDMPI_SHM_CHUNK=4096 "$PDMPIRUN" -np "$np" "$coll_check" --big 70001
    # Gather(v), scatter(v), alltoall(v): blocks of up to 4000 bytes in
    # pieces of 4096 / np bytes (conformance.sh runs colls_check at np
    # 1..5 with the usual chunk).
    check_tap "colls_check at np $np, PDMPI_SHM_CHUNK=4096 (many pieces)" \
        env PDMPI_SHM_CHUNK=4096 "$PDMPIRUN" -np "$np" "$top_builddir/tests/colls_check"
done
# Pieces of 128 KiB and more go into the segment with non-temporal
# stores when the ranks have a processor each (np 2 here): 4-8 MiB
# messages take that path for every collective.
check_tap "coll_check at np 2, --big 1048576 (non-temporal copies)" \
    run_np 2 "$coll_check" --big 1048576
check_tap "coll_check at np 2, PDMPI_SHM_STREAM=4096 (non-temporal from 4 KiB)" \
    env PDMPI_SHM_STREAM=4096 "$PDMPIRUN" -np 2 "$coll_check" --big 65536
check_tap "coll_check at np 2, PDMPI_SHM_STREAM=0 (no non-temporal copies)" \
    env PDMPI_SHM_STREAM=0 "$PDMPIRUN" -np 2 "$coll_check" --big 1048576
check_tap "coll_check at np 4, PDMPI_SHM_SPIN=0 (every wait sleeps)" \
    env PDMPI_SHM_SPIN=0 "$PDMPIRUN" -np 4 "$coll_check" --big 65536
check_tap "coll_check at np 3, PDMPI_SHM=0 (host backend only)" \
    env PDMPI_SHM=0 "$PDMPIRUN" -np 3 "$coll_check" --big 65536

for np in 1 2 3 4 5; do
    touch "$PD_TMP/stamp"
    run_np "$np" "$shm_check" > "$PD_TMP/shm$np" 2>&1
    rc=$?
    grep -v '^ok' "$PD_TMP/shm$np" | sed 's/^/# /' | head -20
    check "shm_check at np $np: rank-order sums, same bits, no leaks (exit $rc)" \
        [ "$rc" -eq 0 ]
    left=""
    for pid in $(sed -n 's/^shm_check: rank [0-9]* pid \([0-9]*\)$/\1/p' \
                     "$PD_TMP/shm$np"); do
        left="$left$(find /dev/shm -name "pdmpi-*-$pid-*" -newer "$PD_TMP/stamp")"
    done
    check "np $np: no segment left in /dev/shm" [ -z "$left" ]
done

# Rank 0 killed while it waits for the others to map a new
# communicator's segment (they come 2 s late): once pdmpirun returns
# nothing of the job is left in /dev/shm -- the last rank to map a segment
# removes its name, and pdmpirun removes what its dead ranks left.
for np in 2 3 4; do
    touch "$PD_TMP/stamp"
    "$PDMPIRUN" -np "$np" "$shm_check" --die-mapping > "$PD_TMP/dm" 2>&1
    rc=$?
    grep -v '^shm_check: rank' "$PD_TMP/dm" | sed 's/^/# /' | head -4
    left=""
    for pid in $(sed -n 's/^shm_check: rank [0-9]* pid \([0-9]*\)$/\1/p' \
                     "$PD_TMP/dm"); do
        left="$left$(find /dev/shm -name "pdmpi-*-$pid-*" -newer "$PD_TMP/stamp")"
    done
    check "np $np: rank 0 killed while its segment is mapped: fails (exit $rc)" \
        sh -c "[ $rc -ne 0 ] && [ $rc -ne 3 ]"
    check "np $np: rank 0 killed while its segment is mapped: nothing left in /dev/shm" \
        [ -z "$left" ]
done

# Processors are counted over all the ranks of a host: ranks bound to a
# processor each (as Open MPI's mpirun binds them) are not oversubscribed,
# ranks bound to one processor together are. PD_CPUS: the processors this
# test may use, one per line.
awk -F, '/^Cpus_allowed_list:/ {
    sub(/^Cpus_allowed_list:[ \t]*/, "")
    n = split($0, parts, ",")
    for (i = 1; i <= n; i++) {
        if (split(parts[i], ends, "-") == 2)
            for (c = ends[1]; c <= ends[2]; c++) print c
        else
            print parts[i]
    }
}' /proc/self/status > "$PD_TMP/cpus"
cat > "$PD_TMP/bind" <<'EOS'
#!/bin/sh
# bind MODE PROGRAM...: run on the local rank's own processor (each) or on
# the first one (shared)
mode=$1
shift
if [ "$mode" = each ]; then
    cpu=$(sed -n "$((PDMPI_LOCAL_RANK + 1))p" "$PD_CPUS")
else
    cpu=$(sed -n 1p "$PD_CPUS")
fi
exec taskset -c "$cpu" "$@"
EOS
chmod +x "$PD_TMP/bind"
PD_CPUS="$PD_TMP/cpus"
export PD_CPUS
if [ "$(wc -l < "$PD_TMP/cpus")" -ge 2 ] && command -v taskset > /dev/null; then
    for mode in each shared; do
        PDMPI_DEBUG=info run_np 2 "$PD_TMP/bind" "$mode" \
            "$coll_check" --big 65536 > "$PD_TMP/bind.$mode" 2>&1
        rc=$?
        grep 'shared memory among 2' "$PD_TMP/bind.$mode" | sed 's/^/# /'
        check "np 2 bound to a processor $mode: coll_check passes (exit $rc)" \
            [ "$rc" -eq 0 ]
    done
    check "np 2 bound to a processor each: 2 processors, not oversubscribed" \
        grep -Eq 'among 2 ranks on 2 processors, .*spin 1000 us \(at least 50\), non-temporal copies from 131072 bytes' "$PD_TMP/bind.each"
    check "np 2 bound to one processor: oversubscribed, no spin" \
        grep -Eq 'among 2 ranks on 1 processor \(oversubscribed\), .*spin 0 us, no non-temporal copies' \
        "$PD_TMP/bind.shared"
else
    ok "binding tests # SKIP they need 2 processors and taskset"
fi

# die_run NAME PATTERN LAUNCH...: rank 1 kills itself mid-allreduce; the
# job must end non-zero within 10 s, with PATTERN (who names the dead rank)
# in its output.
die_run() {
    name=$1 pattern=$2
    shift 2
    start=$(date +%s)
    "$@" > "$PD_TMP/die" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    sed 's/^/# /' "$PD_TMP/die" | head -12
    check "$name: rank 1 killed mid-allreduce: exit $rc in ${took}s" \
        sh -c "[ $rc -ne 0 ] && [ $took -le 10 ]"
    check "$name: rank 1 is named as gone" grep -Eq "$pattern" "$PD_TMP/die"
}
# A timeout far above the 10 s wanted: only noticing the death is fast.
# PaddlePaddle's ranks are on their own: the survivors must see it in
# shared memory. pdmpirun sees its child die and ends the others.
PDMPI_TIMEOUT=60
export PDMPI_TIMEOUT
for np in 2 4; do
    die_run "PaddlePaddle-style np $np" \
        "rank 1 \(pid [0-9]+, this host\) is gone" \
        paddle_run master 127.0.0.1 "$np" "$shm_check" --die 1 50
done
die_run "pdmpirun np 4" "rank 1 \(pid [0-9]+\) was killed by signal 9" \
    "$PDMPIRUN" -np 4 "$shm_check" --die 1 50
unset PDMPI_TIMEOUT

# Ranks in different collectives fail at once, naming both calls (the
# launcher may end the others before every rank has printed, so any
# rank's view of the pair will do).
for np in 2 3; do
    for r in 1 0; do
        run_np "$np" "$shm_check" --skip $r > "$PD_TMP/skip" 2>&1
        rc=$?
        sed 's/^/# /' "$PD_TMP/skip" | grep -v 'shm_check: rank' | head -4
        check "np $np: rank $r skips an allreduce: error naming both calls (exit $rc)" \
            sh -c "[ $rc -ne 0 ] && grep -Eq 'rank [0-2] is in allreduce of 16 bytes, rank $r in barrier|rank $r is in barrier, rank [0-2] in allreduce of 16 bytes' '$PD_TMP/skip'"
    done
    run_np "$np" "$shm_check" --count > "$PD_TMP/count" 2>&1
    rc=$?
    sed 's/^/# /' "$PD_TMP/count" | grep -v 'shm_check: rank' | head -4
    check "np $np: rank 1 passes another count: error naming both (exit $rc)" \
        sh -c "[ $rc -ne 0 ] && grep -Eq 'rank [0-9] is in allreduce of (16|20) bytes, rank [0-9] in allreduce of (16|20) bytes' '$PD_TMP/count'"
    run_np "$np" "$shm_check" --blocks > "$PD_TMP/blocks" 2>&1
    rc=$?
    sed 's/^/# /' "$PD_TMP/blocks" | grep -v 'shm_check: rank' | head -4
    check "np $np: alltoall against gather: error naming both (exit $rc)" \
        sh -c "[ $rc -ne 0 ] && grep -Eq 'rank 0 is in alltoall, rank [12] in gather with root 1|rank [12] is in gather with root 1, rank 0 in alltoall' '$PD_TMP/blocks'"
done

# Little room in /dev/shm (a container's is 64 MiB unless --shm-size says
# otherwise), as a private tmpfs over /dev/shm in a mount namespace. With
# the default chunk the segment shrinks until it fits, with one warning;
# a chunk that was asked for, or no room even for 4 KiB chunks, fails the
# set-up with a message naming /dev/shm.
if small_shm_ok; then
    for np in 2 4; do
        small_shm 1m "$PDMPIRUN" -np "$np" "$coll_check" --big 65536 \
            > "$PD_TMP/small" 2>&1
        check_ran "np $np, 1 MiB /dev/shm: coll_check passes" $? \
            "$PD_TMP/small"
        check "np $np, 1 MiB /dev/shm: one warning of smaller chunks" \
            sh -c "[ \$(grep -c 'no room for shared memory with 262144-byte chunks; using [0-9]*-byte chunks' '$PD_TMP/small') -eq 1 ]"
    done
    small_shm 1m env PDMPI_SHM_CHUNK=262144 "$PDMPIRUN" -np 4 \
        "$coll_check" > "$PD_TMP/small" 2>&1
    rc=$?
    check "np 4, 1 MiB /dev/shm, PDMPI_SHM_CHUNK=262144: refused (exit $rc)" \
        sh -c "[ $rc -ne 0 ] && grep -Eq 'cannot reserve [0-9]+ bytes of shared memory in /dev/shm \([0-9]+ free\) for 262144-byte chunks as PDMPI_SHM_CHUNK asks' '$PD_TMP/small'"
    # What a killed rank left -- a segment whose creator's pid is gone,
    # filling all but 24 KiB of a 1 MiB /dev/shm -- is reclaimed by the
    # next set-up on the host at once, whatever its age.
    dead=$(sh -c 'echo $$')
    pidns=$(stat -L -c %i /proc/self/ns/pid)
    small_shm 1m sh -c '
        head -c 1024000 /dev/zero > /dev/shm/pdmpi-00000000deadbeef-$0-$1-0 &&
        "$2" -np 2 "$3" && ! ls /dev/shm | grep -q deadbeef' \
        "$pidns" "$dead" "$PDMPIRUN" "$coll_check" > "$PD_TMP/small" 2>&1
    rc=$?
    grep -v '^ok' "$PD_TMP/small" | sed 's/^/# /' | head -4
    check "np 2, 1 MiB /dev/shm nearly full of a dead rank's segment: reclaimed, coll_check passes (exit $rc)" \
        [ "$rc" -eq 0 ]
    small_shm 16k "$PDMPIRUN" -np 4 "$coll_check" > "$PD_TMP/small" 2>&1
    rc=$?
    check "np 4, 16 KiB /dev/shm: refused naming /dev/shm (exit $rc)" \
        sh -c "[ $rc -ne 0 ] && grep -Eq 'cannot reserve [0-9]+ bytes of shared memory in /dev/shm \([0-9]+ free\) for 4096-byte chunks' '$PD_TMP/small'"
else
    ok "small /dev/shm tests # SKIP they need root and mount namespaces"
fi

# Local ranks asking for different chunks.
run_np 2 sh -c '[ "$PDMPI_LOCAL_RANK" = 1 ] && export PDMPI_SHM_CHUNK=8192
                exec "$0"' "$coll_check" > "$PD_TMP/chunks" 2>&1
rc=$?
check "np 2, rank 1 alone sets PDMPI_SHM_CHUNK: refused (exit $rc)" \
    sh -c "[ $rc -ne 0 ] && grep -q 'ranks on this host disagree on PDMPI_SHM_CHUNK (8192 here, 262144 at local rank 0)' '$PD_TMP/chunks'"

for bad in "PDMPI_SHM=2:PDMPI_SHM=2 is not 0 or 1" \
           "PDMPI_SHM_SPIN=-1:PDMPI_SHM_SPIN=-1 is not a number of microseconds" \
           "PDMPI_SHM_CHUNK=1000:PDMPI_SHM_CHUNK=1000 is not a number of bytes" \
           "PDMPI_SHM_CHUNK=4100:PDMPI_SHM_CHUNK=4100 is not a number of bytes" \
           "PDMPI_SHM_STREAM=-1:PDMPI_SHM_STREAM=-1 is not a number of bytes" \
           "PDMPI_SHM_STREAM=1e9:PDMPI_SHM_STREAM=1e9 is not a number of bytes"; do
    setting=${bad%%:*}
    check "$setting is refused with a message" \
        sh -c "env '$setting' '$top_builddir/tests/world_check' 2>&1 |
               grep -q '${bad#*:}'"
done

finish
