"""The tenants figure of a report: what the other jobs on the network got beside each schedule
(summary.json's `tenants`: a traffic pattern's flows summed under its name, or a flow of its
own), the median goodput over the repetitions with its 95% interval, one panel per scenario that
has tenants: the other side of the contention the throughput figure shows."""
import matplotlib.pyplot as plt


def fig_tenants(r, out, made, missing, save):
    """(11) Per scenario with background flows: each tenant's goodput beside each schedule (or
    variant)."""
    recorded = [c for c in r.cells if isinstance(c.get("tenants"), list) and c["tenants"]]
    if not recorded:
        return  # no tenants in these scenarios (or a chain simulated): nothing to draw, nothing missing
    panels = []
    for scenario in r.scenarios:
        cells = [c for c in recorded if c["scenario"] == scenario]
        if cells:
            panels.append((scenario, cells, list(dict.fromkeys(t["tenant"] for c in cells for t in c["tenants"]))))
    fig, axes = plt.subplots(1, len(panels), figsize=(max(5, 3.5 * len(panels)), 3.6), squeeze=False)
    for ax, (scenario, cells, tenants) in zip(axes[0], panels):
        width = 0.8 / len(cells)
        for i, c in enumerate(cells):
            got = {t["tenant"]: t["goodput_bps"] for t in c["tenants"]}
            xs = [j + (i - (len(cells) - 1) / 2) * width for j in range(len(tenants))]
            medians = [got.get(t, {}).get("median", 0) / 1e6 for t in tenants]
            errors = [got.get(t, {}).get("ci95", 0) / 1e6 for t in tenants]
            colour = f"C{r.schedules.index(c['schedule'])}"  # as in the throughput figure
            ax.bar(xs, medians, width, yerr=errors, capsize=3, color=colour, label=c["schedule"])
        ax.set_xticks(range(len(tenants)))
        ax.set_xticklabels(tenants, fontsize=8)
        ax.set_title(f"{scenario}: the other tenants beside each schedule", fontsize=9)
        ax.set_ylabel("goodput, Mbit/s (median, 95% interval)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, out, "tenants", made)
