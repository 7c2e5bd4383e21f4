#!/usr/bin/python3
"""Data-parallel training with torch.distributed (gloo) and DistributedDataParallel.

An MLP of --layers Linear layers (--hidden wide, the last one to --classes logits) learns to
classify synthetic samples the way a fixed random linear teacher does (cross-entropy); every rank
draws its own batches from a fixed seed, DDP all-reduces the gradients (about (layers - 1) x
hidden^2 x 4 bytes a step: 4.0 MiB with the defaults, printed at start), and SGD updates the
weights. Rank 0 prints one line per measured step on stdout, flushed as it ends:

  {"schema": "contend.step/1", "step": 0, "samples": 64, "seconds": 0.1834}

samples: the global batch (--batch x WORLD_SIZE); seconds: the step's wall time, from the step
before's line printed to this one's loss read, the all-reduce included (DDP's backward returns
when it is done): everything the loop does but print, as a training loop's elapsed time per
iteration is, and no two steps' times overlap. With --device-ms each step also waits that long after its
backward, a stand-in for the kernels of a GPU job (its CPU idle meanwhile). The --warmup-steps
first steps are run but not printed. Progress and the start-up times go to stderr.

Environment (as torchrun and contend set it): RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
(init_method env://). Inside a network namespace gloo also needs GLOO_SOCKET_IFNAME (the node's
link) or a hosts file mapping this machine's hostname to the node's address: without either it
binds to the hostname's address, 127.0.0.1 on Debian, and its peers' connections are refused.
Exit status: 0 done, 2 bad arguments or environment, 1 anything else (a peer's timeout included).
"""

import time

T_START = time.monotonic()  # before the heavy imports: the start-up report includes them

import argparse
import datetime
import json
import os
import statistics
import sys


def log(rank, message):
    print(f"ddp_train[rank {rank}]: {message}", file=sys.stderr, flush=True)


def usage_error(message):
    print(f"ddp_train: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def env_int(name):
    value = os.environ.get(name)
    if value is None:
        usage_error(f"{name} is not set (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT are required)")
    try:
        return int(value)
    except ValueError:
        usage_error(f"{name}={value!r} is not an integer")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hidden", type=int, default=512, help="width of every layer (default 512)")
    p.add_argument("--layers", type=int, default=5, help="Linear layers (default 5)")
    p.add_argument("--classes", type=int, default=16, help="outputs of the last layer (default 16)")
    p.add_argument("--batch", type=int, default=32, help="samples per rank per step (default 32)")
    p.add_argument("--steps", type=int, default=20, help="measured (printed) steps (default 20)")
    p.add_argument("--warmup-steps", type=int, default=1, help="steps run before them, not printed (default 1)")
    p.add_argument("--lr", type=float, default=0.5, help="SGD learning rate (default 0.5)")
    p.add_argument("--seed", type=int, default=1234, help="seed of the model, teacher and data (default 1234)")
    p.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP gradient bucket size in MiB (default 25)")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads per rank (default 1)")
    p.add_argument("--device-ms", type=float, default=0.0,
                   help="milliseconds each step also waits, as for a GPU's kernels (default 0)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the rendezvous and for any collective (default 60)")
    a = p.parse_args()
    if min(a.hidden, a.layers, a.classes, a.batch, a.steps, a.threads) < 1 or a.warmup_steps < 0 or a.timeout <= 0 \
            or not 0 <= a.device_ms < 1e6:
        p.error("sizes, --steps and --threads must be >= 1, --warmup-steps >= 0, --timeout > 0, "
                "--device-ms in [0, 1e6)")
    return a


def main():
    args = parse_args()
    rank, world = env_int("RANK"), env_int("WORLD_SIZE")
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(name):
            usage_error(f"{name} is not set (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT are required)")

    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    t_imported = time.monotonic()
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    t_joined = time.monotonic()

    torch.manual_seed(args.seed)  # the same initial weights and teacher on every rank
    layers = []
    for _ in range(args.layers - 1):
        layers += [nn.Linear(args.hidden, args.hidden), nn.ReLU()]
    layers.append(nn.Linear(args.hidden, args.classes))
    model = DistributedDataParallel(nn.Sequential(*layers), bucket_cap_mb=args.bucket_cap_mb)
    teacher = torch.randn(args.hidden, args.classes)
    data = torch.Generator().manual_seed(args.seed + 1 + rank)  # each rank its own samples
    pool = []
    for _ in range(8):  # a small fixed data set, cycled
        x = torch.randn(args.batch, args.hidden, generator=data)
        pool.append((x, (x @ teacher).argmax(dim=1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()

    grad_bytes = sum(p.numel() for p in model.parameters()) * 4
    if rank == 0:
        log(rank, f"world {world}, {grad_bytes / 2**20:.2f} MiB of gradients all-reduced a step, "
                  f"global batch {args.batch * world}; import torch {t_imported - T_START:.2f} s, "
                  f"init_process_group {t_joined - t_imported:.2f} s")

    times, losses = [], []
    t0 = time.perf_counter()
    for i in range(args.warmup_steps + args.steps):
        x, y = pool[i % len(pool)]
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()  # returns once DDP's all-reduce of every bucket has finished
        if args.device_ms:
            time.sleep(args.device_ms / 1e3)
        optimizer.step()
        losses.append(loss.item())
        seconds = time.perf_counter() - t0
        if i == 0 and rank == 0:
            log(rank, f"first step done {time.monotonic() - T_START:.2f} s after the interpreter started")
        if i >= args.warmup_steps:
            times.append(seconds)
            if rank == 0:
                print(json.dumps({"schema": "contend.step/1", "step": i - args.warmup_steps,
                                  "samples": args.batch * world, "seconds": round(seconds, 6)}), flush=True)
        t0 = time.perf_counter()  # the next step's time begins once this one's line is out

    if rank == 0:
        log(rank, f"{len(times)} steps, median {statistics.median(times) * 1e3:.1f} ms; "
                  f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # gloo's connect, timeout and peer-closed errors; the store's TimeoutError
        print(f"ddp_train[rank {os.environ.get('RANK', '?')}]: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
