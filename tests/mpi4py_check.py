"""mpi4py_check.py - what a Python trainer asks of MPI, through mpi4py.

Ranks, numpy buffer collectives (Allreduce, Bcast, Allgather,
Reduce_scatter), the pickle-based object calls (allgather, bcast,
send/recv, which receive through matched probes), Split, Dup,
Iallreduce + Wait, Barrier, and MPI.Exception for bad input. Every
answer is computed here from the rank and size alone. A plain mpi4py
program: it gives the same output under Open MPI. Rank 0 prints one
"ok N - ..." or "not ok N - ..." line per check once all ranks have
agreed, then "1..N"; the exit status is 1 when a check failed.
"""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
results = []


def check(description, passed):
    """Record a check that every rank made; it passes where all passed."""
    everywhere = comm.allreduce(1 if passed else 0, op=MPI.MIN) == 1
    results.append((everywhere, description))


check(f"Get_rank {rank} and Get_size {size} agree with every rank's view",
      comm.allgather(rank) == list(range(size)))

n = 1000
a = np.arange(n, dtype="f8") * (rank + 1)
s = np.empty_like(a)
comm.Allreduce(a, s, op=MPI.SUM)
check("numpy Allreduce(SUM) of 1000 doubles",
      np.array_equal(s, np.arange(n, dtype="f8") * (size * (size + 1) // 2)))

m = np.array([rank * 10 + 3], dtype="i4")
comm.Allreduce(MPI.IN_PLACE, m, op=MPI.MAX)
check("numpy Allreduce(IN_PLACE, MAX) of an int32", m[0] == (size - 1) * 10 + 3)

root = size - 1
b = np.arange(17, dtype="i8") * 7 if rank == root else np.zeros(17, dtype="i8")
comm.Bcast(b, root=root)
check("numpy Bcast from the last rank", np.array_equal(b, np.arange(17) * 7))

g = np.empty((size, 3), dtype="f4")
comm.Allgather(np.full(3, rank, dtype="f4"), g)
check("numpy Allgather", all(np.all(g[r] == r) for r in range(size)))

counts = [r + 1 for r in range(size)]
send = np.arange(sum(counts), dtype="f8") + rank
recv = np.empty(counts[rank], dtype="f8")
comm.Reduce_scatter(send, recv, recvcounts=counts, op=MPI.SUM)
start = sum(counts[:rank])
want = size * (np.arange(start, start + counts[rank], dtype="f8")) \
    + size * (size - 1) / 2
check("numpy Reduce_scatter with uneven counts", np.array_equal(recv, want))

objs = comm.allgather({"rank": rank, "name": f"r{rank}", "sq": [rank] * rank})
check("object allgather (all_gather_object)",
      objs == [{"rank": r, "name": f"r{r}", "sq": [r] * r}
               for r in range(size)])

obj = comm.bcast({"lr": 0.1, "layers": (3, 4)} if rank == 0 else None, root=0)
check("object bcast", obj == {"lr": 0.1, "layers": (3, 4)})

# A ring of object messages, then a large one, by source and by
# ANY_SOURCE: comm.recv probes with MPI_Mprobe and receives with MPI_Mrecv.
right, left = (rank + 1) % size, (rank - 1) % size
req = comm.isend(("hello", rank, list(range(rank))), dest=right, tag=11)
got = comm.recv(source=left, tag=11)
req.wait()
big = comm.sendrecv(np.full(300000, rank, dtype="i4"), dest=right, sendtag=12,
                    source=MPI.ANY_SOURCE, recvtag=12)
check("object send/recv around a ring, and a 1.2 MB object by ANY_SOURCE",
      got == ("hello", left, list(range(left)))
      and big.shape == (300000,) and np.all(big == left))

color = rank % 2
sub = comm.Split(color, key=-rank)
members = sub.allgather(rank)
check("Split by parity, ordered by descending rank",
      members == sorted([r for r in range(size) if r % 2 == color],
                        reverse=True) and sub.Get_size() == len(members))
sub.Free()

dup = comm.Dup()
total = dup.allreduce(rank + 1)
dup.Free()
check("Dup, an object allreduce on it, Free", total == size * (size + 1) // 2)

x = np.full(8, rank + 1, dtype="f8")
y = np.empty_like(x)
request = comm.Iallreduce(x, y, op=MPI.SUM)
request.Wait()
check("Iallreduce + Wait", np.all(y == size * (size + 1) / 2))

comm.Barrier()
check("Barrier", True)

# Bad input: an MPI.Exception with the class and a message, not a crash.
errors = []
for what, call in (
        ("a root out of range",
         lambda: comm.Bcast(np.zeros(1), root=size)),
        ("a destination out of range",
         lambda: comm.Send(np.zeros(1), dest=size + 3, tag=0)),
        ("a negative tag", lambda: comm.Send(np.zeros(1), dest=0, tag=-5))):
    try:
        call()
        errors.append(f"{what}: no exception")
    except MPI.Exception as e:
        if e.Get_error_class() not in (MPI.ERR_ROOT, MPI.ERR_RANK, MPI.ERR_TAG):
            errors.append(f"{what}: class {e.Get_error_class()}")
check("bad root, rank and tag raise MPI.Exception with MPI_ERR_ROOT/RANK/TAG"
      + (f" ({'; '.join(errors)})" if errors else ""), not errors)

if rank == 0:
    for i, (passed, description) in enumerate(results, 1):
        print(f"{'ok' if passed else 'not ok'} {i} - {description}")
    print(f"1..{len(results)}")
sys.exit(0 if all(p for p, _ in results) else 1)
