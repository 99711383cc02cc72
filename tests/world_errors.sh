#!/bin/sh
# A world that cannot form says exactly why, in one line, within seconds:
# every malformed launcher variable, a dead or silent process manager, an
# unreachable or busy master, a rank id claimed twice. Then the ways a job
# ends early under every launcher: MPI_Abort's code reaches the launcher,
# and a rank leaving without MPI_Finalize takes the job down.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/launch_lib.sh"
pd_tmpdir

world_check="$top_builddir/tests/world_check"
fatal_check="$top_builddir/tests/fatal_check"
exit_rank="$top_builddir/tests/exit_rank"

# refuses NAME EXPECTED VAR=VALUE...: world_check with these variables
# must exit non-zero within 10 s with exactly one line on stderr that
# contains EXPECTED.
refuses() {
    name=$1 expected=$2
    shift 2
    start=$(date +%s)
    env "$@" PDMPI_TIMEOUT="${PDMPI_TIMEOUT:-5}" \
        timeout -k 5 30 "$world_check" 2> "$PD_TMP/err" > /dev/null
    rc=$?
    took=$(($(date +%s) - start))
    lines=$(wc -l < "$PD_TMP/err")
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -le 10 ] &&
        [ "$lines" -eq 1 ] && grep -qF -- "$expected" "$PD_TMP/err"; then
        ok "$name: exit $rc in ${took}s: $(cut -c1-160 "$PD_TMP/err")"
    else
        sed 's/^/# /' "$PD_TMP/err" | head -5
        not_ok "$name (exit $rc, ${took}s, $lines lines; wanted '$expected')"
    fi
}

closed=$("$PD_FREE_PORT")
silent=$("$PD_FREE_PORT" -l 60)

refuses "rank not below size" "PADDLE_TRAINER_ID=4 is not an integer in [0, 3]" \
    PADDLE_TRAINER_ID=4 PADDLE_TRAINERS_NUM=4 PADDLE_MASTER=127.0.0.1:$closed
refuses "size zero" "PADDLE_TRAINERS_NUM=0 is not an integer" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=0
refuses "rank not a number" "PADDLE_TRAINER_ID=x is not an integer" \
    PADDLE_TRAINER_ID=x PADDLE_TRAINERS_NUM=2 PADDLE_MASTER=127.0.0.1:$closed
refuses "no rendezvous" "neither PADDLE_MASTER nor PADDLE_TRAINER_ENDPOINTS" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=2
refuses "master without a port" "PADDLE_MASTER has endpoint 'no-port' that does not parse" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=2 PADDLE_MASTER=no-port
refuses "endpoint count" "lists 2 endpoints but PADDLE_TRAINERS_NUM=3" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=3 \
    PADDLE_TRAINER_ENDPOINTS=127.0.0.1:6170,127.0.0.1:6171
refuses "endpoint that does not parse" "PADDLE_TRAINER_ENDPOINTS has endpoint 'host:port'" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=2 \
    PADDLE_TRAINER_ENDPOINTS=127.0.0.1:6170,host:port
refuses "current endpoint disagrees" "PADDLE_CURRENT_ENDPOINT=127.0.0.1:9 but entry 0" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=2 PADDLE_CURRENT_ENDPOINT=127.0.0.1:9 \
    PADDLE_TRAINER_ENDPOINTS=127.0.0.1:6170,127.0.0.1:6171
refuses "local rank not below local size" "PADDLE_LOCAL_RANK=2 is not an integer in [0, 1]" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=2 PADDLE_LOCAL_RANK=2 \
    PADDLE_LOCAL_SIZE=2 PADDLE_MASTER=127.0.0.1:$closed
refuses "unreachable master" "cannot reach the rendezvous store at 127.0.0.1:$closed (from PADDLE_MASTER)" \
    PDMPI_TIMEOUT=2 PADDLE_TRAINER_ID=1 PADDLE_TRAINERS_NUM=2 \
    PADDLE_MASTER=127.0.0.1:$closed
