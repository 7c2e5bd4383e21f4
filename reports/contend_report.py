#!/usr/bin/env python3
"""contend report: the paper-style figures and an index.html from a `contend run` results directory.

Usage: contend_report.py RESULTS_DIR [--out DIR]   (run through `contend report`)

Reads summary.json (with what each cell sent over each shaped end), runs/*.jsonl (iteration logs; a user's job's steps in runs/*.steps.jsonl),
events/*.jsonl (the player's ground truth) and traces/*.json (Chrome traces of repetition 1, when
recorded). Writes PNG and SVG figures and
index.html into RESULTS_DIR/report (or --out). A figure whose data is missing is not drawn: the
index says which and why, and so does stderr.
"""
import argparse
import json
import os
import sys

try:
    import matplotlib
except ImportError:
    sys.exit(f"contend report: {sys.executable} has no matplotlib: apt-get install python3-matplotlib "
             "(scripts/install-deps.sh installs it), or point CONTEND_PYTHON at a python3 that has it")

matplotlib.use("Agg")
# Names and units come from the user's files: a "$" in one is text, never TeX (mathtext would
# fail the figure, or draw something else).
matplotlib.rcParams["text.parse_math"] = False
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401

from report_index import write_index  # noqa: E402 (beside this file)
from report_ports import fig_ports  # noqa: E402
from report_results import Results, schedule_k  # noqa: E402
from report_tenants import fig_tenants  # noqa: E402
from report_traffic import fig_traffic  # noqa: E402

GBIT = 1e9
MBIT = 1e6


def save(fig, out, name, made):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    made.append(name)


def fig_throughput(r, out, made, missing):
    """(1) Throughput per schedule per scenario, with the speedup over the baseline on each bar."""
    if not r.cells or all(c["repetitions"] == 0 for c in r.cells):
        missing.append(("throughput", "summary.json has no finished cells"))
        return
    width = 0.8 / max(1, len(r.schedules))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(r.scenarios) * max(1, len(r.schedules)) / 2), 4.2))
    top = 0.0
    for i, schedule in enumerate(r.schedules):
        xs, ys, errs, labels = [], [], [], []
        for j, scenario in enumerate(r.scenarios):
            c = next((c for c in r.cells if c["scenario"] == scenario and c["schedule"] == schedule), None)
            if c is None or c["repetitions"] == 0:
                continue
            xs.append(j + (i - (len(r.schedules) - 1) / 2) * width)
            ys.append(c["throughput"]["median"])
            errs.append(c["throughput"]["ci95"])
            labels.append(f"{c['speedup']['median']:.2f}x")
        bars = ax.bar(xs, ys, width, yerr=errs, capsize=3, label=schedule)
        for b, err, label in zip(bars, errs, labels):
            # Above the bar's interval, so neither hides the other.
            ax.annotate(label, (b.get_x() + b.get_width() / 2, b.get_height() + err), ha="center", va="bottom",
                        fontsize=7, xytext=(0, 2), textcoords="offset points")
            top = max(top, b.get_height() + err)
    ax.set_ylim(0, top * 1.12 if top > 0 else 1)  # room for the labels over the tallest bar
    ax.set_xticks(range(len(r.scenarios)))
    ax.set_xticklabels(r.scenarios)
    ax.set_xlabel("scenario")
    ax.set_ylabel(f"throughput ({r.unit()}, median, 95% CI)")
    mode = r.summary.get("mode", "real")
    ax.set_title(f"{r.summary.get('experiment', '')} ({mode}): speedup over {r.summary.get('baseline')} on each bar")
    # Below the axes, never over a bar: the tallest bars carry the labels that matter most.
    ax.legend(fontsize=8, ncol=min(6, len(r.schedules)), loc="upper center", bbox_to_anchor=(0.5, -0.18),
              frameon=False)
    ax.grid(axis="y", alpha=0.3)
    save(fig, out, "throughput", made)


def link_rates(events):
    """Per link, (t, Mbit/s) steps from the player's log: base rates, then every applied change."""
    start = next((e for e in events if e.get("kind") == "start"), None)
    if start is None or "base_rates_bps" not in start:
        return None
    series = {name: [(0.0, bps / MBIT)] for name, bps in start["base_rates_bps"].items()}
    end = 0.0
    for e in events:
        if e.get("kind") == "rate" and e.get("link") in series:
            series[e["link"]].append((e.get("applied_s", e.get("scheduled_s", 0.0)), e["rate_bps"] / MBIT))
        if e.get("kind") == "end":
            end = e.get("t_s", end)
    return start.get("steady_s", 0.0), series, end


