#!/usr/bin/env bash
# An installed contend finds what it ships (the report's script, the fidelity suite's
# measurements, ansible/) under PREFIX/share/contend, with no path of the source tree compiled
# in: installed into a scratch prefix, the source tree hidden from it by running from elsewhere,
# `contend run --simulate` quotes the fidelity suite and draws its report.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
tmp=$(mktemp -d /tmp/contend-install-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "cmake --install"; }
contend=$tmp/prefix/bin/contend
[ -x "$contend" ] || fail "no $contend"
for f in share/contend/reports/contend_report.py share/contend/reports/report_index.py \
         share/contend/reports/report_results.py share/contend/experiments/suites/fidelity/measured.json \
         share/contend/ansible/experiment.yml share/contend/experiments/quickstart.json; do
  [ -f "$tmp/prefix/$f" ] || fail "$f was not installed"
done
# No string of the binary names the source tree it was built from.
src=$(cd "$build" && cmake -L -N . 2>/dev/null | sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p')
src=${src:-$(grep -m1 '^CMAKE_HOME_DIRECTORY' "$build/CMakeCache.txt" | cut -d= -f2)}
if [ -n "$src" ] && grep -aq "$src/reports\|$src/ansible\|$src/experiments" "$contend"; then
  fail "the binary names a folder of the source tree ($src)"
fi
cd "$tmp"
"$contend" run "$tmp/prefix/share/contend/experiments/quickstart.json" --simulate --out "$tmp/qs" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  { cat "$tmp/err.txt" >&2; fail "the installed contend could not simulate the quickstart"; }
grep -q "nearest measured cell\|how far to trust it" "$tmp/out.txt" || fail "no fidelity note: $(cat "$tmp/out.txt")"
grep -q "unknown (no fidelity measurements" "$tmp/out.txt" && fail "the installed contend did not find the fidelity suite: $(cat "$tmp/out.txt")"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  [ -f "$tmp/qs/report/index.html" ] || fail "the report was not drawn: $(cat "$tmp/qs/report.log" 2>/dev/null)"
fi
echo "install: the installed contend found its data under $tmp/prefix/share/contend"
