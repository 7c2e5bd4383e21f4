#!/usr/bin/env bash
# ansible/ over SSH, as on a real cluster: ansible_test.sh's experiment (its 1F1B cell), but each
# stand-in host (a namespace on one bridge) runs its own sshd with a host key made here, and
# `contend run --hosts` runs in a fourth namespace on the bridge (the control node), reaching them
# with a key made here, checked against a known_hosts written here: no connection local, no
# contend_netns. n0 logs in as root; n1 and n2 as a user made for the test that becomes root through
# sudo (NOPASSWD, its own sudoers.d file). Checked besides ansible_test.sh's results: each sshd let
# the key in for the user the inventory names, the run token was on no command line (Ansible's EXEC
# lines), teardown.yml changes nothing, contend_netns over SSH is refused with its reason, a command
# experiment (PyTorch DDP) runs with each rank's command rendered by its host, its scenario clock
# started with the ranks and a failing rank named with its log collected and ending the cell, and
# site.yml's checkout (a bundle of the control node's checkout, copied over SSH) works with become,
# changes nothing the second time and brings over a new commit. Not built here: the build runs the
# same commands whatever the connection (ansible_test.sh builds). The user, its sudoers file, the
# sshds (by PID) and Ansible's open SSH connections are removed by the trap, also on failure.
source "$(dirname "$0")/lib.sh"
need_root
command -v ansible-playbook >/dev/null || skip "needs ansible-playbook (scripts/install-deps.sh installs ansible-core)"
for tool in /usr/sbin/sshd ssh ssh-keygen sudo visudo useradd userdel; do
  command -v "$tool" >/dev/null || skip "needs $tool (scripts/install-deps.sh installs openssh-server, openssh-client, sudo)"
done
src=$(cd "$(dirname "$0")/../.." && pwd)
user="cit$$" sudoers="/etc/sudoers.d/contend-it-$$" user_made=false

ssh_test_cleanup() {
  local rc=$?
  set +e # every step, whatever the one before did; lib.sh's cleanup exits with rc
  ssh_hosts_stop
  if $user_made; then
    poll 5 sh -c "! pgrep -u $user"
    userdel "$user" || echo "cleanup: userdel $user failed" >&2
  fi
  rm -f "$sudoers"
  (exit "$rc")
  cleanup
}
trap ssh_test_cleanup EXIT

useradd --create-home --home-dir "$tmp/home" --shell /bin/sh --password '*' "$user" # '*': no password, not locked
user_made=true
echo "$user ALL=(ALL:ALL) NOPASSWD: ALL" >"$tmp/sudoers"
visudo -cqf "$tmp/sudoers" || fail "sudoers entry rejected"
install -m 0440 "$tmp/sudoers" "$sudoers"
ssh_hosts 3 "$user" # n0-n2 at 198.18.200.1-3; the control node hs$run-3 at 198.18.200.4
hosts_experiment '"1f1b"' # one cell: a cell's plays are the same over SSH, each a minute or more here
ANSIBLE_VERBOSITY=3 in_control "$contend" run "$tmp/exp.json" --hosts "$tmp/inventory.yml" --out "$tmp/res" \
  --no-report >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "run --hosts over SSH: $(cat "$tmp/err.txt"; tail -40 "$tmp"/res/runs/*.ansible 2>/dev/null)"
cat "$tmp/out.txt"
check_hosts_results 1
grep -q "Accepted publickey for root from 198.18.200.4" "$tmp/sshd0.log" || fail "n0: no key login as root: $(tail -5 "$tmp/sshd0.log")"
for i in 1 2; do
  grep -q "Accepted publickey for $user from 198.18.200.4" "$tmp/sshd$i.log" ||
    fail "n$i: no key login as $user: $(tail -5 "$tmp/sshd$i.log")"
