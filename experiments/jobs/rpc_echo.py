#!/usr/bin/python3
"""PyTorch RPC over TensorPipe: rank 0 sends a tensor to rank 1 every step and gets it back.

Each step is one rpc_sync of --mib MiB to worker 1, which returns it (the tensor crosses the
network twice), then --compute-ms of sleep, a stand-in for the step's compute. Rank 0 prints one
line per step on stdout, flushed as it ends, the time since the previous line's:

  {"schema": "contend.step/1", "step": 0, "samples": 1, "seconds": 1.5123}

With TensorPipe's defaults, two processes of one machine move tensors through its `cma` channel
(process_vm_readv), around the network, whatever network namespaces they are in (its `shm`
transport stays within one); contend's rank guard denies the call, and TensorPipe then takes TCP.
--tcp-only asks for TCP itself (`_transports=["uv"], _channels=["basic"]`), as a job run
elsewhere would. Environment (as contend and torchrun set it): RANK, WORLD_SIZE (2),
MASTER_ADDR, MASTER_PORT. Exit status: 0 done, 2 bad arguments, 1 anything else.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed.rpc as rpc


def echo(tensor):
    return tensor


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, default=4, help="the tensor's size in MiB (default 4)")
    p.add_argument("--steps", type=int, default=12, help="printed steps (default 12)")
    p.add_argument("--compute-ms", type=float, default=200, help="sleep after each call (default 200)")
    p.add_argument("--tcp-only", action="store_true", help="TensorPipe over TCP only (uv, basic)")
    a = p.parse_args()
    if int(os.environ.get("WORLD_SIZE", "0")) != 2:
        print("rpc_echo: needs WORLD_SIZE=2", file=sys.stderr)
        sys.exit(2)
    rank = int(os.environ["RANK"])
    options = {"num_worker_threads": 8, "rpc_timeout": 120}
    if a.tcp_only:
        options.update(_transports=["uv"], _channels=["basic"])
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=2,
                 rpc_backend_options=rpc.TensorPipeRpcBackendOptions(**options))
    if rank == 0:
        tensor = torch.ones(a.mib << 18)  # float32: 4 bytes each
        t = time.monotonic()
        for step in range(a.steps + 1):  # the first, connection set-up included, is contend's warm-up
            rpc.rpc_sync("worker1", echo, args=(tensor,))
            time.sleep(a.compute_ms / 1000)
            now = time.monotonic()
            print(json.dumps({"schema": "contend.step/1", "step": step, "samples": 1, "seconds": now - t}), flush=True)
            t = now
    rpc.shutdown()


if __name__ == "__main__":
    main()
