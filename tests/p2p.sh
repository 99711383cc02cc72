#!/bin/sh
# Point-to-point between the ranks of one host: p2p_check (order, a
# receive posted before a blocking one taking the first message, tags,
# wildcards, probes, zero-byte and 8 MiB messages, truncation, 80 large
# messages received in reverse, a full queue while the sender waits in a
# barrier, MPI_Cancel, matched probes, buffered and ready sends, a first
# receive on a fresh communicator) at np 1..4 through the shared-memory
# queues (large messages read from the sender's memory), with large
# messages forced through shared files (PDMPI_SHM_P2P=copy, what a kernel
# that forbids reading another process leaves), and over gloo
# (PDMPI_SHM_P2P=0), there also through gloo's asynchronous pairs
# (PDMPI_P2P_SOCKETS=0, where pdmpi cannot find its own sockets), and with
# no shared memory at all (PDMPI_SHM=0, as between hosts: a waiter looks
# for its message, then sleeps until the receiving thread wakes it); a sender
# blocked on a receiver that is killed; over gloo and in shared memory, a
# receiver whose sender is killed in the middle of a large message (in
# shared memory also one the sender packs as it goes); a
# /dev/shm with no room for the queues; a bad setting refused.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/launch_lib.sh"
pd_tmpdir

p2p_check="$top_builddir/tests/p2p_check"
shm_check="$top_builddir/tests/shm_check"

for p2p in 1 copy 0; do
    for np in $PD_SIZES; do
        check_tap "p2p_check at np $np, PDMPI_SHM_P2P=$p2p" \
            env PDMPI_SHM_P2P="$p2p" "$PDMPIRUN" -np "$np" "$p2p_check"
    done
done
for np in $PD_SIZES; do
    check_tap "p2p_check at np $np, PDMPI_SHM=0" \
        env PDMPI_SHM=0 "$PDMPIRUN" -np "$np" "$p2p_check"
    check_tap "p2p_check at np $np, PDMPI_SHM_P2P=0 PDMPI_P2P_SOCKETS=0" \
        env PDMPI_SHM_P2P=0 PDMPI_P2P_SOCKETS=0 "$PDMPIRUN" -np "$np" \
        "$p2p_check"
done

# A sender waiting for its receiver to take a 4 MiB message learns that
# the receiver was killed within about a second. (Through shared files a
# send is complete once its file is written: nothing waits.)
for how in send isend; do
    PDMPI_TIMEOUT=60 timed \
        "PaddlePaddle-style np 2: MPI_$how of 4 MiB to a rank that is killed" \
        5 "rank 1: MPI_[A-Za-z]+ on MPI_COMM_WORLD: .*rank 0 \([^,]*, pid [0-9]+\), which this send goes to, is gone" \
        paddle_run master 127.0.0.1 2 "$shm_check" --orphan "$how"
done

# Between hosts (gloo, PDMPI_SHM=0), a sender that dies 100 ms into a
# 2 GiB message its receiver is reading straight into the posted buffer:
# the receive fails, naming the rank and the message cut short.
PDMPI_SHM=0 PDMPI_TIMEOUT=60 timed \
    "PaddlePaddle-style np 2, gloo: a sender killed in the middle of 2 GiB" \
    10 "rank 1: MPI_Recv on MPI_COMM_WORLD: .*the connection to rank 0 closed while its 2147483648-byte message was being received" \
    paddle_run master 127.0.0.1 2 "$shm_check" --orphan midway
# The same with every other int of the 2 GiB: the sender packs it as it
# writes and the receiver unpacks each piece as it reads.
PDMPI_SHM=0 PDMPI_TIMEOUT=60 timed \
    "PaddlePaddle-style np 2, gloo: a sender killed while it writes 1 GiB packed" \
    10 "rank 1: MPI_Recv on MPI_COMM_WORLD: .*the connection to rank 0 closed while its 1073741824-byte message was being received" \
    paddle_run master 127.0.0.1 2 "$shm_check" --orphan midway-vector

# The same with every other int of the 2 GiB, which the sender packs
# while its receiver reads the pieces: the receive fails, naming the
# sender, instead of waiting for the next piece.
# The sender may die between packing a piece and the receiver's read of
# it: then the read finds it gone.
PDMPI_TIMEOUT=60 timed \
    "PaddlePaddle-style np 2, shared memory: a sender killed while it packs 1 GiB" \
    10 "rank 1: MPI_Recv on MPI_COMM_WORLD: .*receiving 1073741824 bytes from rank 0 \(tag 7\): the sender \(pid [0-9]+\) is gone" \
    paddle_run master 127.0.0.1 2 "$shm_check" --orphan midway-vector

# On one host the same sender dies while it and its receiver copy the
# 2 GiB between them (the receiver offers it pieces to write): the
# receive fails, naming the rank, instead of waiting for the dead
# sender's piece.
PDMPI_TIMEOUT=60 timed \
    "PaddlePaddle-style np 2, shared memory: a sender killed in the middle of 2 GiB" \
    10 "rank 1: MPI_Recv on MPI_COMM_WORLD: .*receiving 2147483648 bytes from rank 0 \(tag 7\): the sender \(pid [0-9]+\) is gone" \
    paddle_run master 127.0.0.1 2 "$shm_check" --orphan midway

# A /dev/shm with no room for the queues (1 MiB; np 4 wants 3 MiB of
# rings): point-to-point goes over gloo, said once, and still works.
if small_shm_ok; then
    small_shm 1m "$PDMPIRUN" -np 4 "$p2p_check" > "$PD_TMP/small" 2>&1
    check_ran "np 4, 1 MiB /dev/shm: p2p_check passes" $? "$PD_TMP/small"
    check "np 4, 1 MiB /dev/shm: one warning that point-to-point goes over gloo" \
        sh -c "[ \$(grep -c 'point-to-point between the ranks of this host goes over gloo: /dev/shm has no room' '$PD_TMP/small') -eq 1 ]"
else
    echo "# SKIP a small /dev/shm: needs root and a mount namespace"
fi

check "PDMPI_P2P_SOCKETS=yes is refused with a message" \
    sh -c "env PDMPI_P2P_SOCKETS=yes '$top_builddir/tests/world_check' 2>&1 |
           grep -q 'PDMPI_P2P_SOCKETS=yes'"
check "PDMPI_SHM_P2P=2 is refused with a message" \
    sh -c "env PDMPI_SHM_P2P=2 '$top_builddir/tests/world_check' 2>&1 |
           grep -q 'PDMPI_SHM_P2P=2 is not one of 0, 1, copy'"

finish
