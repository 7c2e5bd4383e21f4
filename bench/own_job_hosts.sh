#!/usr/bin/env bash
# Issue 25's goal through --hosts: experiments/examples/own-job.json (a PyTorch DDP job on four nodes, two
# scenarios x two variants x three repetitions) run by `contend run --hosts` over SSH on four
# stand-in hosts (namespaces on one bridge, each with its own sshd; the control node in a fifth;
# tests/integration/lib.sh's ssh_hosts), as on a cluster. Prints the table `contend run` prints
# and the wall time. Root; needs ansible-core, openssh-server and python3-torch for
# /usr/bin/python3 (scripts/install-deps.sh). Everything it makes is removed on exit.
# Run: bash bench/own_job_hosts.sh build/default/bin/contend   (OUT=DIR keeps the results there)
src=$(cd "$(dirname "$0")/.." && pwd)
source "$src/tests/integration/lib.sh" "$(realpath "${1:-build/default/bin/contend}")"
need_root
trap 'rc=$?; set +e; ssh_hosts_stop; (exit $rc); cleanup' EXIT
out=${OUT:-$tmp/res}
ssh_hosts 4
start=$(date +%s)
in_control "$contend" run "$src/experiments/examples/own-job.json" --hosts "$tmp/inventory.yml" --out "$out" --no-report ||
  fail "contend run --hosts failed; the Ansible logs: $out/runs/*.ansible"
echo "own-job.json on four hosts over SSH: $(($(date +%s) - start)) s"