def fig_adaptive(r, out, made, missing):
    """(2) Link bandwidth, chosen k and slack, and iteration throughput over time: the adaptive story."""
    policies = [s for s in r.schedules if s.startswith(("adaptive", "adaptra", "observer", "oracle"))]
    policy = next((s for s in policies if not s.startswith(("observer", "oracle"))), None)
    if policy is None:
        missing.append(("adaptive", "no adaptive schedule in this experiment"))
        return
    for scenario in r.scenarios:
        lines = r.run_lines(scenario, policy)
        events = r.events(scenario, policy)
        if not lines or not events or link_rates(events) is None:
            missing.append((f"adaptive-{scenario}", "no iteration log or event log for repetition 1 of " + policy))
            continue
        t0, series, end = link_rates(events)
        fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
        ax_bw, ax_k, ax_slack, ax_t = axes
        for name, pts in series.items():
            xs = [p[0] for p in pts] + [max(end, pts[-1][0])]
            ys = [p[1] for p in pts] + [pts[-1][1]]
            ax_bw.step(xs, ys, where="post", label=name)
        ax_bw.set_ylabel("link rate (Mbit/s)")
        ax_bw.legend(fontsize=7, ncol=4)
        ax_bw.set_title(f"{scenario}: the network, the k and slack chosen, and what it bought")
        for schedule in r.schedules:
            rows = [l for l in (r.run_lines(scenario, schedule) or []) if l.get("rank") == 0]
            if not rows:
                continue
            # Every cell has its own clock: align each to its own player's start.
            ev = r.events(scenario, schedule)
            rates = link_rates(ev) if ev else None
            base = rates[0] if rates else rows[0]["start_s"]
            ts = [l["start_s"] - base for l in rows]
            color = f"C{r.schedules.index(schedule) % 10}"  # one colour per schedule in every panel
            if schedule in policies:
                ax_k.step(ts, [l["k"] for l in rows], where="post", label=schedule, marker=".", color=color)
                slack = [sum((l.get("decision") or {}).get("extra", [])) for l in rows]
                ax_slack.step(ts, slack, where="post", label=schedule, marker=".", color=color)
            ax_t.plot([t + l["iteration_s"] for t, l in zip(ts, rows)], [l["samples_per_s"] for l in rows],
                      marker=".", label=schedule, color=color)
        ends = [l.get_xdata()[-1] for l in ax_t.get_lines() if len(l.get_xdata())]
        if ends:
            ax_t.set_xlim(0, max(ends) * 1.02)
        ax_k.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax_k.set_ylabel("k")
        ax_k.legend(fontsize=7)
        ax_slack.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax_slack.set_ylabel("slack (extra\nforwards, all stages)")
        ax_t.set_ylabel("samples/s per iteration")
        ax_t.set_xlabel("time since the scenario started (s)")
        ax_t.legend(fontsize=7, ncol=3)
        for ax in axes:
            ax.grid(alpha=0.3)
        save(fig, out, f"adaptive-{scenario}", made)


def fig_slowdown(r, out, made, missing):
    """(9) With a baseline scenario: each schedule's (or variant's) slowdown in every other scenario
    against itself there, with its interval."""
    base = r.summary.get("baseline_scenario")
    if not base:
        return  # nothing to be slower than: not asked for, so not listed as missing
    scenarios = [s for s in r.scenarios if s != base]
    cells = [c for c in r.cells if c["scenario"] in scenarios and c.get("slowdown", {}).get("median", 0) > 0]
    if not cells:
        missing.append(("slowdown", f"no cell has a slowdown against {base} (not run in both?)"))
        return
    width = 0.8 / max(1, len(r.schedules))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(scenarios) * max(1, len(r.schedules)) / 2), 4.2))
    for i, schedule in enumerate(r.schedules):
        mine = [(scenarios.index(c["scenario"]), c["slowdown"]) for c in cells if c["schedule"] == schedule]
        ax.bar([j + (i - (len(r.schedules) - 1) / 2) * width for j, _ in mine], [s["median"] for _, s in mine],
               width, yerr=[s["ci95"] for _, s in mine], capsize=3, label=schedule)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(scenarios)))
    ax.set_xticklabels(scenarios)
    ax.set_xlabel("scenario")
    ax.set_ylabel(f"slowdown against {base} (x, median, 95% CI)")
    ax.set_title(f"{r.summary.get('experiment', '')}: how much slower each scenario made each "
                 f"{'variant' if r.is_job() else 'schedule'}")
    ax.legend(fontsize=8, ncol=min(6, len(r.schedules)), loc="upper center", bbox_to_anchor=(0.5, -0.18),
              frameon=False)
    ax.grid(axis="y", alpha=0.3)
    save(fig, out, "slowdown", made)


