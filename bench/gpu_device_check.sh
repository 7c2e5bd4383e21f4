#!/usr/bin/env bash
# The one command to run on a lent GPU machine (the `device` tool; docs/cuda.md says how):
#   bash bench/gpu_device_check.sh         with carry [".device"] (scripts/gpu-bundle.sh makes it)
# That machine has CUDA, a compiler, CMake, ninja and Python but no package archive, no network and
# none of our C++ libraries, so this script installs nothing: it unpacks the Debian packages that
# travelled in .device/ into a prefix of its own (never over /), configures the `cuda` preset
# (no DPDK) against that prefix with NCCL from the toolkit or from Python's nvidia-nccl package,
# builds with every core, then runs the GPU checks. Each step runs in its own `bash` with
# `set -euo pipefail` under `timeout`, is timed, and reports PASS, FAIL or SKIP (exit 77: no CUDA
# device, say) whatever the steps before it did; a summary table ends the output.
# Output: everything into $OUT/gpu-check.log, and $OUT/gpu-check.json (schema contend.gpu-check/1:
# steps with name, status, seconds, note and the `figure NAME VALUE` lines they printed). OUT
# defaults to a new folder under /tmp.
# Time: designed to end within CONTEND_CHECK_BUDGET_S (default 330 s) on 16 cores; a step never
# runs past the budget (it is cut short, or not started and reported NOT-RUN), so a rerun fits in
# the 15 minutes of a lease.
# Knobs (environment): OUT; CONTEND_CHECK_BUDGET_S; CONTEND_BUNDLE (default .device);
# CONTEND_DEVICE_PREFIX (default /tmp/contend-device-prefix); CONTEND_NCCL_ROOT (NCCL's folder, if
# not in the toolkit or Python); CONTEND_UNPACK_WITH_AR=1 (unpack with ar and tar even where
# dpkg-deb is); CONTEND_BUILD_JOBS (default: every core); CONTEND_CHECK_SLOWDOWN (multiplies every
# step's time limit: the rehearsal on 2 cores, bench/gpu_rehearsal.sh, uses 8).
# Exit status: 0 when no step failed (SKIP is not a failure), 1 otherwise.
set -uo pipefail  # not -e: every step runs and reports; each step sets -e for itself

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1
out=${OUT:-/tmp/contend-gpu-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
log=$out/gpu-check.log
: >"$log"
exec > >(tee -a "$log") 2>&1
tee_pid=$!

export REPO=$repo
export BUNDLE=${CONTEND_BUNDLE:-$repo/.device}
export PREFIX=${CONTEND_DEVICE_PREFIX:-/tmp/contend-device-prefix}
export BUILD_DIR=$repo/build/cuda  # the cuda preset's binaryDir
export BIN=$BUILD_DIR/bin
export JOBS=${CONTEND_BUILD_JOBS:-$(nproc)}
export CONTEND_UNPACK_WITH_AR=${CONTEND_UNPACK_WITH_AR:-}
export CONTEND_NCCL_ROOT=${CONTEND_NCCL_ROOT:-}
# A CMake from pip may be 4.x, which refuses config files that ask for policies older than 3.5.
export CMAKE_POLICY_VERSION_MINIMUM=3.5
budget=${CONTEND_CHECK_BUDGET_S:-330}
slowdown=${CONTEND_CHECK_SLOWDOWN:-1}
started=$(date +%s)
deadline=$((started + budget))
steps=$(mktemp -d /tmp/contend-gpu-steps-XXXXXX)  # per-step output; $OUT holds only what comes back
: >"$steps/results.tsv"
echo "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores, budget ${budget}s, output in $out"
echo "gpu-check: repository $repo at $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo 'unknown commit')"

# ---- the steps (each runs as `bash -c "set -euo pipefail; step_NAME"`) ----

step_device() {
  command -v nvidia-smi >/dev/null || { echo "SKIP: no CUDA device: nvidia-smi is not here (no driver)"; exit 77; }
  if ! nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; then
    echo "SKIP: no CUDA device: nvidia-smi finds none"
    exit 77
  fi
  nvidia-smi -L
}

# Unpacks every .deb of the bundle into $PREFIX, a folder of its own: the packages' /usr lands in
# $PREFIX/usr, nothing is installed over the machine's own files.
step_unpack() {
  if ! compgen -G "$BUNDLE/*.deb" >/dev/null; then
    echo "SKIP: no bundle in $BUNDLE (scripts/gpu-bundle.sh makes it): the build uses the machine's own libraries"
    exit 77
  fi
  case "$(realpath -m "$PREFIX")" in
    / | /usr | /usr/local | /opt | /etc | /home | /root | /tmp) echo "refusing to unpack into $PREFIX"; exit 1 ;;
  esac
  # Only a folder this script made is emptied: it holds the marker.
  if [ -e "$PREFIX" ] && [ ! -e "$PREFIX/.contend-prefix" ]; then
    echo "$PREFIX exists and was not made by this script: set CONTEND_DEVICE_PREFIX elsewhere"
    exit 1
  fi
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX/contend-bin"
  touch "$PREFIX/.contend-prefix"
  local how=dpkg-deb
  if [ -n "$CONTEND_UNPACK_WITH_AR" ] || ! command -v dpkg-deb >/dev/null; then
    how="ar and tar"
    command -v ar >/dev/null || { echo "neither dpkg-deb nor ar (binutils) is here to unpack the bundle"; exit 1; }
  fi
  local deb member tmp
  tmp=$(mktemp -d)
  for deb in "$BUNDLE"/*.deb; do
    if [ "$how" = dpkg-deb ]; then
      dpkg-deb -x "$deb" "$PREFIX"
      continue
    fi
    member=$(ar t "$deb" | grep '^data\.tar')
    (cd "$tmp" && ar x "$deb" "$member")
    if [[ $member == *.xz ]] && ! command -v xz >/dev/null; then  # tar needs xz for .xz; Python has lzma
      python3 -c 'import sys, tarfile
t = tarfile.open(sys.argv[1])
t.extractall(sys.argv[2], **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))' "$tmp/$member" "$PREFIX"
    else
      tar -xf "$tmp/$member" -C "$PREFIX"  # GNU tar recognises the compression of a file
    fi
    rm -f "$tmp/$member"
  done
  rm -rf "$tmp"
  # Some packages (libnl-3-200) install into /lib, which a merged-/usr system (Debian 12, Ubuntu)
  # makes /usr/lib; their .pc files say /usr/lib. Merge the prefix likewise.
  local d
  for d in lib lib64 bin sbin; do
    if [ -d "$PREFIX/$d" ] && [ ! -L "$PREFIX/$d" ]; then
      mkdir -p "$PREFIX/usr/$d"
      cp -a "$PREFIX/$d/." "$PREFIX/usr/$d/"
      rm -rf "${PREFIX:?}/$d"
      ln -s "usr/$d" "$PREFIX/$d"
    fi
  done
  # pkgconf from the bundle, for machines without pkg-config; it finds its library here.
  cat >"$PREFIX/contend-bin/pkg-config" <<SH
#!/bin/sh
LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$PREFIX/usr/bin/pkgconf" "\$@"
SH
  chmod +x "$PREFIX/contend-bin/pkg-config"
  PKG_CONFIG_LIBDIR=$PREFIX/usr/lib/x86_64-linux-gnu/pkgconfig:$PREFIX/usr/lib/x86_64-linux-gnu/openblas-pthread/pkgconfig \
    "$PREFIX/contend-bin/pkg-config" --modversion openblas libnl-3.0 libnl-route-3.0 >/dev/null
  # What the linker will ask for, where the .pc files say (a check here beats a link error later).
  for d in libnl-3.so libnl-route-3.so openblas-pthread/libopenblas.so libgfortran.so.5 libbenchmark.so; do
    [ -e "$PREFIX/usr/lib/x86_64-linux-gnu/$d" ] || { echo "the bundle lacks usr/lib/x86_64-linux-gnu/$d"; exit 1; }
  done
  echo "unpacked $(ls "$BUNDLE"/*.deb | wc -l) packages with $how into $PREFIX ($(du -sh "$PREFIX" | cut -f1))"
}

# NCCL's folder for CMake, printed; nothing when the toolkit (or the system) has it.
nccl_root() {
  if [ -n "$CONTEND_NCCL_ROOT" ]; then
    echo "$CONTEND_NCCL_ROOT"
    return
  fi
  if [ -e /usr/local/cuda/include/nccl.h ] && compgen -G "/usr/local/cuda/lib64/libnccl.so*" >/dev/null; then
    return  # the toolkit's: CMake looks there first
  fi
  local d
  # The nvidia-nccl-cu13 pip package (PyTorch's NCCL): include/nccl.h and lib/libnccl.so.2 only.
  if d=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null) && [ -e "$d/include/nccl.h" ]; then
    echo "$d"
    return
  fi
  for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl /usr/local/lib/python3*/dist-packages/nvidia/nccl \
           /usr/lib/python3/dist-packages/nvidia/nccl; do
    if [ -e "$d/include/nccl.h" ]; then
      echo "$d"
      return
    fi
  done
}

