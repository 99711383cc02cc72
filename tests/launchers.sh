#!/bin/sh
# World formation under every launcher, with the same programs: Open MPI's
# mpirun (PMIx), MPICH's mpiexec in FD and port mode (PMI-1), PaddlePaddle
# environments (new PADDLE_MASTER and legacy PADDLE_TRAINER_ENDPOINTS), a
# Slurm step without PMI, each at every size; then a stale process of
# another job knocking at a running job's store.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/launch_lib.sh"
pd_tmpdir

world_check="$top_builddir/tests/world_check"
coll_check="$top_builddir/tests/coll_check"

if command -v "$PD_MPIRUN" >/dev/null 2>&1; then
    for np in $PD_SIZES; do
        expect_world "mpirun -np $np" pmix "$np" "$np" 1 \
            pd_timeout "$PD_MPIRUN" $PD_MPIRUN_FLAGS -np "$np" "$world_check"
        check_tap "mpirun -np $np: collectives" \
            pd_timeout "$PD_MPIRUN" $PD_MPIRUN_FLAGS -np "$np" "$coll_check" --big 65536
    done
else
    echo "# SKIP mpirun: Open MPI's mpirun is not installed"
fi

if command -v mpiexec.hydra >/dev/null 2>&1; then
    for mode in fd port; do
        flags=""
        [ "$mode" = port ] && flags="-pmi-port"
        for np in $PD_SIZES; do
            expect_world "mpiexec.hydra $flags -np $np" pmi1 "$np" "$np" 1 \
                pd_timeout mpiexec.hydra $flags -np "$np" "$world_check"
            check_tap "mpiexec.hydra ($mode mode) -np $np: collectives" \
                pd_timeout mpiexec.hydra $flags -np "$np" "$coll_check" --big 65536
        done
    done
else
    echo "# SKIP mpiexec.hydra: MPICH is not installed"
fi

for np in $PD_SIZES; do
    expect_world "PaddlePaddle PADDLE_MASTER, np $np" paddle "$np" "$np" 1 \
        paddle_run master 127.0.0.1 "$np" "$world_check"
    check_tap "PaddlePaddle PADDLE_MASTER, np $np: collectives" \
        paddle_run master 127.0.0.1 "$np" "$coll_check" --big 65536
    expect_world "PaddlePaddle PADDLE_TRAINER_ENDPOINTS, np $np" paddle \
        "$np" "$np" 1 paddle_run endpoints 127.0.0.1 "$np" "$world_check"
    check_tap "PaddlePaddle PADDLE_TRAINER_ENDPOINTS, np $np: collectives" \
        paddle_run endpoints 127.0.0.1 "$np" "$coll_check" --big 65536
    expect_world "Slurm step, np $np" slurm "$np" "$np" 1 \
        slurm_run "$np" "$world_check"
done

# A leftover process of another job (other PADDLE_JOB_ID, so another job
# key) that reaches a running job's store is refused with a log line and
# fails; the job goes on and completes. The stale process starts first
# and keeps knocking (at most a second apart) until the job's store is
# up. The job's 300000 allreduces go over gloo (PDMPI_SHM=0) so that it
# lasts seconds (about 4 s here, 13 us each): 20000 ended in a quarter of
# a second, often before the stale process's next knock.
port=$("$PD_FREE_PORT")
PDMPI_TIMEOUT=20 PADDLE_JOB_ID=stale-b PADDLE_TRAINER_ID=1 \
    PADDLE_TRAINERS_NUM=2 PADDLE_MASTER=127.0.0.1:$port \
    pd_timeout "$world_check" > "$PD_TMP/stale" 2>&1 &
stale=$!
sleep 0.5
PDMPI_SHM=0 PADDLE_JOB_ID=job-a PD_PADDLE_PORT=$port \
    paddle_run master 127.0.0.1 2 "$world_check" 300000 > "$PD_TMP/job" 2>&1
job_rc=$?
wait "$stale"
stale_rc=$?
cat "$PD_TMP/stale" "$PD_TMP/job" | sed "s/^/# /"
check "stale process of another job is refused (exit $stale_rc)" \
    sh -c "[ $stale_rc -ne 0 ] && grep -q 'job key' '$PD_TMP/stale'"
check "the store logs the refusal" grep -q "refused" "$PD_TMP/job"
check "the running job completes (exit $job_rc)" \
    sh -c "[ $job_rc -eq 0 ] && [ \$(grep -c ': ok\$' '$PD_TMP/job') -eq 2 ]"

finish