def fig_job(r, out, made, missing):
    """(7) A user's job: every variant's throughput step by step, every repetition (the first
    solid, the others fainter), beneath the links' rates, on the scenario's clock
    (runs/CELL.steps.jsonl)."""
    if not r.is_job():
        return  # contend's own pipeline: fig_adaptive draws its iterations
    reps = range(1, r.repetitions() + 1)
    for scenario in r.scenarios:
        steps = {v: [r.job_steps(scenario, v, rep) for rep in reps] for v in r.schedules}
        events = r.events(scenario, r.schedules[0])
        if not any(any(runs) for runs in steps.values()) or not events or link_rates(events) is None:
            missing.append((f"job-{scenario}", "no steps or event log for repetition 1"))
            continue
        _, series, end = link_rates(events)
        fig, (ax_bw, ax_t) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        last = 0.0
        for n, (variant, runs) in enumerate(steps.items()):
            for rep, rows in enumerate(runs, start=1):
                if rows:
                    ax_t.plot([s["t_s"] + s["seconds"] for s in rows], [s["rate"] for s in rows], marker=".",
                              color=f"C{n}", alpha=1.0 if rep == 1 else 0.35, label=variant if rep == 1 else None)
                    last = max(last, rows[-1]["t_s"] + rows[-1]["seconds"])
        for name, pts in series.items():
            xs = [p[0] for p in pts] + [max(last, pts[-1][0])]
            ax_bw.step(xs, [p[1] for p in pts] + [pts[-1][1]], where="post", label=name)
        ax_bw.set_xlim(0, max(last, 1.0) * 1.02)
        ax_bw.set_ylabel("link rate (Mbit/s)")
        ax_bw.legend(fontsize=7, ncol=4)
        ax_bw.set_title(f"{scenario}: the network (repetition 1) and the job's throughput, step by step "
                        f"(every repetition)")
        ax_t.set_ylabel(f"{r.unit()} per step")
        ax_t.set_xlabel("time since the scenario started (s)")
        ax_t.legend(fontsize=7, ncol=3)
        for ax in (ax_bw, ax_t):
            ax.grid(alpha=0.3)
        save(fig, out, f"job-{scenario}", made)


def fig_timeline(r, out, made, missing):
    """(3) A pipeline timeline: forwards and backwards per rank over the last iteration, from traces."""
    trace_dir = os.path.join(r.root, "traces")
    files = sorted(f for f in os.listdir(trace_dir) if f.endswith(".json")) if os.path.isdir(trace_dir) else []
    if not files:
        missing.append(("timeline", "no traces/ in the results directory (recorded for repetition 1 of each cell)"))
        return
    cells = {}
    for f in files:  # CELL.rankN.json from workers, CELL.json from the simulator
        cells.setdefault(f.split(".rank")[0].removesuffix(".json"), []).append(f)
    for cell, parts in sorted(cells.items())[:8]:
        xs = []
        for f in parts:
            events = json.load(open(os.path.join(trace_dir, f)))
            events = events.get("traceEvents", events) if isinstance(events, dict) else events
            xs += [e for e in events if e.get("ph") == "X" and e.get("cat") in ("forward", "backward")]
        if not xs:
            continue
        # The last iteration starts with rank 0's last forward of micro-batch 0.
        firsts = [e["ts"] for e in xs if e["pid"] == 0 and e["cat"] == "forward" and e["args"]["microbatch"] == 0]
        t0 = max(firsts) if firsts else min(e["ts"] for e in xs)
        xs = [e for e in xs if e["ts"] >= t0]
        ranks = sorted({e["pid"] for e in xs})
        fig, ax = plt.subplots(figsize=(10, 0.8 + 0.45 * len(ranks)))
        for e in xs:
            color = "#4c72b0" if e["cat"] == "forward" else "#dd8452"
            ax.broken_barh([((e["ts"] - t0) / 1e3, e["dur"] / 1e3)], (e["pid"] - 0.4, 0.8), facecolors=color,
                           edgecolor="white", linewidth=0.3)
        ax.set_yticks(ranks)
        ax.set_yticklabels([f"rank {p}" for p in ranks])
        ax.invert_yaxis()
        ax.set_xlabel("time since the iteration started (ms)")
        ax.set_title(f"{cell}: last iteration, forward (blue) and backward (orange)")
        ax.grid(axis="x", alpha=0.3)
        save(fig, out, "timeline-" + cell, made)


