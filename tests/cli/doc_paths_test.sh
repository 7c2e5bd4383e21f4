#!/usr/bin/env bash
# Every path a doc cites exists: the targets of Markdown links, and the repository paths named in
# backticks (a folder of the tree at their start: `runner/src/results/throughput.cpp`; a public
# header as it is included, less "contend/": `common/spec.h`), in the
# README, docs/, ansible/README.md and the other READMEs. Placeholders (<run>, NAME, *, ...) and
# paths of a run's results are not files of the tree, and are passed over.
# Usage: doc_paths_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
python3 - <<'PY'
import glob, os, re, sys
docs = ["README.md"] + sorted(glob.glob("docs/*.md")) + sorted(glob.glob("**/README.md", recursive=True))
docs = [d for d in dict.fromkeys(docs) if not d.startswith(("build/", "node_modules/"))]
tops = ("common/", "emulator/", "workloads/", "runner/", "tools/", "tests/", "bench/", "docs/", "experiments/",
        "scripts/", "ansible/", "reports/", "cmake/", ".ci/")
placeholder = re.compile(r"[<>*{}$]|\.\.\.|NAME|PREFIX|PRESET|EXP\b|RESULTS|CELL|SCENARIO|TIMESTAMP|\bX\b|\bN\b")
failures = []
for doc in docs:
    text = open(doc).read()
    here = os.path.dirname(doc)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        path = target.split("#")[0]
        if path and not os.path.exists(os.path.join(here, path)):
            failures.append(f"{doc}: link to {target}: no such file")
    for code in re.findall(r"`([^`\n]+)`", text):
        for word in code.split():
            word = word.strip("(),;:'\"")
            if not word.startswith(tops) or placeholder.search(word) or "=" in word:
                continue
            path = word.split(":")[0].split("#")[0]
            # A public header may be named as it is included, less "contend/": `common/spec.h`.
            component, _, rest = path.partition("/")
            header = f"{component}/include/contend/{component}/{rest}"
            if not os.path.exists(path) and not os.path.exists(header):
                failures.append(f"{doc}: `{word}`: no such path in the repository")
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"docs: every path cited in {len(docs)} documents exists")
PY
