#!/usr/bin/env bash
# Installs the Debian 12 packages that contend's build and tests need, and only those missing.
# Idempotent: a second run finds everything installed and changes nothing.
# Usage: scripts/install-deps.sh [--check]   (--check lists what is missing and exits 1 if any)
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config git python3
  # the format check (tests/cli/format_test.sh): Debian 12 ships clang-format 14
  clang-format
  # libraries (docs/architecture.md#dependencies)
  nlohmann-json3-dev libcli11-dev catch2 libbenchmark-dev libnl-3-dev libnl-route-3-dev libopenblas-dev
  # the DPDK flow source (CONTEND_WITH_DPDK, on in the presets)
  libdpdk-dev
  # integration tests: namespaces (ip, only in tests), an independent rate measurement, setpriv
  iproute2 iperf3 util-linux
  # integration tests: Ansible over SSH (ansible_ssh_test.sh runs an sshd in each namespace that
  # stands in for a host; sudo for the hosts it reaches as an unprivileged user with become)
  openssh-server openssh-client sudo
  # users' own jobs in the tests and examples (experiments/jobs/, docs/own-job.md): PyTorch 1.13
  # with gloo, and an MPI job, for /usr/bin/python3
  python3-torch openmpi-bin python3-mpi4py
  # reports (contend report), clusters (ansible/)
  python3-matplotlib ansible-core ansible-lint
)

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done

if [ "${1:-}" = "--check" ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "missing: ${missing[*]}"
    exit 1
  fi
  echo "all ${#packages[@]} packages installed"
  exit 0
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
