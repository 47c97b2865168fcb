"""kiln.board: a picture of a log directory where TensorBoard cannot be installed.

`python3 -m kiln.board LOGDIR --out report.html` reads every event file under LOGDIR
(kiln.summary._reader: runs are the sub-directories, as TensorBoard names them) and writes
one HTML page that needs nothing else (no scripts, fonts or network): for each scalar tag
a line chart of every run over the steps plus a table of first/last/min/max, for each
histogram tag and run the buckets of each step drawn one above the other (TensorBoard's
"offset" view), image summaries as their PNGs inline (the chosen steps of each tag and
run), text summaries as tables, other summaries (the Keras model's JSON) as
folded text. The page is well-formed XML as well as HTML, so tests parse it strictly."""
import argparse
import base64
import datetime
import html
import math
import os

import numpy as np

from ..summary._reader import read_logdir

__all__ = ["render_html", "write_report", "main"]

# Run colours: TensorBoard's default palette order, readable on white.
_PALETTE = ["#ff7043", "#0077bb", "#009988", "#ee3377", "#33bbee", "#cc3311", "#aa3377", "#bbbbbb",
            "#332288", "#117733"]
_WIDTH, _HEIGHT = 560, 300
_MARGIN_LEFT, _MARGIN_RIGHT, _MARGIN_TOP, _MARGIN_BOTTOM = 64, 16, 12, 36
# A histogram view draws at most this many steps (evenly chosen, always the first and last).
_MAX_HISTOGRAM_STEPS = 24
# An image card shows at most this many steps; small images are scaled up (whole times) until
# their shorter side reaches _IMAGE_MIN_SIDE pixels, their longer side staying within _IMAGE_MAX_SIDE.
_MAX_IMAGE_STEPS, _IMAGE_MIN_SIDE, _IMAGE_MAX_SIDE = 6, 96, 480

_STYLE = """
body { font-family: sans-serif; margin: 0 24px 24px; color: #212121; background: #f5f5f5; }
h1 { font-size: 20px; margin: 16px 0 4px; } h2 { font-size: 17px; margin: 24px 0 8px; }
h3 { font-size: 14px; margin: 0 0 6px; font-family: monospace; }
.meta { color: #616161; font-size: 13px; }
.cards { display: flex; flex-wrap: wrap; gap: 16px; }
.card { background: #fff; border-radius: 4px; box-shadow: 0 1px 3px rgba(0,0,0,.2); padding: 12px; }
table { border-collapse: collapse; font-size: 12px; margin-top: 6px; }
td, th { border-bottom: 1px solid #e0e0e0; padding: 2px 8px; text-align: right; }
th { color: #616161; font-weight: normal; } td.run, th.run { text-align: left; }
td.text { text-align: left; white-space: pre-wrap; font-family: monospace; max-width: 720px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; }
svg text { font-size: 11px; fill: #616161; }
.images { display: flex; align-items: center; gap: 6px; margin: 4px 0; }
.images img { image-rendering: pixelated; border: 1px solid #e0e0e0; }
pre { font-size: 11px; max-height: 320px; overflow: auto; background: #fafafa; padding: 6px; }
"""


# ---- numbers ---------------------------------------------------------------------------------
def _fmt(value):
    """A number as a short, exact-enough label (TensorBoard shows 4 significant digits)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def _ticks(low, high, count=5):
    """About `count` round tick values covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high == low:
        return [low]
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int(math.floor((high - first) / step + 1e-9)) + 1)]


def _padded_range(values):
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    if low == high:
        pad = abs(low) * 0.1 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.05
    return low - pad, high + pad


