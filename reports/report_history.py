"""The figure of `contend history --reports DIR`: each cell's series of runs (their medians), the
level between change points drawn flat, each change point marked with its commit and size.
Usage: report_history.py DIR (reads DIR/history.json, writes DIR/history.png)."""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def levels(values, changes):
    """(start, end, median) of each stretch between change points (indexes into values)."""
    cuts = [0] + [c["index"] for c in changes] + [len(values)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        part = sorted(values[a:b])
        mid = len(part) // 2
        out.append((a, b, part[mid] if len(part) % 2 else (part[mid - 1] + part[mid]) / 2))
    return out


def draw_cell(ax, cell, runs, unit):
    x = [r + 1 for r in cell["runs"]]
    ax.plot(x, cell["values"], "o-", ms=3, lw=0.8, color="tab:blue")
    changes = []
    for c in cell["change_points"]:
        changes.append(dict(c, index=cell["runs"].index(c["run"])))
    for a, b, level in levels(cell["values"], changes):
        ax.hlines(level, x[a] - 0.4, x[b - 1] + 0.4, colors="tab:gray", lw=1.5)
    for c in changes:
        loss = c["change"] < 0
        ax.axvline(c["run"] + 0.5, color="tab:red" if loss else "tab:green", ls="--", lw=1)
        commit = runs[c["run"]]["commit"] or "?"
        ax.annotate(f"{100 * c['change']:+.1f}% at {commit}", (c["run"] + 0.5, ax.get_ylim()[1]),
                    fontsize=7, ha="left", va="top", color="tab:red" if loss else "tab:green")
    ax.set_title(f"{cell['scenario']} / {cell['schedule']}", fontsize=9)
    ax.set_xlabel("run", fontsize=8)
    ax.set_ylabel(unit, fontsize=8)
    ax.tick_params(labelsize=7)


def main(folder):
    h = json.load(open(f"{folder}/history.json"))
    cells = h["cells"]
    cols = min(3, len(cells))
    rows = math.ceil(len(cells) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.8 * rows), squeeze=False)
    for ax, cell in zip(axes.flat, cells):
        draw_cell(ax, cell, h["runs"], h["unit"])
    for ax in list(axes.flat)[len(cells):]:
        ax.axis("off")
    fig.suptitle(f"{h['experiment']}: {len(h['runs'])} runs on {h['machine']} "
                 f"({h['quantity']}, change points of {100 * h['tolerance']:.1f}% or more)", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{folder}/history.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1])
