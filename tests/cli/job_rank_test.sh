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

# A quiet job: the guard's voluntary context switches (its wake-ups) over 2 s. A guard that
# looked every 50 ms woke 40 times; one that waits on the job's pipes and end, 4 (its look at
# `stop` every 500 ms) and a few for scheduling.
"$contend" job-rank --log "$tmp/b.log" -- sleep 3 &
guard=$!
switches() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$guard/status"; }
sleep 0.5
before=$(switches)
sleep 2
after=$(switches)
wait "$guard" || fail "the guard of a sleeping job exited $?"
woke=$((after - before))
[ "$woke" -le 12 ] || fail "the guard woke $woke times in 2 s while its job printed nothing"
echo "ok: the guard woke $woke times in 2 s of a quiet job"

# Stopped by SIGTERM (as the runner stops it) while it sleeps: it wakes, ends its job and exits 130
# at once, not at its next look at `stop`.
"$contend" job-rank --log "$tmp/c.log" -- sleep 30 &
guard=$!
sleep 0.5
job=$(cat "/proc/$guard/task/$guard/children")
start=$(date +%s%N)
kill -TERM "$guard"
code=0
wait "$guard" || code=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$code" = 130 ] || fail "a guard stopped by SIGTERM exited $code"
[ ! -e "/proc/$job" ] || fail "the job (pid $job) outlived its guard"
[ "$took" -lt 2000 ] || fail "the guard took $took ms to stop"
echo "ok: SIGTERM stopped the guard and its job in $took ms"
