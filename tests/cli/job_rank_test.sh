#!/usr/bin/env bash
# `contend job-rank`, the guard every rank of a command experiment runs under (docs/own-job.md),
# no root: each line the job prints is in the rank log, timestamped and marked out or err; the
# job's exit code is the guard's; and the guard sleeps while the job is quiet, waking for its output
# and its end (a pidfd), not on a timer, so it takes next to none of the job's CPU.
# Usage: job_rank_test.sh PATH/TO/contend
set -euo pipefail
contend=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Lines from both streams, timestamped, and the exit code passed through.
code=0
"$contend" job-rank --log "$tmp/a.log" -- sh -c 'echo one; echo two >&2; exit 7' || code=$?
[ "$code" = 7 ] || fail "the guard exited $code for a job that exited 7"
grep -Eq '^[0-9]+\.[0-9]{6} out one$' "$tmp/a.log" || fail "stdout line not logged: $(cat "$tmp/a.log")"
grep -Eq '^[0-9]+\.[0-9]{6} err two$' "$tmp/a.log" || fail "stderr line not logged: $(cat "$tmp/a.log")"
echo "ok: lines from both streams timestamped; the job's exit code is the guard's"

# A quiet job under its guard, then the guard stopped by SIGTERM (as the runner stops it).
"$contend" job-rank --log "$tmp/b.log" -- sleep 30 &
guard=$!
job=""
for _ in $(seq 100); do  # the job forked (the guard's stop handlers are in place before it forks)
  read -r job _ <"/proc/$guard/task/$guard/children" 2>/dev/null || true
  [ -n "$job" ] && break
  sleep 0.05
done
[ -n "$job" ] || fail "the guard started no job within 5 s"

# Quiet, it sleeps: its voluntary context switches (its wake-ups) over 2 s. A guard that looked
# every 50 ms woke 40 times, one that looked at `stop` every 500 ms 4; one that waits only on the
# job's pipes, its end (a pidfd) and the stop signals, 0 (3 allowed for the scheduler). Without
# pidfds (some sandboxes refuse them) the guard falls back to a 50 ms look, and this check is
# skipped, saying so.
switches() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$guard/status"; }
if python3 -c 'import os; os.close(os.pidfd_open(os.getpid()))' 2>/dev/null; then
  before=$(switches)
  sleep 2
  woke=$(($(switches) - before))
  [ "$woke" -le 3 ] || fail "the guard woke $woke times in 2 s while its job printed nothing"
  echo "ok: the guard woke $woke times in 2 s of a quiet job"
else
  echo "skipped: this system refuses pidfd_open, so the guard looks every 50 ms"
fi

# SIGTERM: it wakes, ends its job and exits 130 at once.
start=$(date +%s%N)
kill -TERM "$guard"
code=0
wait "$guard" || code=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$code" = 130 ] || fail "a guard stopped by SIGTERM exited $code"
[ ! -e "/proc/$job" ] || fail "the job (pid $job) outlived its guard"
[ "$took" -lt 2000 ] || fail "the guard took $took ms to stop"
echo "ok: SIGTERM stopped the guard and its job in $took ms"