step_configure() {
  local args=(--preset cuda -DCONTEND_BUILD_TESTS=ON -DCONTEND_BUILD_BENCH=ON)
  if [ -e "$PREFIX/.contend-prefix" ]; then
    args+=(-DCMAKE_PREFIX_PATH="$PREFIX/usr" -DPKG_CONFIG_EXECUTABLE="$PREFIX/contend-bin/pkg-config")
    # Found without this where the compiler reports its multiarch folder; said anyway.
    args+=(-Dbenchmark_DIR="$PREFIX/usr/lib/x86_64-linux-gnu/cmake/benchmark")
  fi
  local nccl
  nccl=$(nccl_root)
  echo "NCCL: ${nccl:-the CUDA toolkit's (or the system's)}"
  args+=(-DCONTEND_NCCL_ROOT="$nccl")
  echo "cmake ${args[*]}"
  cmake "${args[@]}" | tee "$STEP_OUT.cmake"
  # The nccl step needs it: a build without NCCL would only skip there.
  grep -q "NCCL found: 1" "$STEP_OUT.cmake" || { echo "NCCL was not found (set CONTEND_NCCL_ROOT)"; exit 1; }
}

step_build() {
  # What the steps below run, nothing else (the unit tests need no GPU: CI runs them).
  cmake --build "$BUILD_DIR" -j "$JOBS" --target contend contend_gpu_tests contend_bench_gpu_gemm contend_bench_gpu_copy
  "$BIN/contend" --version
}

