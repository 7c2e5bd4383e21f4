#!/usr/bin/env bash
# `contend emu` works for a normal user inside `unshare -Urnm` with a tmpfs over /run/netns: up,
# status with rates, a played rate change over netlink, down. Skips where the kernel does not
# allow unprivileged user namespaces.
source "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
mkdir -p /run/netns
cp "$contend" "$tmp/contend"
chmod 755 "$tmp/contend"
two_nodes "$tmp/s.json" 100Mbit '[{"at": "200ms", "link": "a-b", "rate": "20Mbit"}]' 1s
mkdir "$tmp/user" && chown 65534:65534 "$tmp/user"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_nobody unshare -Urnm true 2>/dev/null || skip "unprivileged user namespaces are not allowed here"
as_nobody env CONTEND_STATE_DIR="$tmp/user/state" unshare -Urnm sh -euc '
  mount -t tmpfs tmpfs /run/netns
  c=$1; s=$2; run=$3
  "$c" emu up "$s"
  "$c" emu status --run "$run" --json | grep -q "\"rate_bps\": 100000000.0"
  "$c" emu play "$s" --log "$4/events.jsonl" --quiet --keep
  "$c" emu status --run "$run" --json | grep -q "\"rate_bps\": 20000000.0"
  "$c" emu down --run "$run"
  [ -z "$(ls /run/netns)" ]
' sh "$tmp/contend" "$tmp/s.json" "$run" "$tmp/user" || fail "contend emu as an unprivileged user"
grep -q '"kind":"rate"' "$tmp/user/events.jsonl" || fail "no rate change in the unprivileged log"
echo "up, status, play and down work as uid 65534 in unshare -Urnm"
