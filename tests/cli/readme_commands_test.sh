#!/usr/bin/env bash
# The README's test command is what CI runs: .ci/run must run exactly the command the README shows.
# Usage: readme_commands_test.sh SOURCE_DIR
set -euo pipefail
src=$1
cmd=$(grep -E '^[^#].*ctest' "$src/.ci/run" | tail -n 1)
[ -n "$cmd" ] || { echo "FAIL: .ci/run has no ctest command" >&2; exit 1; }
grep -qxF "$cmd" "$src/README.md" || { echo "FAIL: README.md does not show .ci/run's command: $cmd" >&2; exit 1; }
grep -q 'build/default/bin/contend run experiments/quickstart.json$' "$src/README.md" || { echo "FAIL: README.md lost the main job" >&2; exit 1; }
echo "docs: README and .ci/run agree"