def fig_bandwidth(r, out, made, missing):
    """(4) Throughput against link bandwidth for each k and adaptive (a bandwidth sweep)."""
    steady = {s: i["bottleneck_bps"] for s, i in r.info.items() if i.get("steady") and i.get("bottleneck_bps")}
    if len(steady) < 3:
        missing.append(("bandwidth", "needs 3 or more steady scenarios of different rates "
                                     "(a bandwidth sweep: experiments/examples/bandwidth-sweep.json)"))
        return
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for schedule in r.schedules:
        pts = sorted((steady[c["scenario"]] / MBIT, c["throughput"]["median"]) for c in r.cells
                     if c["schedule"] == schedule and c["scenario"] in steady and c["repetitions"] > 0)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=schedule)
    ax.set_xscale("log")
    ax.set_xlabel("link rate (Mbit/s, log scale)")
    ax.set_ylabel(f"throughput ({r.unit()}, median)")
    ax.set_title("throughput against link bandwidth")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    save(fig, out, "bandwidth", made)


def fig_stalls(r, out, made, missing):
    """(7) Iteration time against a link's stall, per system, one panel per stalled link (PipeMorph's
    increasing-delay figure); a scenario without stalls or events is every panel's 0 ms."""
    per_iteration = r.summary.get("workload", {}).get("samples_per_iteration", 0)
    quiet = [s for s, i in r.info.items() if i.get("steady")]
    panels = {}
    for s, i in r.info.items():
        if i.get("stall_s", 0) > 0 and len(i.get("stalled_links", [])) == 1:
            panels.setdefault(i["stalled_links"][0], []).append((i["stall_s"], s))
    panels = {link: pts for link, pts in panels.items() if len(pts) + len(quiet[:1]) >= 3}
    if not panels or per_iteration <= 0:
        missing.append(("stalls", "needs 3 or more scenarios stalling one link by different amounts "
                                  "(a delay sweep: experiments/reproductions/pipemorph-delay.json)"))
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, (link, pts) in zip(axes[0], sorted(panels.items())):
        pts = sorted(pts) + [(0.0, q) for q in quiet[:1]]
        for schedule in r.schedules:
            line = []
            for stall, scenario in sorted(pts):
                c = next((c for c in r.cells if c["scenario"] == scenario and c["schedule"] == schedule), None)
                if c is not None and c["repetitions"] > 0 and c["throughput"]["median"] > 0:
                    line.append((stall * 1e3, per_iteration / c["throughput"]["median"] * 1e3))
            if line:
                ax.plot([p[0] for p in line], [p[1] for p in line], marker="o", label=schedule)
        ax.set_xlabel(f"stall on {link} (ms per message)")
        ax.set_ylabel("iteration time (ms, median)")
        ax.set_title(f"{r.summary.get('experiment', '')}: {link} stalled")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save(fig, out, "stalls", made)


def fig_memory(r, out, made, missing):
    """(5) Peak activation memory against k, the price of kFkB."""
    pts = {}
    for schedule in r.schedules:
        for scenario in r.scenarios:
            rows = r.run_lines(scenario, schedule) or []
            for l in rows:
                if "peak_activation_bytes" not in l:
                    continue
                k = l["k"]
                if k <= 0:  # a schedule of the zoo: drawn by fig_schedules
                    continue
                pts[(schedule, k)] = max(pts.get((schedule, k), 0), l["peak_activation_bytes"])
    if not pts:
        missing.append(("memory", "no peak_activation_bytes in the iteration logs"))
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    fixed = sorted((k, b) for (s, k), b in pts.items() if schedule_k(s, r.microbatches) is not None)
    if fixed:
        ax.plot([p[0] for p in fixed], [p[1] / 2**20 for p in fixed], marker="o", label="fixed schedules")
    for s in r.schedules:
        if schedule_k(s, r.microbatches) is None:
            mine = sorted((k, b) for (name, k), b in pts.items() if name == s)
            ax.scatter([p[0] for p in mine], [p[1] / 2**20 for p in mine], marker="x", s=60, label=f"{s} (k it used)")
    ax.set_xlabel("k")
    ax.set_ylabel("peak activation memory, worst stage (MiB)")
    ax.set_title("memory against k")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, out, "memory", made)


