"""The fabric figure of a report: every port's utilisation over a cell's time, from the `ports`
lines the player writes on a fabric (KiB and drops per port per sample period, KiB queued at each
sample), the ports the workload's transfers crossed marked, where the drops were and where the
queues built."""
import matplotlib.pyplot as plt

BINS = 120  # columns per panel: samples are summed into at most this many


def port_series(events):
    """(ports, times, utilisation rows, drop rows, queue rows) of one cell's events, or None without
    port lines. A port is "<link>@<node>"; utilisation is the bytes it sent over what its link's
    base rate carries in the time (a rate the timeline changed is not followed); a queue cell is
    the most KiB the port held at a sample in the column (None for logs written before queues
    were sampled)."""
    start = next((e for e in events if e.get("kind") == "start"), None)
    index = next((e for e in events if e.get("kind") == "port_index"), None)
    lines = [e for e in events if e.get("kind") == "ports"]
    if start is None or index is None or len(lines) < 2:
        return None
    rates = start.get("base_rates_bps", {})
    ports = [f"{p['link']}@{p['node']}" for p in index["ports"]]
    times = [e["t_s"] for e in lines]
    step = max(1, -(-len(lines) // BINS))
    util = [[] for _ in ports]
    drops = [[] for _ in ports]
    queued = [[] for _ in ports] if all("queue_kib" in e for e in lines) else None
    edges = []
    for b in range(0, len(lines), step):
        chunk = lines[b:b + step]
        span = chunk[-1]["t_s"] - (lines[b - 1]["t_s"] if b > 0 else chunk[0]["t_s"] - 0.1)
        edges.append(chunk[0]["t_s"])
        for i, p in enumerate(index["ports"]):
            kib = sum(e["kib"][i] for e in chunk)
            rate = rates.get(p["link"], 0)
            util[i].append(kib * 1024 * 8 / (rate * span) if rate > 0 and span > 0 else 0)
            drops[i].append(sum(e["drops"][i] for e in chunk))
            if queued is not None:
                queued[i].append(max(e["queue_kib"][i] for e in chunk))
    edges.append(times[-1])
    return ports, edges, util, drops, queued


def fig_ports(r, out, made, missing, save):
    """(8) Per scenario on a fabric: each port's utilisation over time (repetition 1 of the first
    schedule), the ports the workload's transfers crossed marked with *, drops as red crosses,
    and beside it the KiB each port's queues held."""
    panels = []
    for scenario in r.scenarios:
        events = r.events(scenario, r.schedules[0]) if r.schedules else None
        series = port_series(events) if events else None
        if series is not None:
            panels.append((scenario, series))
    if not panels:
        if any("rank_hosts" in r.info.get(s, {}) for s in r.scenarios):  # a fabric, but its samples are not there
            missing.append(("ports", "no `ports` lines in events/ for the fabric's cells"))
        return  # else no fabric: nothing to draw, and nothing missing
    rows = max(len(s[1][0]) for s in panels)
    queues = any(s[1][4] is not None for s in panels)
    size = (16 if queues else 11, 0.5 + 0.22 * rows * len(panels))
    fig, axes = plt.subplots(len(panels), 2 if queues else 1, figsize=size, squeeze=False)
    for panel, (scenario, (ports, edges, util, drops, queued)) in enumerate(panels):
        ax = axes[panel, 0]
        crossed = set(r.info.get(scenario, {}).get("rank_ports", []))
        mesh = ax.pcolormesh(edges, range(len(ports) + 1), util, vmin=0, vmax=1, cmap="viridis", shading="flat")
        for i, row in enumerate(drops):
            xs = [edges[j] for j, d in enumerate(row) if d > 0]
            ax.scatter(xs, [i + 0.5] * len(xs), marker="x", color="red", s=12)
        ax.set_yticks([i + 0.5 for i in range(len(ports))])
        ax.set_yticklabels([("* " if p in crossed else "") + p for p in ports], fontsize=6)
        hosts = ", ".join(r.info.get(scenario, {}).get("rank_hosts", []))
        ax.set_title(f"{scenario}: ranks on {hosts or '?'} (* their ports; x drops)", fontsize=9)
        ax.set_xlabel("time in the cell (s)")
        fig.colorbar(mesh, ax=ax, label="utilisation of the port's rate")
        if queues:
            draw_queues(fig, axes[panel, 1], edges, ports, queued)
    save(fig, out, "ports", made)


def draw_queues(fig, ax, edges, ports, queued):
    """Each port's queue over the cell: the most KiB held at a sample in each column."""
    if queued is None:
        ax.set_axis_off()
        ax.set_title("no queue samples in this cell's log", fontsize=9)
        return
    most = max((max(row) for row in queued if row), default=0)
    mesh = ax.pcolormesh(edges, range(len(ports) + 1), queued, vmin=0, vmax=max(most, 1), cmap="magma",
                         shading="flat")
    ax.set_yticks([i + 0.5 for i in range(len(ports))])
    ax.set_yticklabels([])
    ax.set_title(f"queued (KiB, the most at a sample in each column; at most {most})", fontsize=9)
    ax.set_xlabel("time in the cell (s)")
    fig.colorbar(mesh, ax=ax, label="KiB queued")
