#!/usr/bin/env bash
# ansible/ is lint-clean (ansible-lint, production profile) and every playbook passes
# ansible-playbook --syntax-check. Skips (77) where ansible is not installed.
# Usage: ansible_lint_test.sh SOURCE_DIR
set -euo pipefail
cd "$1/ansible"
command -v ansible-lint >/dev/null && command -v ansible-playbook >/dev/null ||
  { echo "SKIP: needs ansible-lint and ansible-core (scripts/install-deps.sh installs them)"; exit 77; }
for book in site.yml experiment.yml teardown.yml; do
  ansible-playbook --syntax-check -i inventory/example.yml "$book" >/dev/null || { echo "FAIL: $book" >&2; exit 1; }
done
ansible-lint --offline -p site.yml experiment.yml teardown.yml roles 2>&1 | tail -3
ansible-lint --offline -q site.yml experiment.yml teardown.yml roles >/dev/null 2>&1 || {
  ansible-lint --offline site.yml experiment.yml teardown.yml roles >&2 || true; echo "FAIL: ansible-lint" >&2; exit 1; }
echo "ansible: lint and syntax clean"