step_gpu_tests() {
  "$BIN/contend_gpu_tests" "~[gpu2]~[equivalence]"
}

step_equivalence() {
  "$BIN/contend_gpu_tests" "[equivalence]"
}

step_gemm() {
  "$BIN/contend_bench_gpu_gemm" --hidden 4096,8192 --math fp32,tf32,bf16
}

step_copy() {
  "$BIN/contend_bench_gpu_copy" 256
}

step_pipeline_tcp() {
  bash "$REPO/tests/gpu/worker_loopback_test.sh" tcp "$BIN/contend"
}

step_nccl_two_processes() {
  bash "$REPO/tests/gpu/worker_loopback_test.sh" nccl "$BIN/contend"
}

export -f step_device step_unpack nccl_root step_configure step_build step_gpu_tests step_equivalence step_gemm \
  step_copy step_pipeline_tcp step_nccl_two_processes

# run NAME LIMIT_S: runs step_NAME (dashes as underscores) within LIMIT_S and what is left of the
# budget; records name, status, seconds and a note (its SKIP reason or last line).
run() {
  local name=$1 limit=$(($2 * slowdown))
  local left=$((deadline - $(date +%s)))
  if [ "$left" -lt 5 ]; then
    echo "=== $name: NOT-RUN (the ${budget}s budget is spent)"
    printf '%s\tNOT-RUN\t0\tthe budget was spent\n' "$name" >>"$steps/results.tsv"
    return
  fi
  [ "$limit" -le "$left" ] || limit=$left
  echo
  echo "=== $name (at most ${limit}s)"
  export STEP_OUT=$steps/$name
  local t0 t1 rc status note
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" bash -c "set -euo pipefail; step_${name//-/_}" 2>&1 | tee "$steps/$name.out"
  rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  case $rc in
    0) status=PASS ;;
    77) status=SKIP ;;
    124 | 137) status=FAIL; echo "$name: timed out after ${limit}s" | tee -a "$steps/$name.out" ;;
    *) status=FAIL ;;
  esac
  note=$(grep -m1 '^SKIP: ' "$steps/$name.out" | cut -c7-)
  [ -n "$note" ] || note=$(grep -v '^figure ' "$steps/$name.out" | grep -v '^\s*$' | tail -n 1)
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" \
    "${note//$'\t'/ }" >>"$steps/results.tsv"
  grep '^figure ' "$steps/$name.out" | awk -v s="$name" '{print s "\t" $2 "\t" $3}' >>"$steps/figures.tsv"
  echo "=== $name: $status (rc $rc)"
}