done
# The token travels in a file: neither ssh's command line here nor the shell's on a host has it.
grep -q "<198.18.200.2> SSH: EXEC" "$tmp"/res/runs/*.ansible || fail "no EXEC lines in the Ansible log (verbosity 3)"
! grep -h "EXEC" "$tmp"/res/runs/*.ansible | grep -qE "CONTEND_RUN_TOKEN=[0-9a-f]{16}" || fail "the run token was on a command line"

# A command experiment over the same SSH: PyTorch's DDP (gloo) on the three hosts, each rank's
# command and environment rendered by its host (its rank, address, interface, the peers'), the
# user's literal braces untouched by Ansible's templating; the job's steps read from rank 0's log.
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  cat >"$tmp/job.json" <<JSON
{"schema": "contend.experiment/1", "name": "hosts-job", "scenarios": ["three.json"], "repetitions": 1,
 "workload": {"command": ["/bin/sh", "-c",
   "echo \\"rank {rank} of {world_size} on \$CONTEND_NODE at {addr} on \$GLOO_SOCKET_IFNAME, master {master_addr}, peers {peers}, {{{{x}}}}\\"; exec /usr/bin/python3 $src/experiments/jobs/ddp_train.py --steps 12 --hidden 128"],
   "timeout": "120s", "warmup": 2}}
JSON
  started=$SECONDS
  in_control "$contend" run "$tmp/job.json" --hosts "$tmp/inventory.yml" --out "$tmp/job" --no-report \
    >"$tmp/job.txt" 2>&1 || fail "a command experiment over SSH: $(tail -20 "$tmp/job.txt"; tail -40 "$tmp"/job/runs/*.ansible)"
  job_took=$((SECONDS - started))
  cat "$tmp/job.txt"
  peers=198.18.200.1,198.18.200.2,198.18.200.3
  for i in 0 1 2; do
    grep -q "out rank $i of 3 on n$i at 198.18.200.$((i + 1)) on eth0, master 198.18.200.1, peers $peers, {{x}}" \
      "$tmp/job/runs/three.job.r1.rank$i.log" || fail "rank $i's command as n$i ran it: $(head -3 "$tmp/job/runs/three.job.r1.rank$i.log")"
  done
  python3 - "$tmp/job/summary.json" <<'PY' || fail "the command cell's throughput"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
assert len(cells) == 1 and cells[0]["throughput"]["median"] > 0, cells
print(f"ok: a PyTorch DDP job on three hosts over SSH: {cells[0]['throughput']['median']:.0f} samples/s")
PY
  for i in 0 1 2; do
    ! ls "$tmp/work/n$i"/*.pid "$tmp/work/n$i"/*.env >/dev/null 2>&1 || fail "n$i: pid or environment files left"
  done
  # The scenario's clock starts with the ranks (--start-when), not with the shaping: the first
  # step within the ranks' start-up (PyTorch's seconds), however long Ansible took before them.
  python3 - "$tmp/job/runs/three.job.r1.steps.jsonl" <<'PY' || fail "the scenario's clock did not start with the ranks"
import json, sys
first = json.loads(open(sys.argv[1]).readline())["t_s"]
assert first < 20, f"the job's first step at {first:.1f} s on the scenario's clock"
print(f"ok: the job's first step at {first:.1f} s on the scenario's clock")
PY
  # A rank that fails is named, with its log collected, and ends the cell: its peers (here asleep
  # for 400 s, the cell's timeout 600 s, as a job's ranks wait on a peer that is gone) are ended
  # then, not when they wake. The run's own cost over SSH (Ansible's plays before and after the
  # ranks: 50-100 s on a 2-core VM, more beside other work) is the good run's just before: the
  # failed run takes no longer than it and 150 s, well short of the sleep.
  # Rank 2 fails first; rank 1 fails 0.3 s after it (a peer that lost it): the runner names rank 2,
  # the first by the hosts' clocks, whichever host Ansible reports first.
  mark="$tmp/work/rank2.failed"
  sed "s|exec /usr/bin/python3[^\"]*\"|case {rank} in 2) touch $mark; exit 3;; 1) while [ ! -e $mark ]; do sleep 0.05; done; sleep 0.3; exit 4;; esac; exec sleep 400\"|; s|\"timeout\": \"120s\"|\"timeout\": \"600s\"|" \
    "$tmp/job.json" >"$tmp/bad.json"
  grep -q '"timeout": "600s"' "$tmp/bad.json" || fail "the failing job's timeout was not raised"
  started=$SECONDS
  ! in_control "$contend" run "$tmp/bad.json" --hosts "$tmp/inventory.yml" --out "$tmp/bad" --no-report \
    >"$tmp/bad.txt" 2>&1 || fail "a rank that exits 3 did not fail the run"
  took=$((SECONDS - started))
  grep -q "rank 2 exited with 3 (the first to fail, by the hosts' clocks); the log .*rank2\.log ends" "$tmp/bad.txt" ||
    fail "the first rank to fail is not named first: $(tail -20 "$tmp/bad.txt")"
  grep -q "rank 2 (n2) exited with 3" "$tmp/bad.txt" || fail "the failed rank is not named: $(tail -20 "$tmp/bad.txt")"
  ! grep -q "still running" "$tmp/bad.txt" || fail "a rank ended for its failed peer was blamed: $(tail -20 "$tmp/bad.txt")"
  grep -q "out rank 2 of 3" "$tmp/bad/runs/three.job.r1.rank2.log" || fail "the failed rank's log was not collected"
  grep -q "guard contend job-rank: the command exited with 4 (code 4, at .* on the system clock)" \
    "$tmp/bad/runs/three.job.r1.rank1.log" || fail "rank 1's own failure, which came later, is not in its log"
  [ "$took" -lt $((job_took + 150)) ] ||
    fail "the run took $took s, the good one $job_took s: it waited for the sleeping ranks, not for the failed one"
  ! ls "$tmp/bad/runs/"*.failed >/dev/null 2>&1 || fail "the failure mark was left in the results"
  echo "ok: a failed rank ended its cell in $took s (the good run $job_took s, its peers asleep for 400 s), named first before its peer"
else
  echo "SKIP (command experiment): needs python3-torch for /usr/bin/python3 (scripts/install-deps.sh installs it)"
fi

in_control ansible-playbook -i "$tmp/inventory.yml" "$src/ansible/teardown.yml" >"$tmp/teardown.txt" 2>&1 ||
  fail "teardown.yml: $(tail -20 "$tmp/teardown.txt")"
[ "$(grep -Ec '^n[0-2] +: ok=[0-9]+ +changed=0 +unreachable=0 +failed=0' "$tmp/teardown.txt")" = 3 ] ||
  fail "teardown.yml changed something: $(tail "$tmp/teardown.txt")"
! in_control ansible-playbook -i "$tmp/inventory.yml" "$src/ansible/teardown.yml" -e contend_netns="hs$run-0" \
  >"$tmp/netns.txt" 2>&1 || fail "contend_netns was accepted over SSH"
grep -q "contend_netns is for hosts reached with connection local" "$tmp/netns.txt" ||
  fail "contend_netns over SSH: $(tail -20 "$tmp/netns.txt")"

# site.yml's checkout on n1 (become) from a checkout on the control node (a clone of this one):
# the second pass changes nothing; after a commit, the third brings it over.
git clone -q "$src" "$tmp/origin"
for pass in 1 2 3; do
  if [ "$pass" = 3 ]; then
    git -C "$tmp/origin" -c user.name=it -c user.email=it@contend.invalid commit -q --allow-empty -m "a push"
  fi
  in_control ansible-playbook -i "$tmp/inventory.yml" "$src/ansible/site.yml" --limit n1 --tags checkout \
    -e contend_dir="$tmp/src" -e contend_repo="$tmp/origin" >"$tmp/site$pass.txt" 2>&1 ||
    fail "site.yml pass $pass: $(tail -30 "$tmp/site$pass.txt")"
  [ "$(git -C "$tmp/src" rev-parse HEAD)" = "$(git -C "$tmp/origin" rev-parse HEAD)" ] ||
    fail "site.yml pass $pass checked out $(git -C "$tmp/src" rev-parse HEAD), not the control node's HEAD"
done
grep -Eq "n1 +: ok=[0-9]+ +changed=0 +unreachable=0 +failed=0" "$tmp/site2.txt" ||
  fail "site.yml over SSH is not idempotent: $(grep -B2 changed: "$tmp/site2.txt" | head -20; tail -3 "$tmp/site2.txt")"
echo "ansible over ssh: ok"