def schedule_costs(r, scenario, schedule):
    """(bubble fraction, peak activation bytes) of a cell's repetition 1: the bubble is the share of each
    rank's iteration not spent computing (1 - compute_s / iteration_s), averaged over ranks, median over
    the iterations; the memory is the worst rank's peak."""
    rows = [l for l in (r.run_lines(scenario, schedule) or []) if l.get("iteration_s", 0) > 0]
    if not rows:
        return None
    per_iteration = {}
    for l in rows:
        per_iteration.setdefault(l["iteration"], []).append(1 - l["compute_s"] / l["iteration_s"])
    bubbles = sorted(sum(v) / len(v) for v in per_iteration.values())
    peak = max(l.get("peak_activation_bytes", 0) for l in rows)
    return bubbles[len(bubbles) // 2], peak


def fig_schedules(r, out, made, missing):
    """(6) Bubble and memory per schedule: what each schedule of the zoo pays for its throughput."""
    if len(r.schedules) < 2:
        missing.append(("schedules", "one schedule: nothing to compare"))
        return
    costs = {(sc, s): schedule_costs(r, sc, s) for sc in r.scenarios for s in r.schedules}
    if not any(costs.values()):
        missing.append(("schedules", "no iteration logs"))
        return
    fig, (bubble_ax, memory_ax) = plt.subplots(1, 2, figsize=(max(10, 0.9 * len(r.schedules) * 2), 4.5))
    width = 0.8 / len(r.scenarios)
    for i, sc in enumerate(r.scenarios):
        xs = [j + i * width for j in range(len(r.schedules))]
        vals = [costs[(sc, s)] or (float("nan"), 0) for s in r.schedules]
        bubble_ax.bar(xs, [100 * v[0] for v in vals], width, label=sc)
    peaks = [max((costs[(sc, s)] or (0, 0))[1] for sc in r.scenarios) / 2**20 for s in r.schedules]
    memory_ax.bar(range(len(r.schedules)), peaks, 0.6, color="gray")
    for ax, label in ((bubble_ax, "bubble: time not computing (%)"),
                      (memory_ax, "peak activation memory, worst rank (MiB)")):
        ax.set_xticks([j + (0.4 - width / 2 if ax is bubble_ax else 0) for j in range(len(r.schedules))])
        ax.set_xticklabels(r.schedules, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, axis="y")
    bubble_ax.legend(fontsize=8)
    bubble_ax.set_title("bubble per schedule (median iteration, mean over ranks)")
    memory_ax.set_title("memory per schedule")
    save(fig, out, "schedules", made)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="a `contend run` results directory")
    p.add_argument("--out", help="where to write (default RESULTS/report)")
    a = p.parse_args()
    r = Results(a.results)
    out = a.out or os.path.join(a.results, "report")
    if os.path.islink(out):
        sys.exit(f"contend report: {out} is a symbolic link: results are never written through one")
    os.makedirs(out, exist_ok=True)
    made, missing = [], []
    # A user's job has no iterations, traces or schedules: only what applies to it is drawn.
    pipeline_only = (fig_adaptive, fig_timeline, fig_bandwidth, fig_memory, fig_schedules, fig_stalls)
    for fig in (fig_throughput, fig_slowdown, fig_job) + (() if r.is_job() else pipeline_only):
        fig(r, out, made, missing)
    fig_ports(r, out, made, missing, save)
    fig_traffic(r, out, made, missing, save)
    fig_tenants(r, out, made, missing, save)
    write_index(r, out, made, missing)
    for name, why in missing:
        print(f"contend report: not drawn: {name}: {why}", file=sys.stderr)
    print(f"contend report: {len(made)} figures, {os.path.join(out, 'index.html')}")


if __name__ == "__main__":
    main()