run device 20
run unpack 60
# The bundle's libraries: for the linker's and the loader's transitive needs (libopenblas needs
# libgfortran, which no RUNPATH of ours names), and for pkg-config, which is pointed at the bundle's
# .pc files, their /usr prefixed with the bundle's folder.
if [ -e "$PREFIX/.contend-prefix" ]; then
  export LD_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PKG_CONFIG_LIBDIR=$PREFIX/usr/lib/x86_64-linux-gnu/pkgconfig:$PREFIX/usr/share/pkgconfig:$PREFIX/usr/lib/x86_64-linux-gnu/openblas-pthread/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$PREFIX
fi
run configure 120
run build 240
run gpu-tests 120
run equivalence 90
run gemm 90
run copy 30
run pipeline-tcp 150
run nccl-two-processes 90

# ---- summary ----
wall=$(($(date +%s) - started))
device=$(grep -h -m1 '^cuda: ' "$steps/build.out" 2>/dev/null | cut -c7-)
echo
echo "gpu-check summary (${wall}s of a ${budget}s budget; ${device:-device unknown})"
printf '%-20s %-8s %8s  %s\n' step status seconds note
while IFS=$'\t' read -r name status seconds note; do
  printf '%-20s %-8s %8s  %s\n' "$name" "$status" "$seconds" "${note:0:90}"
done <"$steps/results.tsv"
touch "$steps/figures.tsv"
python3 - "$steps" "$out/gpu-check.json" "$started" "$wall" "$budget" "$device" <<'PY'
import json, socket, sys, time
steps_dir, path, started, wall, budget, device = sys.argv[1:7]
figures = {}
for line in open(f"{steps_dir}/figures.tsv"):
    step, name, value = line.rstrip("\n").split("\t")
    try:
        figures.setdefault(step, {})[name] = float(value)
    except ValueError:
        figures.setdefault(step, {})[name] = value
steps = []
for line in open(f"{steps_dir}/results.tsv"):
    name, status, seconds, note = line.rstrip("\n").split("\t")
    steps.append({"name": name, "status": status, "seconds": float(seconds), "note": note,
                  "figures": figures.get(name, {})})
doc = {"schema": "contend.gpu-check/1",
       "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(started))),
       "host": socket.gethostname(), "device": device, "budget_s": int(budget), "wall_s": int(wall),
       "result": "fail" if any(s["status"] in ("FAIL", "NOT-RUN") for s in steps) else "pass",
       "steps": steps}
json.dump(doc, open(path, "w"), indent=1)
print(f"gpu-check: {doc['result']}; {path}")
PY
grep -q $'\t\(FAIL\|NOT-RUN\)\t' "$steps/results.tsv" && rc=1 || rc=0
rm -rf "$steps"
exec >&- 2>&-
wait "$tee_pid" 2>/dev/null
exit $rc
