#!/usr/bin/env bash
# Strangers on the workers' ports (issue 27, finding 6), over loopback, no root: a listener
# squatting a rank's port fails the rank that connects to it by its connect timeout, naming it; an
# idle connection, 32 random bytes and a byte every 1.5 s on a rank's port are ignored and the
# pipeline finishes (the greeting has one deadline, not one per read); a
# forged greeting (no token) that announces an 8 GiB tensor is refused without allocating it; the
# workers listen on loopback when their peers are there.
# Usage: protocol_test.sh PATH/TO/contend
source "$(dirname "$0")/../integration/lib.sh"

base=$((20000 + $$ % 5000 * 2))  # below the ephemeral ports (32768 and up)
peers="127.0.0.1:$base,127.0.0.1:$((base + 1))"
export CONTEND_RUN_TOKEN=0123456789abcdef
# worker RANK [ARGS...]: a small emulated pipeline's rank, in the background; its PID in $!. Its
# connect timeout is $connect_timeout: 4 s where the test times giving up, 10 s where a stranger
# may hold rank 1's accept for its 2 s greeting deadline before rank 0 comes.
connect_timeout=4s
worker() {
  local rank=$1
  shift
  "$contend" worker --rank "$rank" --world-size 2 --peers "$peers" --backend emulated --fwd 1ms --activation 4KiB \
    --schedule 1f1b --microbatches 4 --iterations 3 --connect-timeout "$connect_timeout" --timeout 10s \
    --metrics "$tmp/m$rank.jsonl" "$@" >"$tmp/w$rank.log" 2>&1 &
}
# stranger MODE: a python process on rank 1's port (listen) or connected to it (idle, noise, forge).
stranger() {
  python3 - "$1" "$((base + 1))" <<'PY' &
import os, socket, struct, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
if mode == "listen":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(8)
    conns = []
    while True:
        conns.append(s.accept()[0])  # and never a word
for _ in range(200):
    try:
        c = socket.create_connection(("127.0.0.1", port)); break
    except OSError:
        time.sleep(0.05)
if mode == "noise":
    c.sendall(os.urandom(32))
elif mode == "drip":  # a byte every 1.5 s: each within a per-read timeout, the greeting never whole
    for _ in range(20):
        c.sendall(b"C")
        time.sleep(1.5)
elif mode == "forge":  # a greeting as rank 0 of 2 without the token, then an 8 GiB activation
    c.sendall(struct.pack("<IBBHIIQII", 0x444E5443, 2, 0, 0, 0, 2, 0, 0, 0))
    c.recv(32)
    c.sendall(struct.pack("<IBBHIIQII", 0x444E5443, 0, 0, 0, 0, 0, 8 << 30, 0, 0))
time.sleep(30)
PY
  pids+=($!)
}
finished() {  # finished RANK: rank's 3 iterations logged
  [ "$(wc -l <"$tmp/m$1.jsonl" 2>/dev/null || echo 0)" -eq 3 ] || fail "rank $1 did not finish: $(tail -c 600 "$tmp/w$1.log")"
}

# A squatter on rank 1's port: rank 0 gives up by its connect timeout, saying why.
stranger listen
wait_listening() { ss -Hltn "( sport = :$((base + 1)) )" | grep -q .; }
poll 5 wait_listening || fail "the squatter did not listen"
start=$(date +%s.%N)
worker 0
w0=$!
wait "$w0" && fail "rank 0 connected to a squatter and went on"
took=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 8 else 1)" "$took" || fail "rank 0 took $took s against a 4 s connect timeout"
grep -q "accepted the connection but nothing there greeted as this run's worker" "$tmp/w0.log" ||
  fail "rank 0 did not say what it met: $(cat "$tmp/w0.log")"
# The squatter gone and its port free before rank 1 binds it: a listener killed but not yet
# reaped still holds the port, and rank 1's bind would fail while wait_listening saw the squatter.
kill "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
port_free() { ! wait_listening; }
poll 5 port_free || fail "the squatter's port stayed in use after it was killed"
echo "ok: a squatter on rank 1's port: rank 0 gave up after $took s, naming it"

# An idle connection, 32 random bytes, and a byte now and then, on rank 1's port: ignored; the
# pipeline finishes.
connect_timeout=10s
for mode in idle noise drip; do
  rm -f "$tmp"/m*.jsonl
  worker 1
  w1=$!
  poll 5 wait_listening || fail "rank 1 did not listen"
  stranger "$mode"
  sleep 0.3
  worker 0
  w0=$!
  wait "$w0" || fail "$mode: rank 0 failed: $(tail -c 600 "$tmp/w0.log")"
  wait "$w1" || fail "$mode: rank 1 failed: $(tail -c 600 "$tmp/w1.log")"
  finished 0
  finished 1
  kill "${pids[-1]}" 2>/dev/null || true
  echo "ok: a stranger's $mode connection to rank 1 was ignored; the pipeline finished"
done
# Workers listen on loopback when their peers are there.
worker 1
w1=$!
poll 5 wait_listening || fail "rank 1 did not listen"
ss -Hltn "( sport = :$((base + 1)) )" | grep -q "127.0.0.1:$((base + 1))" ||
  fail "rank 1 listens beyond loopback: $(ss -Hltn "( sport = :$((base + 1)) )")"
kill "$w1"
wait "$w1" 2>/dev/null || true
echo "ok: a rank whose peers are on loopback listens on loopback only"

# Without a token (workers started by hand), a forged greeting is taken for rank 0; its 8 GiB
# header is refused, nothing allocated (no bad_alloc, no abort).
unset CONTEND_RUN_TOKEN
worker 1
w1=$!
poll 5 wait_listening || fail "rank 1 did not listen"
stranger forge
code=0
wait "$w1" || code=$?
[ "$code" != 134 ] && [ "$code" != 0 ] || fail "rank 1 exited $code on an 8 GiB header: $(tail -c 600 "$tmp/w1.log")"
grep -q "announced a tensor of 8589934592 bytes" "$tmp/w1.log" ||
  fail "rank 1 did not refuse the 8 GiB header by name: $(tail -c 600 "$tmp/w1.log")"
echo "ok: an 8 GiB header after a forged greeting is refused before anything is allocated"
echo "protocol faults: all checks passed"
