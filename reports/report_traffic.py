"""The traffic figure of a report: what each cell sent over each shaped end of the network (a
link's egress at one node, a fabric's port), the median over its repetitions, and the workload's
share where the shaping split it from background flows (summary.json's `link_bytes`). For a
user's job it shows whether its data took the links at all."""
import matplotlib.pyplot as plt

MIB = 1024 * 1024


def end_name(entry):
    return f"{entry['link']}@{entry['node']}"


def fig_traffic(r, out, made, missing, save):
    """(10) Per scenario: MiB each schedule (or variant) sent out of each shaped end, its workload's
    share darker where HTB split it from background flows."""
    recorded = [c for c in r.cells if isinstance(c.get("link_bytes"), list) and c["link_bytes"]]
    if not recorded:
        if r.summary.get("mode") == "real":
            missing.append(("traffic", "no link_bytes in summary.json (a run on cluster hosts, or one from "
                                       "before contend recorded them)"))
        return  # simulated: no network was there
    panels = []  # (scenario, its cells, their ends)
    for scenario in r.scenarios:
        cells = [c for c in recorded if c["scenario"] == scenario]
        if cells:
            panels.append((scenario, cells, list(dict.fromkeys(end_name(e) for c in cells for e in c["link_bytes"]))))
    rows = [max(2, len(ends) * len(cells) * 0.18) for _, cells, ends in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 0.8 + sum(rows)), squeeze=False,
                             gridspec_kw={"height_ratios": rows})
    for ax, (scenario, cells, ends) in zip(axes[:, 0], panels):
        height = 0.8 / len(cells)
        for i, c in enumerate(cells):
            sent = {end_name(e): e for e in c["link_bytes"]}
            ys = [j + (i - (len(cells) - 1) / 2) * height for j in range(len(ends))]
            colour = f"C{r.schedules.index(c['schedule'])}"  # as in the throughput figure
            total = [sent.get(end, {}).get("bytes", 0) / MIB for end in ends]
            ax.barh(ys, total, height, color=colour, alpha=0.45, label=c["schedule"])
            share = [sent.get(end, {}).get("workload", 0) / MIB for end in ends]
            if any(share):
                ax.barh(ys, share, height, color=colour)
        ax.set_yticks(range(len(ends)))
        ax.set_yticklabels(ends, fontsize=7)
        ax.invert_yaxis()
        ax.set_title(f"{scenario}: what each {'variant' if r.is_job() else 'schedule'} sent over each shaped end",
                     fontsize=9)
        ax.legend(fontsize=7, ncol=min(4, len(cells)))
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("MiB sent (median of the repetitions; darker: the workload's share)")
    fig.tight_layout()
    save(fig, out, "traffic", made)
