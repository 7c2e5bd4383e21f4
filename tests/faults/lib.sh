# The fault-injection suite's helpers (tests/faults/*_test.sh): bad and hostile input must fail
# fast, small and clearly. Sourced after tests/integration/lib.sh (temp folder, cleanup).

# refused WHAT PATTERN CMD...: CMD must fail within 2 s with at most 200 MB of resident memory, and
# its stderr must match PATTERN (grep -E). Fails the test naming WHAT otherwise. (The slowest
# case, a 60 MiB trace read whole, takes 0.83-0.88 s on a quiet 2-core VM, most of it the kernel
# reading the file (perf); a CI run beside other work took 1.4 s, so 1 s was a coin toss.)
refused() {
  local what=$1 pattern=$2
  shift 2
  python3 - "$tmp/refused.err" "$@" <<'PY' >"$tmp/refused.stat" || true
import resource, subprocess, sys, time
err, cmd = sys.argv[1], sys.argv[2:]
start = time.monotonic()
try:
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=open(err, "w"), timeout=10).returncode
except subprocess.TimeoutExpired:
    rc = "timeout"
print(rc, "%.3f" % (time.monotonic() - start), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
  read -r rc seconds mib <"$tmp/refused.stat"
  [ "$rc" != 0 ] || fail "$what: accepted (exit 0): $*"
  [ "$rc" != timeout ] || fail "$what: still running after 10 s: $*"
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 2.0 else 1)" "$seconds" ||
    fail "$what: took $seconds s to refuse (limit 2 s)"
  [ "$mib" -lt 200 ] || fail "$what: used $mib MiB to refuse (limit 200 MB)"
  grep -qE "$pattern" "$tmp/refused.err" || fail "$what: unclear error (wanted /$pattern/): $(head -c 600 "$tmp/refused.err")"
  echo "ok: $what refused in $seconds s, $mib MiB: $(head -c 160 "$tmp/refused.err" | tr '\n' ' ')"
}

# experiment FILE BODY: an experiment over the shipped steady scenario (4 nodes), with BODY's
# members (JSON without braces) overriding the defaults.
experiment() {
  python3 - "$1" "$src/emulator/scenarios/steady.json" "$2" <<'PY'
import json, sys
path, scenario, body = sys.argv[1], sys.argv[2], sys.argv[3]
e = {"schema": "contend.experiment/1", "name": "fault", "scenarios": [scenario],
     "workload": {"stages": 4, "microbatches": 4, "iterations": 2, "warmup": 1, "fwd": "1ms",
                  "activation": "4KiB"},
     "schedules": ["1f1b"], "repetitions": 1}
extra = json.loads("{" + body + "}")
e.update({k: v for k, v in extra.items() if k != "workload"})
e["workload"].update(extra.get("workload", {}))
json.dump(e, open(path, "w"))
PY
}

# pids_running PATTERN: the PIDs of the processes whose command line (arguments joined by spaces)
# matches PATTERN (grep), one per line.
pids_running() {
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "$1" && echo "${p#/proc/}"
  done
  return 0
}
