#!/usr/bin/env bash
# The DPDK flow source (net_af_packet, qdisc_bypass=0, no hugepages) starts in a node's
# namespace, sends, and the link's HTB background class limits it: the class counters show the
# link's rate. Skips (77) where the build has no DPDK.
source "$(dirname "$0")/lib.sh"
need_root
"$contend" --version | grep -q 'dpdk=built' || skip "this build has no DPDK (CONTEND_WITH_DPDK=OFF)"
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "30s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "100Mbit"}]}
JSON
"$contend" emu up "$tmp/s.json" >/dev/null
before=$(ip netns exec "contend-$run.a" tc -s class show dev c0-b | awk '/class htb 1:20/{getline; print $2}')
"$contend" dpdk-source --run "$run" --from a --to b --duration 2s >"$tmp/report.json" 2>"$tmp/err" \
  || fail "dpdk-source: $(cat "$tmp/err")"
after=$(ip netns exec "contend-$run.a" tc -s class show dev c0-b | awk '/class htb 1:20/{getline; print $2}')
python3 - "$tmp/report.json" "$before" "$after" <<'PY' || fail "DPDK traffic through HTB"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "contend.flows/1" and r["kind"] == "dpdk" and r["via"] == "a-b", r
carried = int(sys.argv[3]) - int(sys.argv[2])
rate = 8 * carried / r["seconds"]
print(f"DPDK handed {r['packets']} frames ({r['bps'] / 1e6:.1f} Mbit/s) to af_packet; "
      f"the HTB background class carried {rate / 1e6:.1f} Mbit/s of its 100 Mbit/s")
assert r["packets"] > 1000, r
assert 85e6 <= rate <= 110e6, rate
PY
# A clear error where DPDK cannot start: no such run, and a failed EAL probe both say why.
if "$contend" dpdk-source --run nosuchrun --from a --to b 2>"$tmp/err"; then fail "accepted a missing run"; fi
grep -q "is not up" "$tmp/err" || fail "said: $(cat "$tmp/err")"
"$contend" emu down --run "$run" >/dev/null
no_leftovers
