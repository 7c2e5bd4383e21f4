"""index.html of a report: the summary's table, the figures drawn and those not drawn. Every
field comes from a file the user may have edited, so every one is escaped."""
import html
import json
import os


def esc(value):
    """Any field of the summary, as HTML text: a crafted file's markup stays text."""
    return html.escape(str(value))


def number(value, digits):
    """A number with `digits` decimals; anything else (null, a crafted string) as escaped text."""
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else esc(value)


def write_index(r, out, made, missing):
    rows = "".join(
        f"<tr><td>{esc(c['scenario'])}</td><td>{esc(c['schedule'])}</td><td>{esc(c['repetitions'])}</td>"
        f"<td>{number(c['throughput']['median'], 1)}</td><td>&plusmn;{number(c['throughput']['ci95'], 1)}</td>"
        f"<td>{number(c['speedup']['median'], 3)} &plusmn;{number(c['speedup']['ci95'], 3)}</td></tr>"
        for c in r.cells)
    figs = "".join(f"<h2>{esc(n)}</h2><img src=\"{esc(n)}.svg\" alt=\"{esc(n)}\">" for n in made)
    gaps = "".join(f"<li><b>{esc(n)}</b>: {esc(why)}</li>" for n, why in missing)
    env = esc(json.dumps({k: r.env.get(k) for k in ("version", "git_commit", "kernel", "started", "mode")}))
    text = f"""<!doctype html><html><head><meta charset="utf-8"><title>contend: {esc(r.summary.get('experiment', ''))}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}img{{max-width:100%}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}</style></head><body>
<h1>{esc(r.summary.get('experiment', ''))} ({esc(r.summary.get('mode', ''))})</h1>
<p>{env}</p>
<table><tr><th>scenario</th><th>schedule</th><th>reps</th><th>{esc(r.unit())}</th><th>95% CI</th><th>speedup vs {esc(r.summary.get('baseline', ''))}</th></tr>{rows}</table>
{figs}
<h2>Not drawn</h2><ul>{gaps or '<li>every figure was drawn</li>'}</ul>
</body></html>
"""
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(text)
