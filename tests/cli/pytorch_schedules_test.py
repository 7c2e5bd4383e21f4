#!/usr/bin/env python3
"""contend's built-in schedules are PyTorch's, action for action.

For a few shapes of each schedule class of torch.distributed.pipelining that contend reproduces,
builds the class on fake stages (no process group and no model, as PyTorch's own schedule tests
do), takes its pipeline_order (each rank's compute actions), and compares it with
`contend sim ... --csv-layout compact --csv FILE` for the matching spec (docs/schedules.md).
PyTorch's idle steps (None) are dropped and its OVERLAP_F_B actions read as their sub-actions,
forward first, as contend runs them.

Usage: pytorch_schedules_test.py PATH/TO/contend
Exits 0 when every comparison matches, 1 on a mismatch (naming the rank, the position and both
actions), 77 with the reason where torch.distributed.pipelining does not import.
"""
import os
import subprocess
import sys
import tempfile

# (PyTorch class, contend spec, ranks, chunks per rank, micro-batches). The interleaved cases with
# m not a multiple of p are PyTorch's rounds of m / max(1, m // p), contend's group.
CASES = [
    ("ScheduleInterleaved1F1B", "interleaved:v=2", 2, 2, 4),
    ("ScheduleInterleaved1F1B", "interleaved:v=2", 4, 2, 8),
    ("ScheduleInterleaved1F1B", "interleaved:v=3", 4, 3, 12),
    ("ScheduleInterleaved1F1B", "interleaved:v=2", 3, 2, 6),
    ("ScheduleInterleaved1F1B", "interleaved:v=2,group=5", 4, 2, 10),
    ("ScheduleInterleaved1F1B", "interleaved:v=2,group=6", 4, 2, 6),
    ("ScheduleInterleaved1F1B", "interleaved:v=2,group=3", 4, 2, 3),
    ("ScheduleLoopedBFS", "looped-bfs:v=2", 2, 2, 4),
    ("ScheduleLoopedBFS", "looped-bfs:v=3", 4, 3, 5),
    ("ScheduleLoopedBFS", "looped-bfs:v=1", 3, 1, 6),
    ("ScheduleInterleavedZeroBubble", "zb:v=2", 2, 2, 8),
    ("ScheduleInterleavedZeroBubble", "zb:v=2", 4, 2, 8),
    ("ScheduleInterleavedZeroBubble", "zb:v=3", 3, 3, 6),
    ("ScheduleInterleavedZeroBubble", "zb:v=1", 4, 1, 8),
    ("ScheduleInterleavedZeroBubble", "zb:v=2", 4, 2, 6),
    ("ScheduleZBVZeroBubble", "zbv", 2, 2, 4),
    ("ScheduleZBVZeroBubble", "zbv", 4, 2, 8),
    ("ScheduleZBVZeroBubble", "zbv", 4, 2, 5),
    ("ScheduleZBVZeroBubble", "zbv", 3, 2, 9),
    ("ScheduleDualPipeV", "dualpipev", 2, 2, 4),
    ("ScheduleDualPipeV", "dualpipev", 4, 2, 10),
    ("ScheduleDualPipeV", "dualpipev", 4, 2, 8),
    ("ScheduleDualPipeV", "dualpipev", 3, 2, 7),
]

# PyTorch's computation types by enum name (stable across versions: older ones call the input
# gradient BACKWARD and write it "B"), in contend's letters.
OPS = {"FORWARD": "F", "FULL_BACKWARD": "B", "BACKWARD_INPUT": "I", "BACKWARD": "I",
       "BACKWARD_WEIGHT": "W", "WEIGHT": "W"}


def import_pipelining():
    """(schedules module, _PipelineStageBase), or the reason they do not import."""
    try:
        from torch.distributed.pipelining import schedules
        from torch.distributed.pipelining.stage import _PipelineStageBase
    except Exception as e:  # ImportError, or a torch built without distributed
        return None, f"torch.distributed.pipelining does not import here ({type(e).__name__}: {e})"
    return (schedules, _PipelineStageBase), None


def fake_stage_class(base):
    class FakeStage(base):
        """What a schedule reads to plan, without a module or a process group."""

        def __init__(self, stage_index, num_stages, group_size, group_rank):
            self.submod = None
            self.stage_index = stage_index
            self.num_stages = num_stages
            self.group_size = group_size
            self.group_rank = group_rank
            self.group = None

        def _create_grad_recv_info(self, *args, **kwargs):
            return None

        def _prepare_forward_infra(self, *args, **kwargs):
            pass

        def _prepare_backward_infra(self, *args, **kwargs):
            pass

    return FakeStage


def torch_order(schedules, stage_class, cls_name, p, v, m):
    """PyTorch's actions per rank as contend's text, or None when this torch lacks the class."""
    cls = getattr(schedules, cls_name, None)
    if cls is None:
        return None
    v_shape = cls_name in ("ScheduleZBVZeroBubble", "ScheduleDualPipeV")
    # The stages of rank 0; every rank's order is planned from them.
    indices = [0, 2 * p - 1] if v_shape else [c * p for c in range(v)]
    stages = [stage_class(i, p * v, p, 0) for i in indices]
    schedule = cls(stages, m)
    order = {}
    for rank, actions in schedule.pipeline_order.items():
        out = []
        for a in actions:
            if a is None:
                continue
            subs = getattr(a, "sub_actions", None)
            for b in (subs if subs else [a]):
                out.append(f"{b.stage_index}{OPS[b.computation_type.name]}{b.microbatch_index}")
        order[rank] = out
    return [order[r] for r in sorted(order)]


def contend_order(contend, spec, p, m):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "schedule.csv")
        subprocess.run([contend, "sim", "-p", str(p), "-m", str(m), "-s", spec, "--fwd", "1ms",
                        "--csv-layout", "compact", "--csv", path],
                       check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return [[c for c in line.strip().split(",") if c] for line in f if line.strip()]


def first_difference(ours, theirs):
    if len(ours) != len(theirs):
        return f"contend has {len(ours)} ranks, PyTorch {len(theirs)}"
    for r, (a, b) in enumerate(zip(ours, theirs)):
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else "(end)"
            y = b[i] if i < len(b) else "(end)"
            if x != y:
                return f"rank {r}, action {i}: contend {x}, PyTorch {y}"
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: pytorch_schedules_test.py PATH/TO/contend")
    contend = sys.argv[1]
    found, why = import_pipelining()
    if found is None:
        print(f"SKIP: {why}")
        return 77
    schedules, base = found
    stage_class = fake_stage_class(base)
    passed = failed = skipped = 0
    for cls_name, spec, p, v, m in CASES:
        what = f"{spec} p={p} m={m} vs {cls_name}"
        try:
            theirs = torch_order(schedules, stage_class, cls_name, p, v, m)
        except Exception as e:
            print(f"FAIL: {what}: PyTorch's schedule could not be built on fake stages: "
                  f"{type(e).__name__}: {e}")
            failed += 1
            continue
        if theirs is None:
            print(f"skip: {what}: this torch has no {cls_name}")
            skipped += 1
            continue
        ours = contend_order(contend, spec, p, m)
        diff = first_difference(ours, theirs)
        if diff:
            print(f"FAIL: {what}: {diff}")
            failed += 1
        else:
            print(f"ok: {what} ({sum(map(len, ours))} actions)")
            passed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