class _Frame:
    """Data coordinates to the chart's pixels."""

    def __init__(self, x_range, y_range, width=_WIDTH, height=_HEIGHT):
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        self.width, self.height = width, height
        self.left, self.right = _MARGIN_LEFT, width - _MARGIN_RIGHT
        self.top, self.bottom = _MARGIN_TOP, height - _MARGIN_BOTTOM

    def x(self, value):
        span = (self.x1 - self.x0) or 1.0
        return self.left + (value - self.x0) / span * (self.right - self.left)

    def y(self, value):
        span = (self.y1 - self.y0) or 1.0
        return self.bottom - (value - self.y0) / span * (self.bottom - self.top)

    def axes(self, x_label, y_ticks=True):
        out = [f'<rect x="{self.left}" y="{self.top}" width="{self.right - self.left}" '
               f'height="{self.bottom - self.top}" fill="none" stroke="#bdbdbd"/>']
        for t in _ticks(self.x0, self.x1):
            px = self.x(t)
            out.append(f'<line x1="{px:.1f}" y1="{self.bottom}" x2="{px:.1f}" y2="{self.bottom + 4}" stroke="#9e9e9e"/>'
                       f'<text x="{px:.1f}" y="{self.bottom + 16}" text-anchor="middle">{_fmt(t)}</text>')
        if y_ticks:
            for t in _ticks(self.y0, self.y1):
                py = self.y(t)
                out.append(f'<line x1="{self.left}" y1="{py:.1f}" x2="{self.right}" y2="{py:.1f}" stroke="#eeeeee"/>'
                           f'<text x="{self.left - 6}" y="{py + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
        out.append(f'<text x="{(self.left + self.right) / 2:.1f}" y="{self.height - 4}" '
                   f'text-anchor="middle">{html.escape(x_label)}</text>')
        return out


def _svg(body, width=_WIDTH, height=_HEIGHT, label=""):
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{html.escape(label)}">' + "".join(body) + "</svg>")


# ---- sections --------------------------------------------------------------------------------
def _scalar_card(tag, by_run, colours):
    """One tag's line chart (a polyline per run, points with their values as tooltips) and table."""
    steps = [p[0] for series in by_run.values() for p in series.points]
    values = [p[2] for series in by_run.values() for p in series.points]
    frame = _Frame((min(steps), max(steps) if max(steps) > min(steps) else min(steps) + 1), _padded_range(values))
    body = frame.axes("step")
    rows = []
    for run, series in by_run.items():
        colour = colours[run]
        points = [(s, v) for s, _, v in series.points]
        finite = [(s, v) for s, v in points if math.isfinite(v)]
        if len(finite) > 1:
            path = " ".join(f"{frame.x(s):.1f},{frame.y(v):.1f}" for s, v in finite)
            body.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for s, v in finite:
            body.append(f'<circle cx="{frame.x(s):.1f}" cy="{frame.y(v):.1f}" r="2.5" fill="{colour}">'
                        f'<title>{html.escape(run)} step {s}: {_fmt(v)}</title></circle>')
        values_only = [v for _, v in finite]
        rows.append(f'<tr><td class="run"><span class="swatch" style="background:{colour}"></span>'
                    f'{html.escape(run)}</td><td>{len(points)}</td><td>{points[-1][0]}</td>'
                    f'<td>{_fmt(points[-1][1])}</td><td>{_fmt(min(values_only)) if values_only else "NaN"}</td>'
                    f'<td>{_fmt(max(values_only)) if values_only else "NaN"}</td></tr>')
    table = ('<table><tr><th class="run">run</th><th>points</th><th>last step</th><th>last</th><th>min</th>'
             '<th>max</th></tr>' + "".join(rows) + "</table>")
    return (f'<div class="card" data-tag="{html.escape(tag)}"><h3>{html.escape(tag)}</h3>'
            + _svg(body, label=f"{tag} over steps") + table + "</div>")


def _chosen(points, limit=_MAX_HISTOGRAM_STEPS):
    if len(points) <= limit:
        return points
    index = sorted({round(i * (len(points) - 1) / (limit - 1)) for i in range(limit)})
    return [points[i] for i in index]


def _histogram_card(tag, run, series, colour):
    """The buckets of each step, the oldest at the back (top), each outline its own baseline."""
    points = _chosen(series.points)
    lefts = [float(b[:, 0].min()) for _, _, b in points if len(b)]
    rights = [float(b[:, 1].max()) for _, _, b in points if len(b)]
    low, high = (min(lefts), max(rights)) if lefts else (0.0, 1.0)
    if high == low:
        low, high = low - 0.5, high + 0.5
    peak = max([float(b[:, 2].max()) for _, _, b in points if len(b)] + [1.0])
    height = _HEIGHT
    frame = _Frame((low, high), (0, 1), height=height)
    body = frame.axes("value", y_ticks=False)
    rows = len(points)
    ridge = (frame.bottom - frame.top) * 0.45  # one histogram's full height
    spacing = ((frame.bottom - frame.top) - ridge) / max(rows - 1, 1)
    minimum_width = (high - low) / 200
    for i, (step, _, buckets) in enumerate(points):
        base = frame.top + ridge + i * spacing
        opacity = 0.35 + 0.65 * (i + 1) / rows
        outline = [f"{frame.left:.1f},{base:.1f}"]
        for left, right, count in buckets:
            if right - left < minimum_width:  # one value: a spike wide enough to see
                left, right = left - minimum_width / 2, right + minimum_width / 2
            top = base - count / peak * ridge
            outline += [f"{frame.x(left):.1f},{base:.1f}", f"{frame.x(left):.1f},{top:.1f}",
                        f"{frame.x(right):.1f},{top:.1f}", f"{frame.x(right):.1f},{base:.1f}"]
        outline.append(f"{frame.right:.1f},{base:.1f}")
        total = float(buckets[:, 2].sum()) if len(buckets) else 0.0
        body.append(f'<polygon points="{" ".join(outline)}" fill="{colour}" fill-opacity="{opacity * 0.25:.2f}" '
                    f'stroke="{colour}" stroke-opacity="{opacity:.2f}" stroke-width="1">'
                    f'<title>step {step}: {_fmt(total)} values</title></polygon>')
        if i in (0, rows - 1) or rows <= 6:
            body.append(f'<text x="{frame.right + 2}" y="{base:.1f}" text-anchor="end" dy="-2">{step}</text>')
    last_step, _, last = series.points[-1]
    summary = ""
    if len(last):
        mids = (last[:, 0] + last[:, 1]) / 2
        total = float(last[:, 2].sum())
        mean = float((mids * last[:, 2]).sum() / total) if total else float("nan")
        summary = (f'<table><tr><th class="run">run</th><th>steps</th><th>last step</th><th>values</th><th>min</th>'
                   f'<th>max</th><th>mean</th></tr><tr><td class="run">{html.escape(run)}</td>'
                   f'<td>{len(series.points)}</td><td>{last_step}</td><td>{_fmt(total)}</td>'
                   f'<td>{_fmt(float(last[:, 0].min()))}</td><td>{_fmt(float(last[:, 1].max()))}</td>'
                   f'<td>{_fmt(mean)}</td></tr></table>')
    return (f'<div class="card" data-tag="{html.escape(tag)}" data-run="{html.escape(run)}">'
            f'<h3>{html.escape(tag)} <span class="meta">({html.escape(run)})</span></h3>'
            + _svg(body, label=f"{tag} histograms of {run}") + summary + "</div>")


def _image_card(tag, run, series):
    """The images of the chosen steps (the last at the bottom), as inline PNGs; small ones
    are drawn larger (a whole scale, within _IMAGE_MAX_SIDE) with their pixels kept sharp."""
    rows = []
    for step, _, images in _chosen(series.points, _MAX_IMAGE_STEPS):
        scale = max(1, min(_IMAGE_MIN_SIDE // max(1, min(images.width, images.height)),
                           _IMAGE_MAX_SIDE // max(1, images.width, images.height)))
        pictures = "".join(
            f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}" width="{images.width * scale}" '
            f'height="{images.height * scale}" alt="{html.escape(tag)} step {step} image {i}" '
            f'title="step {step}, image {i} ({images.width}x{images.height})"/>'
            for i, png in enumerate(images.pngs))
        rows.append(f'<div class="images"><span class="meta">step {step}</span>{pictures or "(no images)"}</div>')
    return (f'<div class="card" data-tag="{html.escape(tag)}" data-run="{html.escape(run)}">'
            f'<h3>{html.escape(tag)} <span class="meta">({html.escape(run)})</span></h3>' + "".join(rows) + "</div>")


def _text_card(tag, run, series):
    rows = "".join(f'<tr><td>{step}</td><td class="text">{html.escape(str(value))}</td></tr>'
                   for step, _, value in series.points)
    return (f'<div class="card" data-tag="{html.escape(tag)}" data-run="{html.escape(run)}">'
            f'<h3>{html.escape(tag)} <span class="meta">({html.escape(run)})</span></h3>'
            f'<table><tr><th>step</th><th class="run">text</th></tr>{rows}</table></div>')


def _other_card(tag, run, series):
    step, _, value = series.points[-1]
    shown = value if isinstance(value, str) else np.array2string(np.asarray(value), threshold=200)
    return (f'<div class="card" data-tag="{html.escape(tag)}" data-run="{html.escape(run)}">'
            f'<h3>{html.escape(tag)} <span class="meta">({html.escape(run)}, {html.escape(series.kind)}, '
            f'step {step})</span></h3><details><summary>show</summary><pre>{html.escape(shown)}</pre>'
            f'</details></div>')


# ---- the page --------------------------------------------------------------------------------
def render_html(logdir, title=None):
    """The report page of `logdir` as a string."""
    runs = read_logdir(logdir)
    colours = {run: _PALETTE[i % len(_PALETTE)] for i, run in enumerate(runs)}
    scalars, histograms, images, texts, others = {}, [], [], [], []
    for run, tags in runs.items():
        for tag, series in tags.items():
            if not series.points:
                continue
            if series.kind == "scalars":
                scalars.setdefault(tag, {})[run] = series
            elif series.kind == "histograms":
                histograms.append((tag, run, series))
            elif series.kind == "images":
                images.append((tag, run, series))
            elif series.kind == "text":
                texts.append((tag, run, series))
            else:
                others.append((tag, run, series))
    title = title or f"Kiln board: {os.path.basename(os.path.abspath(logdir))}"
    legend = " ".join(f'<span><span class="swatch" style="background:{colours[r]}"></span>{html.escape(r)}</span>'
                      for r in runs)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"/>',
             f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f'<p class="meta">{html.escape(os.path.abspath(logdir))}: {len(runs)} run(s), written '
             f'{datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")}</p><p class="meta">{legend}</p>']

    def section(name, cards):
        if cards:
            parts.append(f'<h2 id="{name.lower()}">{name}</h2><div class="cards">' + "".join(cards) + "</div>")

    section("Scalars", [_scalar_card(tag, by_run, colours) for tag, by_run in sorted(scalars.items())])
    section("Histograms", [_histogram_card(tag, run, s, colours[run]) for tag, run, s in sorted(
        histograms, key=lambda item: (item[0], item[1]))])
    section("Images", [_image_card(tag, run, s) for tag, run, s in sorted(images, key=lambda item: item[:2])])
    section("Text", [_text_card(tag, run, s) for tag, run, s in texts])
    section("Other", [_other_card(tag, run, s) for tag, run, s in others])
    if not (scalars or histograms or images or texts or others):
        parts.append('<p class="meta">No summaries found.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(logdir, out, title=None):
    page = render_html(logdir, title)
    with open(out, "w", encoding="utf-8") as f:
        f.write(page)
    return out


def main(argv=None, prog="python3 -m kiln.board"):
    """The command line of `python3 -m kiln.board` and of `kiln-cli board` (which runs this)."""
    parser = argparse.ArgumentParser(prog=prog,
                                     description="Write one self-contained HTML page of a TensorBoard log directory.")
    parser.add_argument("logdir", help="the log directory (each sub-directory with event files is a run)")
    parser.add_argument("--out", default="report.html", help="the HTML file to write (default: report.html)")
    parser.add_argument("--title", default=None, help="the page's title")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.logdir):
        parser.error(f"{args.logdir}: no such directory")
    write_report(args.logdir, args.out, args.title)
    print(args.out)
    return 0
