#!/usr/bin/env bash
# ansible/ for real, on this host: three network namespaces on one bridge stand in for cluster
# hosts (connection local, each "host" running its commands in its namespace). `contend run
# --hosts` drives experiment.yml per cell: clocks checked, each host's eth0 shaped per peer
# (cluster mode) and its links' timeline played with a background flow n0 -> n1, one worker per
# host, results collected into the runner's layout, which `contend report` reads; teardown leaves
# no qdisc, process, pid or token file; teardown.yml is safe to rerun; site.yml (deps, and a build
# from a bundle of this checkout) changes nothing the second time. ansible_ssh_test.sh runs the
# same experiment over SSH.
source "$(dirname "$0")/lib.sh"
need_root
command -v ansible-playbook >/dev/null || skip "needs ansible-playbook (scripts/install-deps.sh installs ansible-core)"
src=$(cd "$(dirname "$0")/../.." && pwd)
star_hosts 3
mkdir -p "$tmp/work"
local_inventory "      hosts:
$(for i in 0 1 2; do local_host $i; done)"
hosts_experiment
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg"
"$contend" run "$tmp/exp.json" --hosts "$tmp/inventory.yml" --out "$tmp/res" --no-report >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "run --hosts: $(cat "$tmp/err.txt"; tail -40 "$tmp"/res/runs/*.ansible 2>/dev/null)"
cat "$tmp/out.txt"
check_hosts_results

# teardown.yml: nothing to do now, and it says so.
ansible-playbook -i "$tmp/inventory.yml" "$src/ansible/teardown.yml" >"$tmp/teardown.txt" 2>&1 ||
  fail "teardown.yml: $(tail -20 "$tmp/teardown.txt")"
grep -Eq "changed=0 +unreachable=0 +failed=0" "$tmp/teardown.txt" || fail "teardown.yml changed something: $(tail "$tmp/teardown.txt")"

# site.yml on one host: deps, then a checkout (from a bundle of this one) and a build of the contend
# binary, its longest step here: unoptimised (the binary built is only run for --version; the
# run above uses this build's), in the default preset's batches (a unity build: 35 compiler runs
# instead of 184; this test took 383-391 s instead of 728 s; CONTEND_WERROR off, as GCC 12 warns
# falsely about a vector's free in one batch unoptimised); the second run changes nothing.
cat >"$tmp/site-inventory.yml" <<YAML
all:
  children:
    nodes:
      hosts:
        builder:
          ansible_connection: local
          ansible_python_interpreter: /usr/bin/python3
          contend_dir: $tmp/src
          contend_work_dir: $tmp/work/builder
          contend_repo: $src
          contend_cmake_args: -DCONTEND_WITH_CUDA=OFF -DCONTEND_BUILD_TESTS=OFF -DCONTEND_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_RELEASE=-O0 -DCONTEND_WERROR=OFF
YAML
for pass in 1 2; do
  ansible-playbook -i "$tmp/site-inventory.yml" "$src/ansible/site.yml" >"$tmp/site$pass.txt" 2>&1 ||
    fail "site.yml pass $pass: $(tail -30 "$tmp/site$pass.txt")"
done
"$tmp/src/build/default/bin/contend" --version >/dev/null || fail "site.yml built no working binary"
grep -Eq "builder +: ok=[0-9]+ +changed=0 +unreachable=0 +failed=0" "$tmp/site2.txt" ||
  fail "site.yml is not idempotent: $(grep -B2 changed: "$tmp/site2.txt" | head -20; tail -3 "$tmp/site2.txt")"
echo "ansible: ok"
