#!/usr/bin/env python3
"""The report's port figure from a fabric's `ports` lines, without root: each port's utilisation
and drops, and beside them the KiB its queues held (the most at a sample in each column); a log
written before queues were sampled draws utilisation alone, and beside a cell that has queues says
it has none; a run without port lines draws nothing."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")
from report_ports import fig_ports, port_series  # noqa: E402

RATE = 8 * 1024 * 100  # bits/s: 10 KiB in 0.1 s fill it


def events(queues):
    """Two ports, three samples 0.1 s apart: port 0 full and queueing, port 1 idle, one drop."""
    out = [{"kind": "start", "t_s": 0, "base_rates_bps": {"up": RATE, "nic": RATE}},
           {"kind": "port_index", "t_s": 0.1, "ports": [{"link": "up", "node": "leaf0"}, {"link": "nic", "node": "h0"}]}]
    for i, (q0, q1) in enumerate([(4, 0), (9, 0), (7, 1)]):
        line = {"kind": "ports", "t_s": 0.1 * (i + 1), "kib": [10, 0], "drops": [1 if i == 2 else 0, 0]}
        if queues:
            line["queue_kib"] = [q0, q1]
        out.append(line)
    return out


class Run:
    def __init__(self, cells):
        self.cells = cells
        self.scenarios = list(cells)
        self.schedules = ["1f1b"]
        self.info = {s: {"rank_hosts": ["h0"], "rank_ports": ["up@leaf0"]} for s in cells}

    def events(self, scenario, schedule):
        return self.cells[scenario]


def draw(run):
    figures, missing = {}, []
    fig_ports(run, "/nonexistent", [], missing, lambda fig, out, name, made: figures.update({name: fig}))
    return figures, missing


ports, edges, util, drops, queued = port_series(events(True))
assert ports == ["up@leaf0", "nic@h0"], ports
assert [round(u, 6) for u in util[0]] == [1.0, 1.0, 1.0] and util[1] == [0, 0, 0], util
assert drops == [[0, 0, 1], [0, 0, 0]], drops
assert queued == [[4, 9, 7], [0, 0, 1]], queued
assert port_series(events(False))[4] is None

figures, missing = draw(Run({"busy": events(True), "old": events(False)}))
fig = figures["ports"]
titles = [ax.get_title() for ax in fig.axes]
assert any("at most 9" in t for t in titles), titles  # the queue panel of the cell that has them
assert any("no queue samples" in t for t in titles), titles  # and the one that has none says so
assert not missing, missing

figures, missing = draw(Run({"old": events(False)}))
titles = [ax.get_title() for ax in figures["ports"].axes]
assert not any("queue" in t for t in titles), titles  # no queue column at all

figures, missing = draw(Run({"chain": [{"kind": "start", "t_s": 0}]}))
assert figures == {} and missing == [("ports", "no `ports` lines in events/ for the fabric's cells")], missing
print("report_ports: ok")
