#!/usr/bin/env bash
# Hostile inputs to `contend run` and `contend worker` (issue 16, findings 5 to 8): every memory
# bomb and absurd value is refused before anything runs, within 2 s and 200 MB, naming the file and
# key or the option; no cell runs and no results folder is left for an experiment refused.
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)

run_refused() {  # WHAT PATTERN BODY: contend run of an experiment with BODY is refused
  experiment "$tmp/e.json" "$3"
  refused "$1" "$2" "$contend" run "$tmp/e.json" --simulate --no-report --out "$tmp/res"
  [ ! -e "$tmp/res" ] || fail "$1: a results folder was created for a refused experiment"
}
# Finding 5: sizes that grow to gigabytes.
run_refused "1e9 micro-batches" "/workload/microbatches.*65536" '"workload": {"microbatches": 1000000000}'
run_refused "2^32+1 micro-batches (wraps to 1 as an int)" "/workload/microbatches" '"workload": {"microbatches": 4294967297}'
run_refused "hidden 2e9" "/workload/hidden.*65536" '"workload": {"backend": "cpu", "hidden": 2000000000}'
run_refused "a 1 TiB model per stage" "contend allows per stage" '"workload": {"backend": "cpu", "hidden": 65536, "layers": 64}'
run_refused "1e9 iterations" "/workload/iterations" '"workload": {"iterations": 1000000000}'
run_refused "a 100 GiB activation" "/workload/activation.*at most 1GiB" '"workload": {"activation": "100GiB"}'
refused "worker --microbatches 1e9" "microbatches.*65536" \
  "$contend" worker --rank 0 --world-size 2 --peers 127.0.0.1:1,127.0.0.1:2 --microbatches 1000000000
refused "worker --hidden 2e9" "hidden must be 1 to 65536" \
  "$contend" worker --rank 0 --world-size 2 --peers 127.0.0.1:1,127.0.0.1:2 --hidden 2000000000
refused "worker --activation 100GiB" "at most 1GiB" \
  "$contend" worker --rank 0 --world-size 2 --peers 127.0.0.1:1,127.0.0.1:2 --backend emulated --activation 100GiB
refused "sim of 1024 stages x 65536 micro-batches" "more than the" \
  "$contend" sim -p 1024 -m 65536 --fwd 1ms
printf '{"schema": "contend.experiment/1", "name": "z", "scenarios": ["/dev/zero"], "workload": {}, "schedules": ["1f1b"]}' >"$tmp/zero.json"
refused "a scenario file that never ends (/dev/zero)" "most contend reads|/scenarios/0" \
  "$contend" run "$tmp/zero.json" --simulate --no-report --out "$tmp/res"
# Finding 6: what used to fail mid-run is checked before the first cell.
run_refused "fixed:k=100 with 4 micro-batches" "/schedules/1.*1\.\.4" '"schedules": ["1f1b", "fixed:k=100"]'
run_refused "zero compute time" "/workload/fwd.*above 0" '"workload": {"fwd": "0s", "bwd": "0s"}'
run_refused "adaptive:kmax=0" "kmax" '"schedules": ["1f1b", "adaptive:kmax=0"]'
run_refused "a repeated parameter" "k is given twice" '"schedules": ["1f1b", "kfkb:k=2,k=3"]'
run_refused "inflight=0" "inflight" '"schedules": ["1f1b", "adaptive:inflight=0"]'
run_refused "mem=0B" "mem" '"schedules": ["1f1b", "adaptive:mem=0B"]'
if ! "$contend" --version | grep -q "cuda=built"; then
  run_refused "cuda where it is not built" "not built here" '"workload": {"backend": "cuda"}'
elif ! nvidia-smi >/dev/null 2>&1; then
  experiment "$tmp/e.json" '"workload": {"backend": "cuda"}'
  refused "cuda without a device (real run)" "needs a CUDA device" "$contend" run "$tmp/e.json" --no-report --out "$tmp/res"
  [ ! -e "$tmp/res" ] || fail "cuda without a device: a results folder was created"
