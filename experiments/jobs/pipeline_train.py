#!/usr/bin/python3
"""Pipeline-parallel training over torch.distributed point-to-point (gloo).

Rank r of WORLD_SIZE holds stage r of an MLP (--layers-per-stage Linear layers, --hidden wide; the
last rank's last one to --classes logits). Each step splits the global batch into --micro-batches
micro-batches of --micro-batch samples; activations go forward to rank r+1 and gradients back to
rank r-1 (micro-batch x hidden x 4 bytes each way per micro-batch and link: 128 KiB with the
defaults), every stage runs a real backward, and each stage's SGD step follows its last backward
(a synchronous flush: the same weights for every micro-batch of a step). The last rank computes
the loss (cross-entropy against the labels of a fixed random linear teacher); rank 0 and the last
rank draw the same synthetic samples from --seed. The losses equal those of the same model
trained in one process.

Schedules (--schedule): "1f1b" (default): stage r runs min(WORLD_SIZE - r - 1, micro-batches)
forwards, then alternates one forward and one backward, then the remaining backwards (PipeDream-
flush); "gpipe": every forward, then every backward. Sends are non-blocking (isend), receives
blocking, one tag per direction, so neither schedule can deadlock.

Output convention: rank 0 prints one line per measured step on stdout, flushed as it ends:

  {"schema": "contend.step/1", "step": 0, "samples": 512, "seconds": 0.0894}

Rank 0 is the stage whose step spans the whole pipeline: it sends the first activation and
receives the last gradient, so its step time (first forward to the end of its optimizer step)
includes the fill, the drain and every transfer. samples: the global batch, micro-batches x
micro-batch. The --warmup-steps first steps are run but not printed. The last rank reports the
loss on stderr.

Environment (as torchrun and contend set it): RANK, WORLD_SIZE (>= 2), MASTER_ADDR, MASTER_PORT
(init_method env://); in a network namespace also GLOO_SOCKET_IFNAME or a hosts file that maps
the hostname to the node's address (see ddp_train.py). Exit status: 0 done, 2 bad arguments or
environment, 1 anything else (a peer's timeout included).
"""

import time

T_START = time.monotonic()  # before the heavy imports: the start-up report includes them

import argparse
import datetime
import json
import os
import statistics
import sys

ACTIVATION_TAG = 1  # rank r -> r+1
GRADIENT_TAG = 2    # rank r+1 -> r


def log(rank, message):
    print(f"pipeline_train[rank {rank}]: {message}", file=sys.stderr, flush=True)


def usage_error(message):
    print(f"pipeline_train: {message}", file=sys.stderr, flush=True)
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
    p.add_argument("--layers-per-stage", type=int, default=2, help="Linear layers per rank (default 2)")
    p.add_argument("--classes", type=int, default=16, help="outputs of the last stage (default 16)")
    p.add_argument("--micro-batch", type=int, default=64, help="samples per micro-batch (default 64)")
    p.add_argument("--micro-batches", type=int, default=8, help="micro-batches per step (default 8)")
    p.add_argument("--schedule", choices=("1f1b", "gpipe"), default="1f1b", help="(default 1f1b)")
    p.add_argument("--steps", type=int, default=20, help="measured (printed) steps (default 20)")
    p.add_argument("--warmup-steps", type=int, default=1, help="steps run before them, not printed (default 1)")
    p.add_argument("--lr", type=float, default=0.5, help="SGD learning rate (default 0.5)")
    p.add_argument("--seed", type=int, default=1234, help="seed of the model, teacher and data (default 1234)")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads per rank (default 1)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the rendezvous and for any transfer (default 60)")
    a = p.parse_args()
    if min(a.hidden, a.classes, a.layers_per_stage, a.micro_batch, a.micro_batches, a.steps, a.threads) < 1 \
            or a.warmup_steps < 0 or a.timeout <= 0:
        p.error("sizes, --steps and --threads must be >= 1, --warmup-steps >= 0, --timeout > 0")
    return a


