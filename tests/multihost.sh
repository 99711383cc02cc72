#!/bin/sh
# One world across two hosts: two network namespaces joined by a veth
# pair, on addresses this test creates. The same world_check and
# coll_check programs run through pdmpirun --nnodes 2 and through
# PaddlePaddle-style variables (2 + 2 and 3 + 1 ranks); local ranks,
# local sizes, host counts and MPI_COMM_TYPE_SHARED must follow the hosts;
# pdmpirun --verbose names a host that never joins.
# Needs root and a kernel that allows network namespaces; skipped with the
# reason otherwise.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/launch_lib.sh"

world_check="$top_builddir/tests/world_check"
coll_check="$top_builddir/tests/coll_check"
shm_check="$top_builddir/tests/shm_check"

PD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pdmpi-test.XXXXXX")
tag=$$
ns_a=pdmpi-a-$tag
ns_b=pdmpi-b-$tag
cleanup() {
    ip netns del "$ns_a" 2>/dev/null
    ip netns del "$ns_b" 2>/dev/null
    rm -rf "$PD_TMP"
}
trap cleanup EXIT

skip() {
    echo "# SKIP multi-host tests: $*"
    echo "1..0 # SKIP $*"
    exit 77
}

[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
ip netns add "$ns_a" 2> "$PD_TMP/ns" || skip "the kernel refuses: $(cat "$PD_TMP/ns")"
ip netns add "$ns_b" || skip "the kernel refuses a second namespace"

# A private /24 of our own, picked from the pid so parallel runs differ.
net=10.$((200 + tag % 50)).$((tag / 50 % 250)).
addr_a=${net}1
addr_b=${net}2
ip link add "pdva$tag" type veth peer name "pdvb$tag" ||
    skip "cannot create a veth pair"
ip link set "pdva$tag" netns "$ns_a"
ip link set "pdvb$tag" netns "$ns_b"
ip -n "$ns_a" addr add "$addr_a/24" dev "pdva$tag"
ip -n "$ns_b" addr add "$addr_b/24" dev "pdvb$tag"
for ns in "$ns_a" "$ns_b"; do
    ip -n "$ns" link set lo up
done
ip -n "$ns_a" link set "pdva$tag" up
ip -n "$ns_b" link set "pdvb$tag" up
echo "# hosts: $ns_a at $addr_a, $ns_b at $addr_b"

# pdmpirun_2hosts PROGRAM ARGS...: pdmpirun --nnodes 2, 2 ranks per host.
pdmpirun_2hosts() {
    port=$(ip netns exec "$ns_a" "$PD_FREE_PORT" "$addr_a")
    ip netns exec "$ns_a" timeout -k 5 "$PD_TEST_TIMEOUT" "$PDMPIRUN" \
        --nnodes 2 --node-rank 0 --master "$addr_a:$port" -np 2 "$@" &
    host0=$!
    ip netns exec "$ns_b" timeout -k 5 "$PD_TEST_TIMEOUT" "$PDMPIRUN" \
        --nnodes 2 --node-rank 1 --master "$addr_a:$port" -np 2 "$@"
    rc1=$?
    wait "$host0" && [ "$rc1" -eq 0 ]
}

expect_world "pdmpirun --nnodes 2 -np 2" pdmpirun 4 2 2 \
    pdmpirun_2hosts "$world_check"
check_tap "pdmpirun --nnodes 2 -np 2: collectives" \
    pdmpirun_2hosts "$coll_check" --big 65536
# Calls of derived datatypes larger than a segment between the hosts:
# moved a segment at a time, every rank's peak memory checked.
check_tap "pdmpirun --nnodes 2 -np 2: 54 MB vectors in segments" \
    pdmpirun_2hosts "$top_builddir/tests/datatypes_check" --apart
# Files both hosts see (the namespaces share the file system).
check_tap "pdmpirun --nnodes 2 -np 2: files" \
    pdmpirun_2hosts "$top_builddir/tests/file_check" "$PD_TMP"

# The short last batch across hosts: host B's ranks allreduce 1000
# elements, host A's 1024. Each host agrees in shared memory; the leaders'
# gloo step must not abort a process (it did, with SIGABRT in gloo's
# transport thread): the leaders fail naming both calls, the others with
# them, within a few seconds, with and without PDMPI_CHECK.
for checking in 0 1; do
    start=$(date +%s)
    PDMPI_CHECK=$checking PDMPI_TIMEOUT=30 \
        pdmpirun_2hosts "$shm_check" --uneven 2 > "$PD_TMP/uneven" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    grep -v '^shm_check: rank' "$PD_TMP/uneven" | sed 's/^/# /' | head -6
    check "2 hosts, uneven last batch, PDMPI_CHECK=$checking: exit $rc in ${took}s, no abort" \
        sh -c "[ $rc -ne 0 ] && [ $took -le 5 ] &&
               ! grep -Eq 'SIGABRT|terminate called' '$PD_TMP/uneven'"
    check "2 hosts, uneven last batch, PDMPI_CHECK=$checking: both calls named" \
        grep -Eq "rank [0-3]:? (is in allreduce|MPI_Allreduce) of 4(096|000) bytes.*rank [0-3]:? (in allreduce|MPI_Allreduce) of 4(000|096) bytes" \
        "$PD_TMP/uneven"
done

# The store listens on the master address's interface only: host A's
# loopback does not reach it. (Host 0 waits for host 1, which is not
# started, for PDMPI_TIMEOUT; the listener is looked at meanwhile.)
port=$(ip netns exec "$ns_a" "$PD_FREE_PORT" "$addr_a")
PDMPI_TIMEOUT=4 ip netns exec "$ns_a" timeout -k 5 20 "$PDMPIRUN" \
    --nnodes 2 --node-rank 0 --master "$addr_a:$port" -np 1 "$world_check" \
    > "$PD_TMP/bind" 2>&1 &
waiter=$!
listening=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
    listening=$(ip netns exec "$ns_a" ss -Hltn "sport = :$port" | awk '{print $4}')
    [ -n "$listening" ] && break
    sleep 0.2
done
echo "# store listening at: $listening"
check "the store listens on the master's address alone ($listening)" \
    [ "$listening" = "$addr_a:$port" ]
wait "$waiter"

# --verbose on host 0 of a job whose host 1 never starts: within a
# second or two it names host 1 and its ranks as missing.
port=$(ip netns exec "$ns_a" "$PD_FREE_PORT" "$addr_a")
PDMPI_TIMEOUT=60 ip netns exec "$ns_a" timeout -k 5 4 "$PDMPIRUN" --verbose \
    --nnodes 2 --node-rank 0 --master "$addr_a:$port" -np 2 "$world_check" \
    > "$PD_TMP/census" 2>&1
check "--verbose names the host that never joined (host 1: ranks 2, 3)" \
    grep -q "^pdmpirun: world forming, [0-9.]* s: 2 of 4 ranks reached the store; host 0: 2 of 2, host 1: 0 of 2 (waiting for rank 2, 3)$" "$PD_TMP/census"

# PDMPI_JOB_SECRET: the same on both hosts, the job forms; different,
# host 1's ranks are refused by the store as another job's.
export PDMPI_JOB_SECRET=s3cret
expect_world "pdmpirun --nnodes 2, PDMPI_JOB_SECRET on both hosts" \
    pdmpirun 4 2 2 pdmpirun_2hosts "$world_check"
unset PDMPI_JOB_SECRET
port=$(ip netns exec "$ns_a" "$PD_FREE_PORT" "$addr_a")
PDMPI_JOB_SECRET=one PDMPI_TIMEOUT=10 ip netns exec "$ns_a" timeout -k 5 30 \
    "$PDMPIRUN" --nnodes 2 --node-rank 0 --master "$addr_a:$port" -np 2 \
    "$world_check" > "$PD_TMP/secret0" 2>&1 &
host0=$!
PDMPI_JOB_SECRET=other PDMPI_TIMEOUT=10 ip netns exec "$ns_b" timeout -k 5 30 \
    "$PDMPIRUN" --nnodes 2 --node-rank 1 --master "$addr_a:$port" -np 2 \
    "$world_check" > "$PD_TMP/secret1" 2>&1
rc=$?
kill "$host0" 2>/dev/null
wait "$host0"
sed 's/^/# /' "$PD_TMP/secret1" | head -3
check "another PDMPI_JOB_SECRET on host 1: refused as another job (exit $rc)" \
    sh -c "[ $rc -ne 0 ] && grep -q 'wrong job key' '$PD_TMP/secret1'"

# Host 1 started with another -np: both hosts' ranks fail at once saying
# the sizes differ (they read as another job before).
port=$(ip netns exec "$ns_a" "$PD_FREE_PORT" "$addr_a")
start=$(date +%s)
PDMPI_TIMEOUT=20 ip netns exec "$ns_a" timeout -k 5 40 "$PDMPIRUN" \
    --nnodes 2 --node-rank 0 --master "$addr_a:$port" -np 2 "$world_check" \
    > "$PD_TMP/np0" 2>&1 &
host0=$!
PDMPI_TIMEOUT=20 ip netns exec "$ns_b" timeout -k 5 40 "$PDMPIRUN" \
    --nnodes 2 --node-rank 1 --master "$addr_a:$port" -np 3 "$world_check" \
    > "$PD_TMP/np1" 2>&1
rc1=$?
wait "$host0"
rc0=$?
took=$(($(date +%s) - start))
sed 's/^/# /' "$PD_TMP/np1" | head -2
check "-np 2 on host 0, -np 3 on host 1: both fail within 5 s (exit $rc0, $rc1, ${took}s)" \
    sh -c "[ $rc0 -ne 0 ] && [ $rc1 -ne 0 ] && [ $took -le 5 ]"
check "-np 2 on host 0, -np 3 on host 1: the sizes are said to differ" \
    sh -c "grep -q 'started for worlds of different sizes: rank [0-9]* for [46] ranks, rank [0-9]* for [46]' '$PD_TMP/np0' &&
           grep -q 'started for worlds of different sizes' '$PD_TMP/np1'"

PD_RANK_NETNS="$ns_a $ns_a $ns_b $ns_b"
PD_RANK_ADDRS="$addr_a $addr_a $addr_b $addr_b"
export PD_RANK_NETNS PD_RANK_ADDRS
expect_world "PaddlePaddle PADDLE_MASTER, 2 + 2" paddle 4 2 2 \
    paddle_run master "$addr_a" 4 "$world_check"
expect_world "PaddlePaddle PADDLE_TRAINER_ENDPOINTS, 2 + 2" paddle 4 2 2 \
    paddle_run endpoints "$addr_a" 4 "$world_check"
check_tap "PaddlePaddle 2 + 2: collectives" \
    paddle_run master "$addr_a" 4 "$coll_check" --big 65536

# A blocking receive from a rank of the other host that dies (SIGKILL):
# the store no longer sees its connection, and the receive fails naming
# it within about 2 s (rank 0, which hosts the store, stays).
PD_RANK_NETNS="$ns_a $ns_a $ns_b"
PD_RANK_ADDRS="$addr_a $addr_a $addr_b"
for how in recv any; do
    start=$(date +%s)
    PDMPI_TIMEOUT=60 paddle_run master "$addr_a" 3 "$shm_check" --orphan "$how" 2 1 \
        > "$PD_TMP/orphan" 2>&1
    took=$(($(date +%s) - start))
    grep -v '^shm_check: rank' "$PD_TMP/orphan" | sed 's/^/# /' | head -3
    check "2 hosts: MPI_Recv ($how) from a rank of the other host that dies: named (${took}s for the whole run)" \
        sh -c "[ $took -le 15 ] && grep -Eq 'rank 2 \(another host, pid [0-9]+\), which this receive waits for, is gone' '$PD_TMP/orphan'"
done

# The same with the store's own rank: rank 0 (host A), which serves the
# store under PaddlePaddle's variables, dies while rank 2 (host B) waits
# to receive from it; the store that refuses connections tells it.
start=$(date +%s)
PDMPI_TIMEOUT=60 paddle_run master "$addr_a" 3 "$shm_check" --orphan recv 0 2 \
    > "$PD_TMP/orphan0" 2>&1
took=$(($(date +%s) - start))
grep -v '^shm_check: rank' "$PD_TMP/orphan0" | sed 's/^/# /' | head -3
check "2 hosts: MPI_Recv from rank 0, the store's host, that dies: named with the store (${took}s for the whole run)" \
    sh -c "[ $took -le 15 ] && grep -Eq 'rank 2: MPI_Recv on MPI_COMM_WORLD: .*rank 0 \(another host, pid [0-9]+\), which this receive waits for, is gone: .*store' '$PD_TMP/orphan0'"

PD_RANK_NETNS="$ns_a $ns_a $ns_a $ns_b"
PD_RANK_ADDRS="$addr_a $addr_a $addr_a $addr_b"
expect_world "PaddlePaddle PADDLE_MASTER, 3 + 1" paddle 4 "" 2 \
    paddle_run master "$addr_a" 4 "$world_check"
check_tap "PaddlePaddle 3 + 1: collectives" \
    paddle_run master "$addr_a" 4 "$coll_check" --big 65536

# A master on loopback cannot serve two hosts: the ranks of the other host
# fail naming the address and where it came from, within PDMPI_TIMEOUT.
start=$(date +%s)
PDMPI_TIMEOUT=3 paddle_run master 127.0.0.1 4 "$world_check" > "$PD_TMP/lo" 2>&1
rc=$?
took=$(($(date +%s) - start))
check "master on loopback across hosts: error in ${took}s (exit $rc)" \
    sh -c "[ $rc -ne 0 ] && [ $took -le 15 ] &&
           grep -q 'cannot reach the rendezvous store at 127.0.0.1:[0-9]* (from PADDLE_MASTER)' '$PD_TMP/lo'"
unset PD_RANK_NETNS PD_RANK_ADDRS

finish
