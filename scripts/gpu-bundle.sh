#!/usr/bin/env bash
# Downloads the Debian 12 packages that the CUDA build and the GPU checks need on a GPU machine
# that has a compiler, CMake, ninja, Python and the CUDA toolkit but none of our C++ libraries and
# no package archive (the `device` tool's machine: docs/cuda.md), into .device/ at the repository's
# root: the ignored folder that travels with the working tree there (carry [".device"]), where
# bench/gpu_device_check.sh unpacks it into a prefix of its own.
#  - Roots: what the build finds (nlohmann-json, CLI11, Catch2, Google Benchmark, libnl, OpenBLAS
#    with pthreads, Boost's headers) and pkgconf, for a machine without pkg-config.
#  - Their dependencies, resolved here with apt-cache, minus what a machine with g++, CMake,
#    Python, make, binutils and ninja has already (libc6, libstdc++6, libgcc-s1, libquadmath0, ...):
#    a library shipped twice would shadow the machine's own through LD_LIBRARY_PATH.
#  - Fails if the bundle is over 60 MiB (what travels is 64 MiB in all, the tree included).
# Needs a Debian 12 machine with the package archive reachable (apt-get update run here).
# Usage: scripts/gpu-bundle.sh [DEST]   (default: .device at the repository's root)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/.device}
limit_mib=60

roots=(nlohmann-json3-dev libcli11-dev catch2 libbenchmark-dev libnl-3-dev libnl-route-3-dev
       libopenblas-pthread-dev libboost-dev pkgconf)
# What the GPU machine has: the closure of these is left out.
machine_has=(g++ cmake python3 make binutils ninja-build)

. /etc/os-release
if [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != 12 ]; then
  echo "gpu-bundle: needs Debian 12 (this is ${PRETTY_NAME:-unknown}): the bundle must match the packages the build was tested with" >&2
  exit 1
fi

# closure PKG...: every package PKG... depends on, recursively (Depends and Pre-Depends), real ones.
closure() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances "$@" | grep -v '^ ' | grep -v '^<' | sort -u
}
mapfile -t wanted < <(closure "${roots[@]}")
mapfile -t present < <(closure "${machine_has[@]}")
mapfile -t packages < <(comm -23 <(printf '%s\n' "${wanted[@]}") <(printf '%s\n' "${present[@]}"))
mapfile -t skipped < <(comm -12 <(printf '%s\n' "${wanted[@]}") <(printf '%s\n' "${present[@]}"))
[ ${#packages[@]} -gt 0 ] || { echo "gpu-bundle: apt-cache resolved nothing (run apt-get update)" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest"
echo "gpu-bundle: downloading ${#packages[@]} packages into $dest"
echo "gpu-bundle: left out (the machine's toolchain has them): ${skipped[*]}"
# As root, apt's sandbox user cannot write into the repository: download as the caller.
(cd "$dest" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "${packages[@]}")

# The manifest: what is in the bundle, from where, and the newest glibc symbol version it needs
# (the GPU machine's glibc must be at least that).
{
  echo "# contend GPU bundle: Debian 12 packages for bench/gpu_device_check.sh (scripts/gpu-bundle.sh)"
  echo "# made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
  for deb in "$dest"/*.deb; do
    dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb"
  done
} >"$dest/MANIFEST"
glibc=$(for deb in "$dest"/*.deb; do
          dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -E '\.so(\.[0-9]+)*$' >/dev/null || continue
          tmp=$(mktemp -d); dpkg-deb -x "$deb" "$tmp"
          find "$tmp" -type f -name '*.so*' -exec objdump -T {} \; 2>/dev/null | grep -o 'GLIBC_[0-9.]*'
          rm -rf "$tmp"
        done | sort -uV | tail -1)
echo "# needs glibc: ${glibc:-unknown}" >>"$dest/MANIFEST"
cat "$dest/MANIFEST"

bytes=$(du -sb "$dest" | cut -f1)
mib=$(( (bytes + 1048575) / 1048576 ))
echo "gpu-bundle: $dest holds $bytes bytes ($mib MiB; limit $limit_mib MiB)"
if [ "$bytes" -gt $((limit_mib * 1048576)) ]; then
  echo "gpu-bundle: FAIL: over $limit_mib MiB" >&2
  exit 1
fi