refuses "master port held by another process" "port $silent: Address already in use" \
    PADDLE_TRAINER_ID=0 PADDLE_TRAINERS_NUM=2 PADDLE_MASTER=127.0.0.1:$silent
refuses "PMI_FD not open" "PMI_FD=99" PMI_FD=99 PMI_RANK=0 PMI_SIZE=2
refuses "PMI rank not below size" "PMI_RANK=5 is not below PMI_SIZE=4" \
    PMI_FD=1 PMI_RANK=5 PMI_SIZE=4
refuses "PMI_PORT refused" "PMI_PORT=127.0.0.1:$closed" \
    PMI_PORT=127.0.0.1:$closed PMI_ID=0
refuses "PMI_PORT malformed" "PMI_PORT=nonsense" PMI_PORT=nonsense PMI_ID=0
refuses "PMIx server gone" "PMIx_Init failed" \
    PMIX_NAMESPACE=stale PMIX_RANK=0 "PMIX_SERVER_URI41=1.0;tcp4://127.0.0.1:$closed"
refuses "PMIx server silent" "PMIx_Init did not answer" PDMPI_TIMEOUT=2 \
    PMIX_NAMESPACE=stale PMIX_RANK=0 "PMIX_SERVER_URI41=1.0;tcp4://127.0.0.1:$silent"
refuses "PMIx variables incomplete" "PMIx: incomplete environment" \
    PMIX_NAMESPACE=stale
refuses "Slurm rank not below size" "SLURM_PROCID=3 is not an integer in [0, 1]" \
    SLURM_STEP_ID=0 SLURM_PROCID=3 SLURM_NTASKS=2
refuses "Slurm host list" "SLURM_STEP_NODELIST=node[ is not a host list" \
    SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=2 'SLURM_STEP_NODELIST=node['
refuses "Slurm master port" "PDMPI_MASTER_PORT=70000 is not an integer" \
    SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_STEP_NODELIST=localhost \
    PDMPI_MASTER_PORT=70000
refuses "unknown launcher" "PDMPI_LAUNCHER=bogus is not a known launcher" \
    PDMPI_LAUNCHER=bogus
refuses "forced launcher absent" "PDMPI_LAUNCHER=pmix but that launcher's variables are not set" \
    PDMPI_LAUNCHER=pmix
refuses "pdmpirun rank not below size" "PDMPI_RANK=3 is not an integer in [0, 1]" \
    PDMPI_RANK=3 PDMPI_SIZE=2

# Two processes claim rank 1 of 3: both are told, and so is rank 0.
port=$("$PD_FREE_PORT")
start=$(date +%s)
for id in 0 1 1; do
    PDMPI_TIMEOUT=20 PADDLE_TRAINER_ID=$id PADDLE_TRAINERS_NUM=3 \
        PADDLE_MASTER=127.0.0.1:$port pd_timeout "$world_check" \
        > /dev/null 2>> "$PD_TMP/dup" &
done
wait
took=$(($(date +%s) - start))
claimed=$(grep -c "PADDLE_TRAINER_ID=1 is claimed by more than one process\|rank 1 is claimed by more than one process" "$PD_TMP/dup")
check "rank id claimed twice: every process says so within 10 s ($claimed lines, ${took}s)" \
    sh -c "[ $claimed -eq 3 ] && [ $took -le 10 ]"

# ends_with NAME CODE COMMAND...: the job ends within 10 s with status CODE
# (any non-zero status when CODE is "nonzero").
ends_with() {
    name=$1 want=$2 within=${PD_END_WITHIN:-10}
    shift 2
    start=$(date +%s)
    "$@" > "$PD_TMP/end" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    if { [ "$want" = nonzero ] && [ "$rc" -ne 0 ]; } || [ "$rc" = "$want" ]; then
        if [ "$took" -le "$within" ]; then
            ok "$name: status $rc in ${took}s"
            return
        fi
    fi
    sed 's/^/# /' "$PD_TMP/end" | head -10
    not_ok "$name: status $rc in ${took}s (wanted $want within $within s)"
}