def schedule(kind, rank, world, m):
    """The stage's order of work for one step: ("F", i) and ("B", i) for micro-batch i."""
    if kind == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    warm = min(world - rank - 1, m)
    order = [("F", i) for i in range(warm)]
    for i in range(m - warm):
        order += [("F", warm + i), ("B", i)]
    return order + [("B", i) for i in range(m - warm, m)]


def main():
    args = parse_args()
    rank, world = env_int("RANK"), env_int("WORLD_SIZE")
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(name):
            usage_error(f"{name} is not set (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT are required)")
    if world < 2:
        usage_error("a pipeline needs WORLD_SIZE >= 2")

    import torch
    import torch.distributed as dist
    from torch import nn

    t_imported = time.monotonic()
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    t_joined = time.monotonic()

    first, last = rank == 0, rank == world - 1
    torch.manual_seed(args.seed + rank)
    layers = []
    for i in range(args.layers_per_stage):
        if last and i + 1 == args.layers_per_stage:
            layers.append(nn.Linear(args.hidden, args.classes))
        else:
            layers += [nn.Linear(args.hidden, args.hidden), nn.ReLU()]
    stage = nn.Sequential(*layers)
    optimizer = torch.optim.SGD(stage.parameters(), lr=args.lr)
    m, shape = args.micro_batches, (args.micro_batch, args.hidden)

    pool = []  # rank 0 needs the inputs, the last rank the targets: both draw the same samples
    if first or last:
        g = torch.Generator().manual_seed(args.seed)
        teacher = torch.randn(args.hidden, args.classes, generator=g)
        for _ in range(4 * m):
            x = torch.randn(*shape, generator=g)
            pool.append((x, (x @ teacher).argmax(dim=1)))

    if first:
        log(rank, f"{world} stages, {args.schedule}, {m} micro-batches of {args.micro_batch}, "
                  f"{args.micro_batch * args.hidden * 4 / 2**10:.0f} KiB per transfer; "
                  f"import torch {t_imported - T_START:.2f} s, init_process_group {t_joined - t_imported:.2f} s")

    order = schedule(args.schedule, rank, world, m)
    times, losses = [], []
    for step in range(args.warmup_steps + args.steps):
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        inputs, outputs, sends, step_loss = {}, {}, [], 0.0
        for kind, i in order:
            if kind == "F":
                if first:
                    x = pool[(step * m + i) % len(pool)][0]
                else:
                    x = torch.empty(shape)
                    dist.recv(x, src=rank - 1, tag=ACTIVATION_TAG)
                    x.requires_grad_()
                y = stage(x)
                if last:
                    loss = nn.functional.cross_entropy(y, pool[(step * m + i) % len(pool)][1]) / m
                    step_loss += loss.item()
                    y = loss
                else:
                    sends.append(dist.isend(y.detach(), dst=rank + 1, tag=ACTIVATION_TAG))
                inputs[i], outputs[i] = x, y
            else:
                x, y = inputs.pop(i), outputs.pop(i)
                if last:
                    y.backward()
                else:
                    grad = torch.empty(shape)
                    dist.recv(grad, src=rank + 1, tag=GRADIENT_TAG)
                    y.backward(grad)
                if not first:
                    sends.append(dist.isend(x.grad, dst=rank - 1, tag=GRADIENT_TAG))
        optimizer.step()
        for s in sends:
            s.wait()
        seconds = time.perf_counter() - t0
        losses.append(step_loss)
        if step == 0 and first:
            log(rank, f"first step done {time.monotonic() - T_START:.2f} s after the interpreter started")
        if step < args.warmup_steps:
            continue
        times.append(seconds)
        if first:
            print(json.dumps({"schema": "contend.step/1", "step": step - args.warmup_steps,
                              "samples": m * args.micro_batch, "seconds": round(seconds, 6)}), flush=True)

    if first:
        log(rank, f"{len(times)} steps, median {statistics.median(times) * 1e3:.1f} ms")
    if last:
        log(rank, f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # gloo's connect, timeout and peer-closed errors; the store's TimeoutError
        print(f"pipeline_train[rank {os.environ.get('RANK', '?')}]: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
