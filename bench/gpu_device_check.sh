#!/usr/bin/env bash
# The one script to run on a lent GPU machine (the `device` tool): build with CUDA, run the [gpu]
# tests (and the two-GPU NCCL test where there are two), the GEMM and host-staged transfer
# benchmarks, and as root the 4-stage cuda pipeline between namespaces (TCP and NCCL) and the
# cuda quickstart experiment over TCP and NCCL. Prints everything and writes results under
# ${OUT:-/tmp}/gpu-check. Meant to fit in 8 minutes on an H200 with 16 cores.
# Usage: bash bench/gpu_device_check.sh
set -uo pipefail
out=${OUT:-/tmp}/gpu-check
mkdir -p "$out"
nvidia-smi -L
bash scripts/install-deps.sh >/dev/null
cmake --preset cuda >/dev/null &&
  cmake --build --preset cuda -j16 --target contend contend_gpu_tests contend_bench_gpu_gemm contend_bench_gpu_transfer |
  tail -2
bin=build/cuda/bin
$bin/contend --version
$bin/contend_gpu_tests "~[gpu2]"
$bin/contend_gpu_tests --need-gpus 2 "[gpu2]"
for m in tf32 bf16; do $bin/contend_bench_gpu_gemm $m; done
$bin/contend_bench_gpu_transfer
bash tests/integration/gpu_pipeline_test.sh "$PWD/$bin/contend"
for transport in tcp nccl; do
  # Beside the original, so its scenario paths resolve.
  python3 - "$transport" experiments/.gpu-check-$transport.json <<'PY'
import json, sys
e = json.load(open("experiments/cuda-quickstart.json"))
e["workload"]["transport"] = sys.argv[1]
json.dump(e, open(sys.argv[2], "w"))
PY
  $bin/contend run experiments/.gpu-check-$transport.json --out "$out/results-$transport" --no-report
  rm -f experiments/.gpu-check-$transport.json
done
