# Launcher emulation for the world-formation tests (sourced after lib.sh).
#
# paddle_run and slurm_run start one process per rank with the variables
# PaddlePaddle's launchers or srun would set, wait for all of them and
# fail if any failed. Every process runs under timeout(1).

PD_FREE_PORT="$top_builddir/tests/free_port"
# Open MPI's launcher, by its own name (mpirun may point elsewhere).
PD_MPIRUN=${PD_MPIRUN:-mpirun.openmpi}
command -v "$PD_MPIRUN" >/dev/null 2>&1 || PD_MPIRUN=mpirun
PD_MPIRUN_FLAGS="--oversubscribe"
[ "$(id -u)" -eq 0 ] && PD_MPIRUN_FLAGS="$PD_MPIRUN_FLAGS --allow-run-as-root"

pd_timeout() {
    timeout -k 5 "$PD_TEST_TIMEOUT" "$@"
}

# expect_world NAME LAUNCHER NP LOCAL HOSTS COMMAND...: world_check's
# verdict on every rank, under COMMAND's launcher.
expect_world() {
    name=$1 launcher=$2 np=$3 local=$4 hosts=$5
    shift 5
    out="$PD_TMP/world_out"
    EXPECT_LAUNCHER=$launcher EXPECT_SIZE=$np EXPECT_LOCAL_SIZE=$local \
        EXPECT_HOSTS=$hosts "$@" > "$out" 2>&1
    rc=$?
    good=$(grep -c "^world_check: .*: ok$" "$out")
    if [ "$rc" -eq 0 ] && [ "$good" -eq "$np" ]; then
        ok "$name: world of $np via $launcher, local size $local"
    else
        head -20 "$out"
        not_ok "$name: world of $np via $launcher (exit $rc, $good ok)"
    fi
}

# pd_rank_ns R: the network namespace of rank R from PD_RANK_NETNS (a
# space-separated list, one per rank), or nothing.
pd_rank_ns() {
    [ -n "${PD_RANK_NETNS:-}" ] || return 0
    echo $PD_RANK_NETNS | cut -d' ' -f$(($1 + 1))
}

