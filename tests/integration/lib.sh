# Shared by the [root] integration tests. Each test sources it, calls need_root, and gets a temp
# folder, a unique run name and a trap that removes the run's namespaces, the iperf3 servers it
# started (by PID) and the folder, also when the test fails.
set -euo pipefail
contend=$1
tmp=$(mktemp -d /tmp/contend-it-XXXXXX)
chmod 755 "$tmp"
run="it$$"
pids=()
export CONTEND_STATE_DIR="$tmp/state"

cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$contend" emu down --run "$run" >/dev/null 2>&1 || true
  # Runs `contend run` recorded in this test's state folder (its cells' networks).
  for state in "$CONTEND_STATE_DIR"/*.json; do
    [ -e "$state" ] || continue
    echo "cleanup: removing leaked run $(basename "$state" .json)" >&2
    "$contend" emu down --run "$(basename "$state" .json)" >/dev/null 2>&1 || true
  done
  for ns in $(ls /run/netns 2>/dev/null | grep "^hs$run-" || true); do
    ip netns del "$ns" || true  # star_hosts' stand-ins for cluster hosts
  done
  for ns in $(run_namespaces_now); do
    echo "cleanup: removing leaked namespace $ns" >&2
    ip netns del "$ns" || true
  done
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# Readiness is polled, never slept for: a fixed sleep is too short on a busy machine and wasted
# time on an idle one. Sleeps that remain in the tests are their subject (let traffic run).
# poll SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds (returns 0) or SECONDS pass
# (returns 1).
poll() {
  local tries i
  tries=$(awk -v t="$1" 'BEGIN { print int(t * 20) + 1 }')
  shift
  for ((i = 0; i < tries; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  return 1
}
tcp_state_on_port() { [ -n "$(ip netns exec "$1" ss -Htn state "$2" "( sport = :$3 )")" ]; }
# wait_for_port NETNS PORT [SECONDS]: until a TCP socket listens on PORT in NETNS.
wait_for_port() {
  poll "${3:-10}" tcp_state_on_port "$1" listening "$2" || fail "nothing listened on TCP port $2 in $1 within ${3:-10}s"
}
# wait_for_connection NETNS PORT [SECONDS]: until a TCP connection to local PORT in NETNS is up.
wait_for_connection() {
  poll "${3:-10}" tcp_state_on_port "$1" established "$2" ||
    fail "no TCP connection to port $2 in $1 within ${3:-10}s"
}
# wait_for_line FILE PATTERN [SECONDS]: until FILE has a line matching PATTERN (grep -E).
wait_for_line() {
  poll "${3:-10}" grep -qE -- "$2" "$1" || fail "no line matching '$2' in $1 within ${3:-10}s: $(tail -3 "$1" 2>&1)"
}
# wait_for_netns NAME [SECONDS]: until the named network namespace exists.
wait_for_netns() { poll "${2:-10}" test -e "/run/netns/$1" || fail "namespace $1 did not appear within ${2:-10}s"; }
need_root() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces and tc)"
  command -v iperf3 >/dev/null || skip "needs iperf3 (scripts/install-deps.sh installs it)"
}

# two_nodes FILE RATE [TIMELINE_JSON] [DURATION]: a two-node scenario.
two_nodes() {
  cat >"$1" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "${4:-10s}", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "$2"}],
 "timeline": ${3:-[]}}
JSON
}

# policy_link FILE POLICY: a two-node scenario, one 1 Gbit/s link under the preemption POLICY
# (split keeps 0.7 for the workload).
policy_link() {
  local extra=""
  [ "$2" = split ] && extra=', "workload_share": 0.7'
  cat >"$1" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "10s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit", "preemption": "$2"$extra}]}
JSON
}

# iperf3_goodput SECONDS: TCP goodput a -> b over the workload addresses, bits/s, cubic.
iperf3_goodput() {
  ip netns exec "contend-$run.b" iperf3 -s -1 -B 198.18.0.2 -p 5201 >/dev/null 2>&1 &
  local server=$!
  pids+=("$server")
  wait_for_port "contend-$run.b" 5201
  ip netns exec "contend-$run.a" iperf3 -c 198.18.0.2 -B 198.18.0.1 -p 5201 -t "$1" -O 1 -C cubic -J \
    >"$tmp/iperf.json" || fail "iperf3 client failed: $(tail -3 "$tmp/iperf.json")"
  wait "$server" || true
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' \
    "$tmp/iperf.json"
}

# star_hosts N: N namespaces standing in for cluster hosts, hs$run-0..N-1, each with one interface
# eth0 at 198.18.200.(i+1)/24 on one bridge (in namespace hs$run-br), as hosts on a LAN.
star_hosts() {
  ip netns add "hs$run-br"
  ip -n "hs$run-br" link add br0 type bridge
  ip -n "hs$run-br" link set br0 up
  local i
  for i in $(seq 0 $(($1 - 1))); do
    ip netns add "hs$run-$i"
    ip link add "hs$run-p$i" type veth peer name eth0 netns "hs$run-$i"
    ip link set "hs$run-p$i" netns "hs$run-br"
    ip -n "hs$run-br" link set "hs$run-p$i" master br0 up
    ip -n "hs$run-$i" addr add "198.18.200.$((i + 1))/24" dev eth0
    ip -n "hs$run-$i" link set eth0 up
    ip -n "hs$run-$i" link set lo up
  done
}

# local_host I [INDENT]: star_hosts' host I as an inventory entry (n$I: its namespace, address and
# scratch folder $tmp/work/n$I), indented by INDENT spaces (default 8: under `nodes: hosts:`).
local_host() {
  local pad
  pad=$(printf '%*s' "${2:-8}" '')
  printf '%sn%d:\n%s  contend_netns: hs%s-%d\n%s  contend_address: 198.18.200.%d\n%s  contend_work_dir: %s/work/n%d\n' \
    "$pad" "$1" "$pad" "$run" "$1" "$pad" "$(($1 + 1))" "$pad" "$tmp" "$1"
}
# local_inventory NODES: $tmp/inventory.yml for star_hosts' namespaces reached with connection
# local: the control node, NODES as the body of the `nodes` group (YAML indented under it) and
# the variables every host shares (this contend, eth0, Ansible's async folder in $tmp).
local_inventory() {
  cat >"$tmp/inventory.yml" <<YAML
all:
  children:
    control:
      hosts:
        localhost:
    nodes:
$1
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    ansible_async_dir: $tmp/async
    contend_iface: eth0
    contend_bin: $contend
YAML
}

# ssh_hosts N [USER]: star_hosts N+1 as a cluster reached over SSH. Hosts n0..n(N-1)
# (hs$run-0.., 198.18.200.(i+1)) each run their own sshd with a host key made here (checked
# against $tmp/ssh/known_hosts); the last namespace, hs$run-N, is the control node ($ctl), which
# logs in with a key made here as root, or from n1 on as USER (made by the caller) who becomes
# root through sudo. Writes $tmp/inventory.yml (each host's scratch $tmp/work/nI, contend_bin
# this machine's: the hosts share its file system). in_control runs a command on the control node
# with the repository's ansible.cfg. ssh_hosts_stop (call it from the caller's trap) ends the
# sshds and their sessions by PID and Ansible's open connections.
sshds=() ssh_privsep_made=false ctl=""
lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ssh_hosts() {
  local n=$1 user=${2:-} i hosts=""
  ctl="hs$run-$n"
  star_hosts $((n + 1))
  mkdir -m 700 "$tmp/ssh" "$tmp/cp"
  ssh-keygen -q -t ed25519 -N '' -C "contend-it" -f "$tmp/ssh/id"
  install -m 0644 "$tmp/ssh/id.pub" "$tmp/authorized_keys"
  if [ ! -d /run/sshd ]; then # sshd's privilege-separation folder
    mkdir -m 0755 /run/sshd
    ssh_privsep_made=true
  fi
  for i in $(seq 0 $((n - 1))); do
    ssh-keygen -q -t ed25519 -N '' -C "n$i" -f "$tmp/ssh/host$i"
    echo "198.18.200.$((i + 1)) $(cut -d' ' -f1,2 "$tmp/ssh/host$i.pub")" >>"$tmp/ssh/known_hosts"
    # StrictModes off: the authorized keys are under /tmp, which is world-writable.
    ip netns exec "hs$run-$i" /usr/sbin/sshd -D -e -f /dev/null -o ListenAddress="198.18.200.$((i + 1)):22" \
      -o HostKey="$tmp/ssh/host$i" -o PidFile=none -o AuthorizedKeysFile="$tmp/authorized_keys" -o StrictModes=no \
      -o AuthenticationMethods=publickey -o PermitRootLogin=prohibit-password -o AllowUsers="root ${user:-root}" \
      -o UsePAM=no -o Subsystem="sftp internal-sftp" 2>"$tmp/sshd$i.log" &
    sshds+=("$!")
  done
  for i in $(seq 0 $((n - 1))); do wait_for_port "hs$run-$i" 22; done
  for i in $(seq 0 $((n - 1))); do
    hosts+="        n$i: {ansible_host: 198.18.200.$((i + 1)), contend_address: 198.18.200.$((i + 1)), contend_work_dir: $tmp/work/n$i"
    if [ "$i" = 0 ] || [ -z "$user" ]; then hosts+=", ansible_user: root}"$'\n'; else hosts+=", ansible_user: $user, ansible_become: true}"$'\n'; fi
  done
  cat >"$tmp/inventory.yml" <<YAML
all:
  children:
    control:
      hosts:
        localhost: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}
    nodes:
      hosts:
$hosts
      vars:
        ansible_connection: ssh
        ansible_ssh_private_key_file: $tmp/ssh/id
        ansible_ssh_common_args: -F /dev/null -o StrictHostKeyChecking=yes -o UserKnownHostsFile=$tmp/ssh/known_hosts
        ansible_control_path_dir: $tmp/cp
        ansible_async_dir: $tmp/async
        contend_iface: eth0
        contend_bin: $contend # the hosts share this machine's file system
YAML
}
in_control() { ip netns exec "$ctl" env ANSIBLE_CONFIG="$lib_dir/../../ansible/ansible.cfg" "$@"; }
ssh_hosts_stop() {
  local f sock pid
  for f in "$tmp"/work/*/*.pid; do # what a cell stopped midway left (teardown removes these files)
    [ -e "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
  done
  for sock in "$tmp"/cp/*; do # Ansible's ControlPersist masters
    [ -S "$sock" ] && ip netns exec "$ctl" ssh -F /dev/null -o ControlPath="$sock" -O exit n >/dev/null 2>&1
  done
  for pid in "${sshds[@]}"; do
    # shellcheck disable=SC2046
    kill $(pgrep -P "$pid") "$pid" 2>/dev/null # its sessions, then the sshd
    wait "$pid" 2>/dev/null
  done
  if $ssh_privsep_made; then rmdir /run/sshd; fi
  return 0
}

# Namespaces of `contend run` cells (contend-r<pid>-...) present now, one per line.
runner_namespaces() { ls /run/netns 2>/dev/null | grep '^contend-r[0-9]' || true; }

# This test's run's namespaces present now (contend-$run.<node> and its switch contend-$run).
run_namespaces_now() { ls /run/netns 2>/dev/null | grep -E "^contend-$run(\.|\$)" || true; }

no_leftovers() {
  [ -z "$(run_namespaces_now)" ] || fail "namespaces left: $(run_namespaces_now)"
}

# For ansible_test.sh and ansible_ssh_test.sh, which run one experiment across star_hosts 3's
# stand-ins n0-n2 (198.18.200.1-3), each host's scratch folder $tmp/work/nI.
# hosts_experiment: $tmp/three.json (a chain n0 -> n1 -> n2 at 200 Mbit/s, link b down to 100
# Mbit/s at 1 s, a 50 Mbit/s background flow n0 -> n1) and $tmp/exp.json (3 stages, a cell per
# schedule of $1, by default 1f1b and kfkb:k=2).
hosts_experiment() {
  local schedules=${1:-'"1f1b", "kfkb:k=2"'}
  cat >"$tmp/three.json" <<JSON
{"schema": "contend.scenario/1", "name": "three", "duration": "60s", "nodes": ["n0", "n1", "n2"],
 "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "200Mbit"},
           {"name": "b", "from": "n1", "to": "n2", "rate": "200Mbit"}],
 "timeline": [{"at": "1s", "link": "b", "rate": "100Mbit"},
              {"at": "0s", "flow": {"name": "bulk", "from": "n0", "to": "n1", "rate": "50Mbit"}}]}
JSON
  cat >"$tmp/exp.json" <<JSON
{"schema": "contend.experiment/1", "name": "hosts", "scenarios": ["three.json"],
 "workload": {"stages": 3, "microbatches": 8, "iterations": 3, "warmup": 1, "fwd": "2ms", "bwd": "4ms",
              "activation": "1MiB"},
 "schedules": [$schedules], "repetitions": 1, "baseline": "1f1b"}
JSON
}

# check_hosts_results [CELLS]: the results `contend run $tmp/exp.json --hosts ... --out $tmp/res`
# collected (CELLS cells, by default 2; every rank's lines, shaping in force, the timeline played,
# the flow received, a report), and nothing left on the hosts (qdisc, pid or token file, worker or
# shaper).
check_hosts_results() {
  python3 - "$tmp/res" "${1:-2}" <<'PY' || fail "hosts-mode results"
import json, sys
d = sys.argv[1]
s = json.load(open(f"{d}/summary.json"))
assert len(s["cells"]) == int(sys.argv[2]) and all(c["repetitions"] == 1 for c in s["cells"]), s["cells"]
lines = [json.loads(l) for l in open(f"{d}/runs/three.1f1b.r1.jsonl")]
assert sorted({l["rank"] for l in lines}) == [0, 1, 2] and len(lines) == 12, len(lines)
# 8 x 1 MiB each way through links of at most 200 Mbit/s: at least 0.35 s an iteration (unshaped,
# the veths carry that in a few ms and compute takes 0.06 s): the hosts' shaping was in force.
assert all(l["iteration_s"] > 0.35 for l in lines), [round(l["iteration_s"], 3) for l in lines]
events = [json.loads(l) for l in open(f"{d}/events/three.1f1b.r1.jsonl")]
peers = [e for e in events if e.get("kind") == "sample" and e["class"].startswith("peer")]
assert peers and max(e["bytes"] for e in peers) > 8 << 20, "no traffic through the per-peer classes"
assert any(e.get("kind") == "rate" and e["link"] == "b" for e in events), "the timeline was not played"
# The background flow: sourced by n0 on its timeline, sunk by n1, both logged in the cell's events.
starts = {e["status"] for e in events if e.get("kind") == "flow_start"}
assert starts == {"applied", "elsewhere"}, starts
# What it carries depends on how soon n1's sink is up in a cell of a few seconds (155 KiB seen on a
# busy machine, megabytes on an idle one): that it reached the sink is what is asserted; its rate
# is flows_test.sh's.
received = max(e["bytes_received"] for e in events if e.get("kind") == "flow_sample")
assert received > 0, f"the flow's sink on n1 received {received} bytes"
PY
  "$contend" report "$tmp/res" >/dev/null 2>&1 || fail "the report cannot read the collected results"
  [ -s "$tmp/res/report/throughput.png" ] || fail "no throughput figure from hosts-mode results"
  local i
  for i in 0 1 2; do
    ! tc -n "hs$run-$i" qdisc show dev eth0 | grep -q htb || fail "n$i: shaping left on eth0"
    ! ls "$tmp/work/n$i"/*.pid "$tmp/work/n$i"/*.token >/dev/null 2>&1 || fail "n$i: pid or token files left"
  done
  ! pgrep -f "contend.* (worker|emu host).*$tmp" >/dev/null || fail "processes left: $(pgrep -af "contend.*$tmp")"
}
