#!/bin/sh
# pdmpirun: environment, output options, argument errors, and failure
# propagation -- one rank fails, pdmpirun names it, the others are gone,
# and pdmpirun's status is the failing rank's; --verbose and the world
# forming.
. "$top_srcdir/tests/lib.sh"
pd_tmpdir

exit_rank="$top_builddir/tests/exit_rank"

# Each rank sees its rank, the size, a store and a job key.
out=$(run_np 3 sh -c 'echo "$PDMPI_RANK/$PDMPI_SIZE/$PDMPI_LOCAL_RANK/$PDMPI_LOCAL_SIZE ${PDMPI_STORE:+store} ${PDMPI_JOBKEY:+key}"' | sort)
check "ranks see PDMPI_RANK/SIZE/LOCAL_*/STORE/JOBKEY" \
    test "$out" = "0/3/0/3 store key
1/3/1/3 store key
2/3/2/3 store key"

# Failure propagation at every size: the named rank exits with a code.
for np in $PD_SIZES; do
    bad=$((np - 1))
    [ "$np" -gt 1 ] && bad=1
    dir="$PD_TMP/pids$np"
    mkdir -p "$dir"
    start=$(date +%s)
    run_np "$np" "$exit_rank" "$bad" 3 "$dir" > "$PD_TMP/out$np" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    check "np $np: rank $bad exits 3 -> pdmpirun exits 3 (got $rc, ${took}s)" test "$rc" -eq 3
    check "np $np: pdmpirun names rank $bad and the exit code" \
        grep -q "rank $bad (pid [0-9]*) exited with code 3" "$PD_TMP/out$np"
    alive=0
    for f in "$dir"/*; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill -0 "$pid" 2>/dev/null && alive=$((alive + 1))
    done
    check "np $np: no rank is left running ($alive alive)" test "$alive" -eq 0
done

# A signal kills a rank: reported by name, status 128 + signal.
run_np 2 sh -c 'if [ "$PDMPI_RANK" = 1 ]; then kill -KILL $$; fi; sleep 30' \
    > "$PD_TMP/sig" 2>&1
rc=$?
check "rank killed by SIGKILL -> status 137 (got $rc)" test "$rc" -eq 137
check "signal named in the report" grep -q "rank 1 (pid [0-9]*) was killed by signal 9 (SIGKILL)" "$PD_TMP/sig"

# SIGTERM to pdmpirun reaches every rank.
"$PDMPIRUN" -np 2 sh -c 'echo $$ > '"$PD_TMP"'/sleeper.$PDMPI_RANK; exec sleep 60' &
launcher=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ -f "$PD_TMP/sleeper.0" ] && [ -f "$PD_TMP/sleeper.1" ] && break
    sleep 0.3
done
kill -TERM "$launcher"
wait "$launcher"
rc=$?
sleep 0.2
alive=0
for f in "$PD_TMP"/sleeper.*; do kill -0 "$(cat "$f")" 2>/dev/null && alive=$((alive + 1)); done
check "SIGTERM to pdmpirun stops every rank (status $rc, $alive alive)" \
    sh -c "[ $rc -ne 0 ] && [ $alive -eq 0 ]"

# Output options.
out=$(run_np 2 --tag-output sh -c 'echo hello' | sort)
check "--tag-output prefixes each line with [rank]" test "$out" = "[0] hello
[1] hello"
run_np 2 --log-dir "$PD_TMP/logs" sh -c 'echo "out $PDMPI_RANK"; echo "err $PDMPI_RANK" >&2' > "$PD_TMP/echo" 2>&1
check "--log-dir writes workerlog.0 and workerlog.1" \
    sh -c "grep -q 'out 0' '$PD_TMP/logs/workerlog.0' && grep -q 'err 1' '$PD_TMP/logs/workerlog.1'"

# Bad input: a one-line error and status 2; a missing program: 127.
for args in "-np 0 true" "-np -3 true" "-np two true" "-np 2" "--bogus -np 2 true" "-np 2 --backend mpi true"; do
    # shellcheck disable=SC2086
    timeout 20 "$PDMPIRUN" $args > "$PD_TMP/bad" 2>&1
    rc=$?
    check "pdmpirun $args -> status 2 with a message (got $rc: $(head -1 "$PD_TMP/bad"))" \
        sh -c "[ $rc -eq 2 ] && grep -q pdmpirun '$PD_TMP/bad'"
done
# A time limit, by --timeout or by MPIEXEC_TIMEOUT (as mpirun and mpiexec
# read it; --timeout wins): the ranks are stopped, status 124.
for how in "--timeout 1" "MPIEXEC_TIMEOUT=1" "MPIEXEC_TIMEOUT=60 --timeout 1"; do
    limit=${how%%--timeout*}
    opt=${how#"$limit"}
    # shellcheck disable=SC2086
    env -u MPIEXEC_TIMEOUT $limit timeout 20 "$PDMPIRUN" $opt -np 2 sleep 30 \
        > "$PD_TMP/limit" 2>&1
    rc=$?
    from=--timeout
    [ -z "$opt" ] && from=MPIEXEC_TIMEOUT
    check "$how: status 124 (got $rc) and the limit named" \
        sh -c "[ $rc -eq 124 ] && grep -q 'job exceeded $from 1s; terminating 2 ranks' '$PD_TMP/limit'"
done
MPIEXEC_TIMEOUT=soon timeout 20 "$PDMPIRUN" -np 1 true > "$PD_TMP/limit" 2>&1
rc=$?
check "MPIEXEC_TIMEOUT=soon -> status 2 with a message (got $rc)" \
    sh -c "[ $rc -eq 2 ] && grep -q 'MPIEXEC_TIMEOUT needs a positive number of seconds' '$PD_TMP/limit'"
timeout 20 "$PDMPIRUN" -np 2 /nonexistent/program > "$PD_TMP/noexec" 2>&1
rc=$?
check "missing program -> status 127 (got $rc)" test "$rc" -eq 127
check "missing program named" grep -q "/nonexistent/program" "$PD_TMP/noexec"
help=$("$PDMPIRUN" --help 2>&1)
missing=""
for opt in -np --backend --log-dir --tag-output --timeout --verbose --help; do
    echo "$help" | grep -q -- "$opt" || missing="$missing $opt"
done
check "--help documents every option${missing:+ (missing:$missing)}" test -z "$missing"

# --verbose shows the world forming: an MPI program's ranks reach the
# store and pdmpirun says so; programs that never call MPI_Init are named
# as missing, once a second, while the job runs. Without it, not a word.
run_np 2 --verbose "$top_builddir/tests/p2p_check" > /dev/null 2> "$PD_TMP/verbose"
check "--verbose: the world formed, 2 ranks on 1 host" \
    grep -q "^pdmpirun: world formed: all 2 ranks reached the store on 1 host within [0-9.]* s$" "$PD_TMP/verbose"
PDMPI_DEBUG=info run_np 2 sh -c 'sleep 1.5' > /dev/null 2> "$PD_TMP/forming"
check "PDMPI_DEBUG=info: ranks that never reach the store are named" \
    grep -q "^pdmpirun: world forming, [0-9.]* s: 0 of 2 ranks reached the store; host 0: 0 of 2 (waiting for rank 0, 1)$" "$PD_TMP/forming"
run_np 2 sh -c 'sleep 1.5' > /dev/null 2> "$PD_TMP/quiet"
check "without --verbose pdmpirun says nothing of it" \
    sh -c "! grep -q 'world' '$PD_TMP/quiet'"

# A device backend this build lacks: one line, non-zero, from MPI_Init.
run_np 2 --backend nccl "$top_builddir/examples/trainer" > "$PD_TMP/nccl" 2>&1
rc=$?
check "--backend nccl fails clearly here (status $rc)" \
    sh -c "[ $rc -ne 0 ] && grep -q 'backend nccl requested' '$PD_TMP/nccl'"
finish