# pd_in_ns NS COMMAND...: COMMAND inside namespace NS (or here if empty).
pd_in_ns() {
    ns=$1
    shift
    if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

# pd_local R: "LOCAL_RANK LOCAL_SIZE" of rank R among ranks sharing its
# namespace (all ranks when PD_RANK_NETNS is unset).
pd_local() {
    mine=$(pd_rank_ns "$1")
    lr=0 ls=0 q=0
    while [ "$q" -lt "$np" ]; do
        if [ "$(pd_rank_ns "$q")" = "$mine" ]; then
            [ "$q" -lt "$1" ] && lr=$((lr + 1))
            ls=$((ls + 1))
        fi
        q=$((q + 1))
    done
    echo "$lr $ls"
}

# pd_wait_all PIDS: wait for every pid; status 1 if any failed.
pd_wait_all() {
    status=0
    for pid in "$@"; do
        wait "$pid" || status=1
    done
    return $status
}

# paddle_run MODE MASTER_HOST NP PROGRAM ARGS...: PaddlePaddle-style ranks.
# MODE master: the new launcher (PADDLE_MASTER, PADDLE_LOCAL_RANK/SIZE);
# MODE endpoints: the legacy launcher and spawn (PADDLE_TRAINER_ENDPOINTS,
# PADDLE_CURRENT_ENDPOINT, PADDLE_RANK_IN_NODE, no local size).
# PD_PADDLE_PORT fixes rank 0's port; else a free one is picked.
paddle_run() {
    mode=$1 host=$2 np=$3
    shift 3
    port=${PD_PADDLE_PORT:-$(pd_in_ns "$(pd_rank_ns 0)" "$PD_FREE_PORT" "$host")}
    endpoints=""
    r=0
    while [ "$r" -lt "$np" ]; do
        rhost=$host
        [ -n "${PD_RANK_ADDRS:-}" ] && rhost=$(echo $PD_RANK_ADDRS | cut -d' ' -f$((r + 1)))
        endpoints="$endpoints${endpoints:+,}$rhost:$((port + r))"
        r=$((r + 1))
    done
    pids=""
    r=0
    while [ "$r" -lt "$np" ]; do
        # PD_SLOW_RANKS="R ...": those ranks run at nice 19 on processor
        # PD_SLOW_CPU, to start up behind the others.
        slow=""
        case " ${PD_SLOW_RANKS:-} " in
        *" $r "*) slow="nice -n 19 taskset -c $PD_SLOW_CPU" ;;
        esac
        local_info=$(pd_local "$r")
        lr=${local_info% *} ls=${local_info#* }
        current=$(echo "$endpoints" | cut -d, -f$((r + 1)))
        if [ "$mode" = master ]; then
            pd_in_ns "$(pd_rank_ns "$r")" env PADDLE_TRAINER_ID="$r" \
                PADDLE_TRAINERS_NUM="$np" PADDLE_MASTER="$host:$port" \
                PADDLE_GLOBAL_RANK="$r" PADDLE_GLOBAL_SIZE="$np" \
                PADDLE_LOCAL_RANK="$lr" PADDLE_LOCAL_SIZE="$ls" \
                PADDLE_RANK_IN_NODE="$lr" PADDLE_TRAINER_ENDPOINTS="$endpoints" \
                PADDLE_CURRENT_ENDPOINT="$current" PADDLE_DISTRI_BACKEND=gloo \
                $slow timeout -k 5 "$PD_TEST_TIMEOUT" "$@" &
        else
            pd_in_ns "$(pd_rank_ns "$r")" env PADDLE_TRAINER_ID="$r" \
                PADDLE_TRAINERS_NUM="$np" PADDLE_RANK_IN_NODE="$lr" \
                PADDLE_TRAINER_ENDPOINTS="$endpoints" \
                PADDLE_CURRENT_ENDPOINT="$current" PADDLE_WITH_GLOO=0 \
                timeout -k 5 "$PD_TEST_TIMEOUT" "$@" &
        fi
        pids="$pids $!"
        r=$((r + 1))
    done
    pd_wait_all $pids
}

# slurm_run NP PROGRAM ARGS...: the variables of `srun -n NP --mpi=none`
# on one node; PDMPI_MASTER_PORT keeps the derived port out of the way.
slurm_run() {
    np=$1
    shift
    port=$("$PD_FREE_PORT")
    pids=""
    r=0
    while [ "$r" -lt "$np" ]; do
        env SLURM_JOB_ID=4242 SLURM_STEP_ID=0 SLURM_PROCID="$r" \
            SLURM_LOCALID="$r" SLURM_NODEID=0 SLURM_NTASKS="$np" \
            SLURM_STEP_NUM_TASKS="$np" SLURM_STEP_NUM_NODES=1 \
            SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE="$np" \
            PDMPI_MASTER_PORT="$port" \
            timeout -k 5 "$PD_TEST_TIMEOUT" "$@" &
        pids="$pids $!"
        r=$((r + 1))
    done
    pd_wait_all $pids
}

# timed NAME MAX PATTERN COMMAND...: COMMAND must fail within MAX seconds
# with PATTERN (extended regex) in its output (needs pd_tmpdir).
timed() {
    name=$1 max=$2 pattern=$3
    shift 3
    start=$(date +%s)
    "$@" > "$PD_TMP/out" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    grep -v '^shm_check: rank' "$PD_TMP/out" | sed 's/^/# /' | head -8
    check "$name: exit $rc in ${took}s (wanted non-zero within ${max}s)" \
        sh -c "[ $rc -ne 0 ] && [ $took -le $max ]"
    check "$name: the message says what happened" \
        grep -Eq "$pattern" "$PD_TMP/out"
}

# small_shm_ok: this shell may give a command a /dev/shm of its own (root,
# mount namespaces); small_shm SIZE COMMAND...: COMMAND with a /dev/shm of
# SIZE (bounded by PD_TEST_TIMEOUT).
small_shm_ok() {
    [ "$(id -u)" -eq 0 ] &&
        unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs /dev/shm' 2>/dev/null
}
small_shm() {
    timeout -k 10 "$PD_TEST_TIMEOUT" unshare -m sh -c \
        'mount -t tmpfs -o size="$0" tmpfs /dev/shm && exec "$@"' "$@"
}

# check_ran NAME RC FILE: a TAP program that exited RC and wrote FILE
# passed (its lines other than "ok" shown).
check_ran() {
    grep -v '^ok' "$3" | sed 's/^/# /' | head -6
    check "$1 (exit $2)" sh -c "[ $2 -eq 0 ] && ! grep -q '^not ok' '$3'"
}
