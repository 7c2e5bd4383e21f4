"""The results folder of a `contend run`, as the report reads it: summary.json, env.json and the
per-cell files under runs/ and events/, named by cell id."""
import json
import os


def read_jsonl(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def schedule_k(name, microbatches):
    """The fixed k of a schedule name; None for policies that choose k and for kFkB with slack
    (`kfkb:k=2,extra=1/0/0/0`: not on the fixed-k curve)."""
    if name == "1f1b":
        return 1
    if name == "gpipe":
        return microbatches
    for prefix in ("kfkb:k=", "kfkb:", "fixed:k=", "fixed:"):
        if name.startswith(prefix):
            k = name[len(prefix):]
            return int(k) if k.isdigit() else None
    return None


class Results:
    def __init__(self, root):
        self.root = root
        path = os.path.join(root, "summary.json")
        if not os.path.exists(path):
            raise SystemExit(f"contend report: {path} not found: is {root} a `contend run` results directory?")
        self.summary = json.load(open(path))
        if self.summary.get("schema") != "contend.summary/1":
            raise SystemExit(f"contend report: {path}: expected schema contend.summary/1")
        self.env = json.load(open(os.path.join(root, "env.json"))) if os.path.exists(os.path.join(root, "env.json")) else {}
        self.cells = self.summary["cells"]
        self.scenarios = list(dict.fromkeys(c["scenario"] for c in self.cells))
        self.schedules = list(dict.fromkeys(c["schedule"] for c in self.cells))
        self.info = self.summary.get("scenarios", {})
        self.microbatches = self.summary.get("workload", {}).get("microbatches", 0)

    def cell_id(self, scenario, schedule, rep=1):
        safe = "".join(ch if ch.isalnum() or ch == "." else "-" for ch in schedule)
        return f"{scenario}.{safe}.r{rep}"

    def run_lines(self, scenario, schedule, rep=1):
        path = os.path.join(self.root, "runs", self.cell_id(scenario, schedule, rep) + ".jsonl")
        return read_jsonl(path) if os.path.exists(path) else None

    def unit(self):
        return self.summary.get("unit", "samples/s")

    def is_job(self):
        """A user's own job (its summary compares throughput): no pipeline, no iterations, no traces."""
        return self.summary.get("compared") == "throughput"

    def repetitions(self):
        return max((c["repetitions"] for c in self.cells), default=0)

    def job_steps(self, scenario, variant, rep=1):
        path = os.path.join(self.root, "runs", self.cell_id(scenario, variant, rep) + ".steps.jsonl")
        return read_jsonl(path) if os.path.exists(path) else None

    def events(self, scenario, schedule, rep=1):
        path = os.path.join(self.root, "events", self.cell_id(scenario, schedule, rep) + ".jsonl")
        return read_jsonl(path) if os.path.exists(path) else None
