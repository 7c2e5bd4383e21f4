#!/usr/bin/env bash
# Delay and loss through netem. Where the kernel has netem, a link of 10 ms one-way delay and 10%
# loss must show them to ping between its two nodes: a round trip of about 20 ms (both ends'
# egress delay) and about 19% of echoes lost (1 - 0.9 x 0.9). Where the kernel lacks netem (as on
# this project's CI machine), `up` must fail before creating anything, naming sch_netem, and the
# test is skipped (exit 77): there is no delay to measure.
source "$(dirname "$0")/lib.sh"
need_root
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "30s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "100Mbit", "delay": "10ms", "loss": "10%"}]}
JSON

# Whether the kernel has netem, asked of tc itself (not of contend, whose probe is under test).
ip netns add "hs$run-probe"
has_netem=0
tc -n "hs$run-probe" qdisc add dev lo root netem delay 1ms 2>/dev/null && has_netem=1
ip netns del "hs$run-probe"

if [ "$has_netem" -eq 0 ]; then
  if "$contend" emu up "$tmp/s.json" >/dev/null 2>"$tmp/err"; then
    fail "up succeeded on a kernel without netem: the link's delay and loss would be silently missing"
  fi
  grep -q "sch_netem" "$tmp/err" || fail "the error does not name sch_netem: $(cat "$tmp/err")"
  no_leftovers
  skip "the kernel lacks sch_netem: up refuses delay and loss as it should ($(cat "$tmp/err")); nothing to measure"
fi

"$contend" emu up "$tmp/s.json" >/dev/null 2>"$tmp/err" || fail "up failed although the kernel has netem: $(cat "$tmp/err")"
ip netns exec "contend-$run.a" ping -q -c 300 -i 0.01 -W 2 198.18.0.2 >"$tmp/ping.txt" 2>&1 || true
"$contend" emu down --run "$run" >/dev/null
no_leftovers
python3 - "$tmp/ping.txt" <<'PY' || fail "delay and loss (ping: $(cat "$tmp/ping.txt"))"
import re, sys
text = open(sys.argv[1]).read()
sent, received = map(int, re.search(r"(\d+) packets transmitted, (\d+) received", text).groups())
rtt_min, rtt_avg = map(float, re.search(r"= ([\d.]+)/([\d.]+)/", text).groups())
loss = 1 - received / sent
print(f"netem: rtt min {rtt_min:.1f} ms, avg {rtt_avg:.1f} ms (expected 20); loss {loss:.1%} (expected 19%)")
# The delay is a floor: nothing comes back sooner; queueing on a busy machine adds a little.
assert 19.5 <= rtt_min <= 25 and rtt_avg <= 30, (rtt_min, rtt_avg)
# 300 echoes at p = 0.19: a standard deviation of 2.3 points; the band is about 4 of them.
assert 0.10 <= loss <= 0.29, loss
PY
