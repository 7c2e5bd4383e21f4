#!/usr/bin/python3
"""An MPI data-parallel stand-in: mpi4py Allreduce (sum) of --mib MiB of float32 a step.

Each step optionally computes for --compute-ms (numpy matrix products until that much time has
passed), then all-reduces a --mib MiB buffer in place, the way a data-parallel job all-reduces
its gradients. Rank 0 prints one line per measured step on stdout, flushed:

  {"schema": "contend.step/1", "step": 0, "samples": 64, "seconds": 0.1712}

samples: --batch x the communicator's size (the global batch the step stands for); seconds: the
step's wall time, compute and all-reduce. The --warmup-steps first steps are run but not printed.
The result is checked every step (every element must equal the sum of the ranks' contributions).

Launch with mpirun (ranks, world size and addresses come from Open MPI, not from RANK/WORLD_SIZE);
across network namespaces see scripts/netns-rsh. Exit status: 0 done, 1 a wrong sum, 2 bad
arguments; MPI errors abort the whole job (MPI_ERRORS_ARE_FATAL).
"""

import time

T_START = time.monotonic()

import argparse
import json
import statistics
import sys

import numpy as np
from mpi4py import MPI


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=float, default=4.0, help="MiB all-reduced a step (default 4)")
    p.add_argument("--batch", type=int, default=32, help="samples a rank's step stands for (default 32)")
    p.add_argument("--compute-ms", type=float, default=0.0, help="compute before each all-reduce, ms (default 0)")
    p.add_argument("--steps", type=int, default=20, help="measured (printed) steps (default 20)")
    p.add_argument("--warmup-steps", type=int, default=1, help="steps run before them, not printed (default 1)")
    a = p.parse_args()
    if a.mib <= 0 or a.batch < 1 or a.steps < 1 or a.warmup_steps < 0 or a.compute_ms < 0:
        p.error("--mib > 0, --batch and --steps >= 1, --warmup-steps and --compute-ms >= 0")
    return a


def compute(ms, a):
    """Matrix products on `a` until `ms` milliseconds have passed (a stand-in for forward and
    backward: busy, not asleep)."""
    deadline = time.perf_counter() + ms / 1e3
    while time.perf_counter() < deadline:
        a @ a


def main():
    args = parse_args()
    comm = MPI.COMM_WORLD
    rank, world = comm.Get_rank(), comm.Get_size()
    n = int(args.mib * 2**20) // 4
    grad = np.empty(n, dtype=np.float32)
    expected = world * (world + 1) / 2  # rank r contributes r + 1
    work = np.random.default_rng(rank).standard_normal((128, 128), dtype=np.float32)
    if rank == 0:
        print(f"mpi_allreduce[rank 0]: world {world}, {n * 4 / 2**20:.2f} MiB a step, "
              f"{MPI.Get_library_version().split(chr(0))[0].splitlines()[0]}; started {time.monotonic() - T_START:.2f} s "
              f"after the interpreter", file=sys.stderr, flush=True)

    times = []
    for i in range(args.warmup_steps + args.steps):
        grad.fill(rank + 1)
        t0 = time.perf_counter()
        if args.compute_ms > 0:
            compute(args.compute_ms, work)
        comm.Allreduce(MPI.IN_PLACE, grad, op=MPI.SUM)
        seconds = time.perf_counter() - t0
        if grad[0] != expected or grad[-1] != expected:
            print(f"mpi_allreduce[rank {rank}]: step {i}: sum {grad[0]}, expected {expected}",
                  file=sys.stderr, flush=True)
            comm.Abort(1)
        if i < args.warmup_steps:
            continue
        times.append(seconds)
        if rank == 0:
            print(json.dumps({"schema": "contend.step/1", "step": i - args.warmup_steps,
                              "samples": args.batch * world, "seconds": round(seconds, 6)}), flush=True)
    if rank == 0:
        print(f"mpi_allreduce[rank 0]: {len(times)} steps, median {statistics.median(times) * 1e3:.1f} ms",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
