#!/usr/bin/env bash
# Every schedule, policy, compute backend, transport, subcommand and scenario event kind the binary registers is
# documented as its registry declares it (the first column of the doc's table is the entry's exact syntax), and the
# docs list nothing the registries lack (optional parts not built here count by name).
# Usage: registry_docs_test.sh CONTEND_BINARY SOURCE_DIR
set -euo pipefail
contend=$1
root=$2
"$contend" list --json > /tmp/contend-list.$$.json
trap 'rm -f /tmp/contend-list.$$.json' EXIT
python3 - "$root" /tmp/contend-list.$$.json <<'PY'
import json, re, sys
root, listing = sys.argv[1], json.load(open(sys.argv[2]))
places = {  # family -> (doc, the heading whose first table lists it, the recipe in extending.md)
    "schedules": ("docs/schedules.md", "## Generators", "## Schedules"),
    "policies": ("docs/adaptive.md", "## Policies", "## Policies"),
    "backends": ("docs/runtime.md", "## Compute backends", "## Compute backends"),
    "transports": ("docs/runtime.md", "## Transports", "## Transports"),
    "commands": ("docs/architecture.md", "## Subcommands", "## Subcommands"),
    "event kinds": ("docs/scenario-format.md", "## Event kinds", "## An event kind"),
}
def first_cells(path, heading):
    lines = open(f"{root}/{path}").read().split("\n")
    if heading not in lines:
        sys.exit(f"FAIL: {path} has no heading '{heading}'")
    cells, in_table = [], False
    for line in lines[lines.index(heading) + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            in_table = True
            cell = re.split(r"(?<!\\)\|", line)[1].strip()
            if cell.startswith("`") and cell.endswith("`"):
                cells.append(cell.strip("`").replace("\\|", "|"))
        elif in_table:
            break
    return cells
failures = []
extending = open(f"{root}/docs/extending.md").read()
for family, (doc, heading, recipe) in places.items():
    registered = {e["syntax"] for e in listing[family]["entries"]}
    not_built = {m["name"] for m in listing[family]["not_built"]}
    documented = set(first_cells(doc, heading))
    for syntax in sorted(registered - documented):
        failures.append(f"{family}: '{syntax}' is registered but {doc} ({heading}) does not list it so")
    for syntax in sorted(documented - registered):
        name = syntax.split(":")[0].split("[")[0]
        if name not in not_built:
            failures.append(f"{family}: {doc} ({heading}) lists '{syntax}', which no registry declares")
    if recipe not in extending.split("\n"):
        failures.append(f"docs/extending.md has no '{recipe}' recipe")
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("ok: %d families agree with their docs" % len(places))
PY
