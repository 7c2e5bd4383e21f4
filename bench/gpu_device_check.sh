#!/usr/bin/env bash
# The one script to run on a lent GPU machine (the `device` tool): build with CUDA, run the [gpu]
# tests, the GEMM benchmark and (as root) the 4-stage cuda pipeline between namespaces. Prints
# everything; under 8 minutes on an H200 with 16 cores. Usage: bash bench/gpu_device_check.sh
set -uo pipefail
nvidia-smi -L
bash scripts/install-deps.sh >/dev/null
cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target contend contend_gpu_tests contend_bench_gpu_gemm | tail -2
build/cuda/bin/contend --version
build/cuda/bin/contend_gpu_tests
for m in tf32 bf16; do build/cuda/bin/contend_bench_gpu_gemm $m; done
bash tests/integration/gpu_pipeline_test.sh build/cuda/bin/contend