for np in $PD_SIZES; do
    [ "$np" -ge 2 ] || continue
    ends_with "pdmpirun -np $np: MPI_Abort(7)" 7 \
        pd_timeout "$PDMPIRUN" -np "$np" "$fatal_check" abort
    ends_with "pdmpirun -np $np: rank 1 exits 0 without MPI_Finalize" nonzero \
        pd_timeout "$PDMPIRUN" -np "$np" "$exit_rank" 1 0
    if command -v "$PD_MPIRUN" >/dev/null 2>&1; then
        ends_with "mpirun -np $np: MPI_Abort(7)" 7 \
            pd_timeout "$PD_MPIRUN" $PD_MPIRUN_FLAGS -np "$np" "$fatal_check" abort
        ends_with "mpirun -np $np: rank 1 exits 0 without MPI_Finalize" nonzero \
            pd_timeout "$PD_MPIRUN" $PD_MPIRUN_FLAGS -np "$np" "$exit_rank" 1 0
    fi
    if command -v mpiexec.hydra >/dev/null 2>&1; then
        ends_with "mpiexec.hydra -np $np: MPI_Abort(7)" 7 \
            pd_timeout mpiexec.hydra -np "$np" "$fatal_check" abort
        ends_with "mpiexec.hydra -np $np: rank 1 exits 0 without MPI_Finalize" nonzero \
            pd_timeout mpiexec.hydra -np "$np" "$exit_rank" 1 0
    fi
    # PaddlePaddle-style: the test is the launcher and, unlike Paddle's,
    # stops no sibling, so a rank still connecting to a dead peer is
    # bounded by PDMPI_TIMEOUT (5 s here) rather than by the launcher.
    export PDMPI_TIMEOUT=5
    ends_with "PaddlePaddle np $np: MPI_Abort(7) ends every rank" \
        nonzero paddle_run master 127.0.0.1 "$np" "$fatal_check" abort
    check "PaddlePaddle np $np: the aborting rank names the call and code" \
        grep -q "called MPI_Abort(MPI_COMM_WORLD, 7)" "$PD_TMP/end"
    ends_with "PaddlePaddle np $np: rank 1 exits 0 without MPI_Finalize" \
        nonzero paddle_run master 127.0.0.1 "$np" "$exit_rank" 1 0
    unset PDMPI_TIMEOUT
done

# A rank that leaves right after MPI_Init while slower ranks are still
# connecting the world: they see it gone and end within seconds, rather
# than waiting PDMPI_TIMEOUT once for each peer they have yet to reach
# (ranks 2 and 3 run niced on a busy processor, so they are still
# connecting; without the watch over MPI_Init's connection one such run
# in three to eight took 25 s). Slowed so, under the sanitizers they may
# not reach the store within PDMPI_TIMEOUT at all: then rank 0 gives up
# on the world after 5 s and they on its store 5 s after they start, so
# the bound here is three timeouts.
slow_cpu=$(taskset -pc $$ 2>/dev/null | sed 's/.*[:,-] *//')
if [ "$(nproc)" -ge 2 ] && [ -n "$slow_cpu" ]; then
    taskset -c "$slow_cpu" sh -c 'while :; do :; done' &
    hog=$!
    trap 'kill $hog 2>/dev/null; rm -rf "$PD_TMP"' EXIT
    export PDMPI_TIMEOUT=5 PD_SLOW_RANKS="2 3" PD_SLOW_CPU=$slow_cpu
    PD_END_WITHIN=15
    for try in 1 2 3; do
        ends_with "PaddlePaddle np 4, ranks 2 and 3 slowed: rank 1 exits 0 right after MPI_Init (try $try)" \
            nonzero paddle_run master 127.0.0.1 4 "$exit_rank" 1 0
    done
    unset PDMPI_TIMEOUT PD_SLOW_RANKS PD_SLOW_CPU PD_END_WITHIN
    kill $hog
fi

kill "$(pgrep -f "free_port -l 60" | head -1)" 2>/dev/null
finish