fi
# Finding 8: names that would escape results/.
run_refused "an experiment named ../../escaped" "/name.*letters" '"name": "../../escaped"'
run_refused "an experiment named .hidden" "/name" '"name": ".hidden"'
# Issue 27, findings 3 to 5: deep, huge and ambiguous JSON, bytes that are not UTF-8.
python3 -c "print('{\"schema\": \"contend.experiment/1\", \"name\": ' + '[' * 100000 + ']' * 100000 + '}')" >"$tmp/deep.json"
refused "a 100000-deep array as the experiment's name" "nested more than 32 deep" \
  "$contend" run "$tmp/deep.json" --simulate --no-report --out "$tmp/res"
python3 -c "print('{\"schema\": \"contend.experiment/1\", \"name\": \"' + 'x' * (5 << 20) + '\"}')" >"$tmp/big.json"
refused "a 5 MiB experiment" "more than 4MiB, the most an experiment file may hold" \
  "$contend" run "$tmp/big.json" --simulate --no-report --out "$tmp/res"
experiment "$tmp/e.json" '"repetitions": 3'
sed -i 's/"repetitions": 3/"repetitions": 3, "repetitions": 1/' "$tmp/e.json"
refused "repetitions given twice" 'the key "repetitions" appears twice' \
  "$contend" run "$tmp/e.json" --simulate --no-report --out "$tmp/res"
experiment "$tmp/e.json" '"scenarios": ["steady.json"]'
sed -i 's/"steady.json"/"steady.json\\u0000-x"/' "$tmp/e.json"
refused "a scenario path with a NUL character" "NUL character" \
  "$contend" run "$tmp/e.json" --simulate --no-report --out "$tmp/res"
run_refused "repetitions past 2^63" "below 2\\^63, got 18446744073709551615" '"repetitions": 18446744073709551615'
experiment "$tmp/e.json" ''
refused "--out with byte 0xFF" "not valid UTF-8" \
  "$contend" run "$tmp/e.json" --simulate --no-report --out "$tmp/res$(printf '\xff')"
[ ! -e "$tmp/res$(printf '\xff')" ] || fail "--out with byte 0xFF: the folder was made"
mkdir -p "$tmp/dir$(printf '\xff')" && cp "$tmp/e.json" "$tmp/dir$(printf '\xff')/e.json"
refused "an experiment in a folder named with byte 0xFF" "not valid UTF-8" \
  "$contend" run "$tmp/dir$(printf '\xff')/e.json" --simulate --no-report --out "$tmp/res"
[ ! -e "$tmp/res" ] || fail "an experiment in a non-UTF-8 folder: a results folder was made"
# Issue 27, finding 9: a trace that would grow to gigabytes is refused before it is recorded.
refused "a chrome trace of 1024 stages x 4096 micro-batches" "more than the 1000000 a trace may hold" \
  "$contend" sim -p 1024 -m 4096 --fwd 1ms --chrome-trace "$tmp/huge.json"
[ ! -e "$tmp/huge.json" ] || fail "the refused trace was written"
# Hardening v3: a job's command that names {out}, with a results folder whose path a shell would
# read (`bash -c "... {out}"` would run what follows the ";"): refused before anything runs.
python3 - "$tmp/job.json" "$src" <<'PY'
import json, sys
json.dump({"schema": "contend.experiment/1", "name": "shelly",
           "scenarios": [sys.argv[2] + "/emulator/scenarios/steady.json"],
           "workload": {"command": ["bash", "-c", "echo step > {out}/log"], "output": {"parser": "jsonl"}},
           "variants": [{"name": "one"}], "repetitions": 1}, open(sys.argv[1], "w"))
PY
refused "a job naming {out} with a results folder a shell would read" "uses \\{out\\}.*characters a shell would read" \
  "$contend" run "$tmp/job.json" --no-report --out "$tmp/res;touch $tmp/pwned"
[ ! -e "$tmp/pwned" ] && [ ! -e "$tmp/res;touch $tmp/pwned" ] || fail "the shell line ran, or a folder was made"
echo "inputs: all refused"
