#!/usr/bin/env bash
# The C++ sources are formatted as .clang-format says (the whole tree: it is kept clean, so a
# change that is not fails here). Checked with Debian 12's clang-format 14: another version
# formats some constructs differently, so elsewhere this skips and says so.
# Usage: format_test.sh SOURCE_DIR
set -euo pipefail
src=$1
command -v clang-format >/dev/null || { echo "SKIP: clang-format is not installed (scripts/install-deps.sh installs it)"; exit 77; }
version=$(clang-format --version | grep -oE 'version [0-9]+' | grep -oE '[0-9]+' || true)
[ "$version" = 14 ] || { echo "SKIP: the tree is formatted with clang-format 14; this is ${version:-an unknown version}"; exit 77; }
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: $src is not a git checkout (the files checked are git's)"; exit 77; }
mapfile -t files < <(git -C "$src" ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no C++ sources found under $src" >&2; exit 1; }
if (cd "$src" && clang-format --dry-run --Werror "${files[@]}" >/dev/null 2>&1); then
  echo "format: all ${#files[@]} C++ sources are clang-format clean"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$src/$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "FAIL: ${#bad[@]} of ${#files[@]} files are not formatted; fix with:" >&2
  echo "  clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "FAIL: clang-format refused the files together but passed each alone" >&2
exit 1
