#!/usr/bin/env python3
"""A small data-parallel trainer on mpi4py and numpy: examples/trainer.c in
Python.

It fits a linear model y = w.x + b by minibatch SGD on a synthetic
dataset, the way data-parallel trainers do:
  - rank 0 draws the initial weights and broadcasts them (Bcast);
  - each step's global batch of B samples is cut into contiguous shards,
    one per rank (B need not divide evenly);
  - each rank sums the gradient over its shard, the sums are added with
    Allreduce(IN_PLACE, SUM) and divided by B;
  - every rank applies the same SGD update to its own copy of the weights;
  - the per-rank loss sums are exchanged as Python objects (allgather, as
    PaddlePaddle's all_gather_object does) and added in rank order.
At the end rank 0 repeats the training in one process over the same
batches and compares the weights, and every rank compares a hash of its
weights with the others': they must be bitwise identical.

Run it on pdmpi unchanged, with mpi4py built against Open MPI:
    pdmpirun --dropin -np 4 python3 examples/trainer.py
Options: --steps N --batch B --features F --lr X
"""
import argparse
import hashlib
import sys

import numpy as np
from mpi4py import MPI

DATASET_SIZE = 8192
DATA_SEED = 0x5EED2024
INIT_SEED = 0x1417


def dataset(features):
    """Every sample of the dataset, the same on every rank."""
    rng = np.random.default_rng(DATA_SEED)
    true_params = rng.standard_normal(features + 1)
    x = rng.standard_normal((DATASET_SIZE, features))
    y = x @ true_params[:-1] + true_params[-1]
    y += 0.1 * rng.standard_normal(DATASET_SIZE)
    return x, y


def batch_indices(step, batch):
    """Step s uses samples s*B .. s*B+B-1, wrapping around like epochs."""
    return (step * batch + np.arange(batch)) % DATASET_SIZE


def shard_of(batch, rank, size):
    """Contiguous shards; the first B % size ranks take one sample more."""
    base, extra = divmod(batch, size)
    first = rank * base + min(rank, extra)
    return first, base + (1 if rank < extra else 0)


def gradient(params, x, y):
    """Summed squared-error gradient and loss (0.5 err^2) over x, y."""
    err = x @ params[:-1] + params[-1] - y
    grad = np.empty_like(params)
    grad[:-1] = x.T @ err
    grad[-1] = err.sum()
    return grad, 0.5 * float(err @ err)


def initial_params(features):
    return 0.1 * np.random.default_rng(INIT_SEED).standard_normal(features + 1)


def train_distributed(comm, opts, x, y):
    rank, size = comm.Get_rank(), comm.Get_size()
    first, count = shard_of(opts.batch, rank, size)
    params = (initial_params(opts.features) if rank == 0
              else np.empty(opts.features + 1))
    comm.Bcast(params, root=0)
    for step in range(opts.steps):
        idx = batch_indices(step, opts.batch)[first:first + count]
        grad, local_loss = gradient(params, x[idx], y[idx])
        comm.Allreduce(MPI.IN_PLACE, grad, op=MPI.SUM)
        params -= opts.lr * grad / opts.batch
        # Every rank adds the same numbers in rank order: equal bits.
        loss = sum(comm.allgather(local_loss)) / opts.batch
        if rank == 0 and (step % max(opts.steps // 10, 1) == 0
                          or step == opts.steps - 1):
            print(f"step {step:5d}  loss {loss:.6f}", flush=True)
    return params


def train_single_process(opts, x, y):
    params = initial_params(opts.features)
    for step in range(opts.steps):
        idx = batch_indices(step, opts.batch)
        grad, _ = gradient(params, x[idx], y[idx])
        params -= opts.lr * grad / opts.batch
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.05)
    comm = MPI.COMM_WORLD
    # Rank 0 reads the options and broadcasts them as an object, so every
    # rank trains with the same ones.
    opts = parser.parse_args() if comm.Get_rank() == 0 else None
    opts = comm.bcast(opts, root=0)
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank == 0:
        print(f"# linear regression: {size} ranks, {opts.steps} steps, "
              f"batch {opts.batch}, {opts.features} features, lr {opts.lr}, "
              f"on {MPI.Get_library_version().splitlines()[0]}", flush=True)

    x, y = dataset(opts.features)
    start = MPI.Wtime()
    params = train_distributed(comm, opts, x, y)
    if rank == 0:
        print(f"# trained in {MPI.Wtime() - start:.3f} s", flush=True)

    ok = True
    if rank == 0:
        reference = train_single_process(opts, x, y)
        diff = float(np.max(np.abs(params - reference)))
        tolerance = 1e-9 * (1.0 + float(np.max(np.abs(reference))))
        ok = diff <= tolerance
        print(f"{'final weights match' if ok else 'MISMATCH: final weights differ from'}"
              f" single-process run (max abs diff {diff:.3g}, tolerance "
              f"{tolerance:.3g})", flush=True)
    ok = comm.bcast(ok, root=0)

    hashes = comm.allgather(hashlib.sha256(params.tobytes()).hexdigest()[:16])
    identical = all(h == hashes[0] for h in hashes)
    if rank == 0:
        print(f"all {size} ranks hold bitwise-identical weights (hash {hashes[0]})"
              if identical else f"MISMATCH: weight hashes differ: {hashes}",
              flush=True)
    comm.Barrier()
    return 0 if ok and identical else 1


if __name__ == "__main__":
    sys.exit(main())
