#!/usr/bin/python3
"""Draw the step timeline of traced ranks from a `clustersim run --trace` file.

    /usr/bin/python3 scripts/plot_timeline.py TRACE.json -o FILE.png
        [--ranks 0,8] [--streams compute,comm] [--start MS] [--end MS]
        [--title TEXT] [--data FILE.json]

TRACE.json is the Chrome/Perfetto trace `run --trace` (or `replay
--trace-out`) writes: one process per rank, one track per stream. Each
(rank, stream) becomes a row, ranks in order and streams as the trace
orders them (host, compute, comm, reduce, tp, pcie, then the others),
coloured by kind (GEMM, attention, other compute; all-gather,
reduce-scatter, all-reduce, other communication; copies, host). The part of
a collective a rank spent waiting for the group's last member (args.wait_us)
is drawn hatched before it, so that exposed waiting stands out.

Without --start/--end it draws two windows: the whole trace (one step),
its forward, backward and optimizer phases named above it, and under it
one layer (the backward pass of the middle transformer block, shaded in
the upper window), where each kernel is wide enough to see. --start and
--end (ms; either alone: from the trace's start or to its end) draw that
one window instead. A window is cut into one column per pixel of the
plot's width, and each row is drawn per column as how much of that column
each kind kept the stream busy, stacked from the row's baseline: a kernel
a column wide or wider is a full-height bar; kernels narrower than a pixel,
which no picture can draw one by one, add up to their share of the column
(a column half as tall as the row: a stream busy half that time). So the
two traced ranks of the 64-GPU TP step (12.7k events) draw in 2-3 s, all
64 ranks (250k events on their compute streams) in about 6 s of CPU.

--ranks picks ranks (such as 0,8-15; default: all in the trace), --streams
streams (default: all; past 32 rows, the compute streams alone, which show
each rank's busy and idle time). A window is 0.32 inches per row (rows
shrink past 32), the image 12 inches wide at 120 dpi: one window of 3 rows
is 1440 x 283 pixels. --data FILE.json writes what was drawn: per window
its span, columns and rectangles, and per row the busy milliseconds of each
kind, summed from the drawn rectangles. Progress and the files written go
to stderr. Needs matplotlib and numpy (Debian: python3-matplotlib; run with
/usr/bin/python3). Writes the image atomically (temporary file, then
rename).
"""

import argparse
import json
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.path import Path  # noqa: E402
from plot_common import Script, figure_pixels, save_figure, write_drawn  # noqa: E402

SCRIPT = Script("plot_timeline.py")

# Colour by kind: (label, colour); the kind of an event from its category.
KINDS = {
    "gemm": ("GEMM", "#1f77b4"),
    "attention": ("attention", "#9467bd"),
    "compute": ("other compute", "#aec7e8"),
    "all_gather": ("all-gather", "#2ca02c"),
    "reduce_scatter": ("reduce-scatter", "#d62728"),
    "all_reduce": ("all-reduce", "#ff7f0e"),
    "comm": ("other communication", "#8c564b"),
    "copy": ("copies", "#7f7f7f"),
    "host": ("host", "#c7c7c7"),
}
COMPUTE_CATEGORIES = {"gemm", "attention"}
COMM_CATEGORIES = {"all_gather", "reduce_scatter", "all_reduce"}
WAIT = "wait:"  # prefix of the layer drawn hatched: waiting before a collective of that kind
LAYERS = list(KINDS) + [WAIT + k for k in KINDS]

DPI = 120
WIDTH_IN = 12.0
LEFT, RIGHT = 0.16, 0.98
ROW_IN = 0.32
MAX_ROWS_FULL = 32  # past this many rows they share a fixed height
BAR = 0.7  # of a row's height


def kind_of(track, category):
    if track == "host" or track == "cpu":
        return "host"
    if track == "pcie" or category == "async_tp":
        return "copy"
    if track == "compute":
        return category if category in COMPUTE_CATEGORIES else "compute"
    return category if category in COMM_CATEGORIES else "comm"


def read_trace(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        SCRIPT.fail(f"{path}: cannot read the file: {e.strerror}")
    except json.JSONDecodeError as e:
        SCRIPT.fail(f"{path}:{e.lineno}:{e.colno}: expected a clustersim Chrome trace (JSON), "
                    f"found invalid JSON: {e.msg}")
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        SCRIPT.fail(f"{path}: expected a clustersim Chrome trace (an object with traceEvents), "
                    f"found {type(data).__name__}")
    tracks = {}  # (pid, tid) -> name
    bars = []
    for e in events:
        if not isinstance(e, dict):
            continue
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            tracks[(e.get("pid"), e.get("tid"))] = e.get("args", {}).get("name", "")
        elif e.get("ph") == "X":
            bars.append(e)
    if not bars:
        SCRIPT.fail(f"{path}: expected complete events (\"ph\": \"X\"), found none")
    return tracks, bars


def parse_ranks(text):
    ranks = set()
    for part in text.split(","):
        part = part.strip()
        lo, _, hi = part.partition("-")
        try:
            first = int(lo)
            last = int(hi) if hi else first
        except ValueError:
            SCRIPT.fail(f"--ranks: expected ranks such as 0,8-15, found '{text}'")
        if last < first:
            SCRIPT.fail(f"--ranks: expected ranks such as 0,8-15, found '{text}'")
        ranks.update(range(first, last + 1))
    return ranks


def rank_ranges(ranks):
    """[0, 1, 2, 3, 8] -> '0-3, 8'."""
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ", ".join(parts)


def intervals(bars, tracks, row_of, ranks, path):
    """Per (row, layer): start and end times in ms; the phases' spans and
    each (phase, unit)'s span on the ranks' compute streams (drawn or not),
    for naming the phases and picking a layer to zoom into."""
    spans = {}
    phases = {}
    units = {}
    for b in bars:
        key = (b.get("pid"), b.get("tid"))
        row = row_of.get(key)
        track = tracks.get(key, "")
        if row is None and (track != "compute" or key[0] not in ranks):
            continue
        try:
            start = float(b.get("ts", 0)) / 1e3
            dur = float(b.get("dur", 0)) / 1e3
            args = b.get("args") or {}
            wait = float(args.get("wait_us", 0)) / 1e3
        except (TypeError, ValueError, AttributeError):
            SCRIPT.fail(f"{path}: expected numbers in ts, dur and args.wait_us, found "
                        f"{b.get('ts')!r}, {b.get('dur')!r} in event '{b.get('name')}'")
        kind = kind_of(track, b.get("cat", ""))
        if row is not None:
            spans.setdefault((row, kind), []).append((start, start + max(dur, 0.0)))
            if wait > 0:
                spans.setdefault((row, WAIT + kind), []).append((start - wait, start))
        if track == "compute" and isinstance(args.get("phase"), str):
            phase = args["phase"]
            for table, name in ((phases, phase), (units, (phase, args.get("unit")))):
                lo, hi = table.get(name, (start, start + dur))
                table[name] = (min(lo, start), max(hi, start + dur))
    return {k: np.array(v, dtype=float) for k, v in spans.items()}, phases, units


def layer_window(units):
    """A window around the backward pass (recomputation included) of the
    middle transformer block, or of its forward pass in a trace without a
    backward one: a layer's kernels and collectives, each wide enough to
    see. None when the trace does not name its blocks."""
    for phases in (("backward", "recompute"), ("forward",)):
        blocks = sorted({int(u[6:]) for p, u in units if p in phases and isinstance(u, str)
                         and u.startswith("block ") and u[6:].isdigit()})
        if blocks:
            unit = f"block {blocks[len(blocks) // 2]}"
            lo = min(units[(p, unit)][0] for p in phases if (p, unit) in units)
            hi = max(units[(p, unit)][1] for p in phases if (p, unit) in units)
            margin = 0.15 * (hi - lo)
            return lo - margin, hi + margin, f"{unit}, {' and '.join(phases)}"
    return None


def busy_before(starts, ends, t):
    """Total time the intervals (starts[i], ends[i]) cover before each t:
    sum over intervals starting before t of min(t, end) - start, from sorted
    starts and ends and their prefix sums, so that every column edge of a
    row costs a binary search rather than a pass over the events."""
    s = np.sort(starts)
    e = np.sort(ends)
    s_sum = np.concatenate(([0.0], np.cumsum(s)))
    e_sum = np.concatenate(([0.0], np.cumsum(e)))
    n_s = np.searchsorted(s, t, side="left")
    n_e = np.searchsorted(e, t, side="right")
    return e_sum[n_e] + t * (n_s - n_e) - s_sum[n_s]


def occupancy(spans, rows, lo, hi, columns):
    """occ[row, layer, column]: the share of each column's time each layer
    kept the row busy. Overlapping events of one layer count once at most;
    where a row's layers add up to more than the column (a stream with
    concurrent work) they are scaled to fit it."""
    edges = np.linspace(lo, hi, columns + 1)
    width = (hi - lo) / columns
    occ = np.zeros((rows, len(LAYERS), columns))
    for (row, layer), iv in spans.items():
        covered = np.diff(busy_before(iv[:, 0], iv[:, 1], edges)) / width
        occ[row, LAYERS.index(layer)] = np.clip(covered, 0.0, 1.0)
    total = occ.sum(axis=1, keepdims=True)
    return np.where(total > 1.0, occ / np.maximum(total, 1e-12), occ), edges


def draw_rows(ax, occ, edges):
    """Draws each row as runs of columns with the same stack of layers, one
    rectangle per layer per run: a kernel many pixels wide is one rectangle,
    and a row never has more rectangles than columns x layers. A row's
    rectangles of one layer are one compound path: Agg fills and hatches a
    path at a time, and per rectangle the hatching alone took seconds."""
    paths = {layer: [] for layer in LAYERS}
    rows, layers, columns = occ.shape
    for row in range(rows):
        f = occ[row]
        changes = np.flatnonzero(np.any(f[:, 1:] != f[:, :-1], axis=0)) + 1
        starts = np.concatenate(([0], changes))
        stops = np.concatenate((changes, [columns]))
        x0, x1 = edges[starts], edges[stops]
        base = np.full(len(starts), row + BAR / 2)  # the bar's baseline (the y axis is inverted)
        for li, layer in enumerate(LAYERS):
            h = f[li, starts] * BAR
            keep = h > 0
            if np.any(keep):
                b, t = base[keep], base[keep] - h[keep]
                quads = np.stack([np.stack([x0[keep], b], 1), np.stack([x1[keep], b], 1),
                                  np.stack([x1[keep], t], 1), np.stack([x0[keep], t], 1)], 1)
                paths[layer].append(Path.make_compound_path_from_polys(quads))
            base = base - h
    drawn = {}
    for layer, parts in paths.items():
        if not parts:
            continue
        kind = layer[len(WAIT):] if layer.startswith(WAIT) else layer
        colour = KINDS[kind][1]
        if layer.startswith(WAIT):
            pc = PathCollection(parts, facecolors="white", edgecolors=colour, hatch="////",
                                linewidths=0)
        else:
            pc = PathCollection(parts, facecolors=colour, linewidths=0)
        ax.add_collection(pc)
        drawn[layer] = pc
    return drawn


def drawn_busy(drawn, rows):
    """Per row and layer, the milliseconds the drawn rectangles stand for
    (width x height / the bar's height), read back from the collections;
    and how many rectangles there are."""
    busy = [dict() for _ in range(rows)]
    count = 0
    for layer, pc in drawn.items():
        for path in pc.get_paths():
            quads = path.vertices.reshape(-1, 5, 2)  # 4 corners and the closing vertex
            width = quads[:, 1, 0] - quads[:, 0, 0]
            height = quads[:, 0, 1] - quads[:, 2, 1]
            row = int(round((quads[0, 0, 1] + quads[0, 2, 1]) / 2))  # rows are at integer y
            busy[row][layer] = busy[row].get(layer, 0.0) + float(np.sum(width * height)) / BAR
            count += len(quads)
    return busy, count


def name_phases(ax, phases, lo, hi):
    """Names the forward, backward and optimizer spans above the rows, a
    thin bracket over each; a phase inside another's span (recomputation
    inside the backward pass) is left to it."""
    spans = {}
    for name, (a, b) in phases.items():
        a, b = max(a, lo), min(b, hi)
        if b > a:
            spans[name] = (a, b)
    for name, (a, b) in sorted(spans.items(), key=lambda p: p[1][0]):
        if any(o != name and oa <= a and b <= ob and (ob - oa) > (b - a)
               for o, (oa, ob) in spans.items()):
            continue
        ax.annotate("", xy=(a, 1.01), xytext=(b, 1.01), xycoords=("data", "axes fraction"),
                    arrowprops=dict(arrowstyle="|-|,widthA=0.2,widthB=0.2", color="0.5",
                                    linewidth=0.7, shrinkA=0, shrinkB=0))
        if (b - a) / (hi - lo) > 0.06:
            ax.text((a + b) / 2, 1.02, name, transform=ax.get_xaxis_transform(), ha="center",
                    va="bottom", fontsize=7, color="0.3")


def draw_panel(ax, spans, phases, rows, labels, lo, hi, columns):
    """One window of the timeline on `ax`; returns what it drew."""
    occ, edges = occupancy(spans, len(rows), lo, hi, columns)
    drawn = draw_rows(ax, occ, edges)
    busy, count = drawn_busy(drawn, len(rows))
    step = max(1, int(np.ceil(len(rows) / MAX_ROWS_FULL)))
    ax.set_yticks(range(0, len(rows), step))
    ax.set_yticklabels(labels[::step], fontsize=10 if step == 1 else 8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(lo, hi)
    column_ms = (hi - lo) / columns
    note = (f"; 1 pixel = {column_ms:,.2f} ms, shorter work drawn as its share of the pixel's "
            "height" if column_ms >= 0.05 else "")
    ax.set_xlabel(f"time in the step (ms){note}", fontsize=9 if note else 10)
    if phases:
        name_phases(ax, phases, lo, hi)
    return {"window_ms": [lo, hi], "xlim": list(ax.get_xlim()), "columns": columns,
            "column_ms": column_ms, "rectangles": count,
            "rows": [{"label": labels[i], "busy_ms": dict(sorted(busy[i].items()))}
                     for i in range(len(rows))]}, set(drawn)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--ranks", help="ranks to draw, such as 0,8-15 (default: all)")
    parser.add_argument("--streams", help="streams to draw, such as compute,comm (default: "
                        f"all; the compute streams alone past {MAX_ROWS_FULL} rows)")
    parser.add_argument("--start", type=float, help="window start, ms (default: the trace's)")
    parser.add_argument("--end", type=float, help="window end, ms (default: the trace's)")
    parser.add_argument("--title")
    parser.add_argument("--data", help="write what was drawn to this JSON file")
    args = parser.parse_args()
    SCRIPT.check_output(args.output)
    if args.data:
        SCRIPT.check_output(args.data, "--data")
    began = time.monotonic()

    tracks, bars = read_trace(args.trace)
    wanted = parse_ranks(args.ranks) if args.ranks else None
    rows = sorted({(b.get("pid"), b.get("tid")) for b in bars
                   if wanted is None or b.get("pid") in wanted})
    if not rows:
        SCRIPT.fail(f"--ranks: expected ranks the trace holds, found none of '{args.ranks}'")
    ranks = sorted({pid for pid, _ in rows})
    names = sorted({tracks.get(r, "") for r in rows}, key=lambda n: min(
        tid for (_, tid) in rows if tracks.get((_, tid), "") == n))
    streams = [s.strip() for s in args.streams.split(",")] if args.streams else None
    if streams is None and len(rows) > MAX_ROWS_FULL and "compute" in names:
        # A row per stream of every rank would be a few pixels tall: the
        # compute streams show each rank's busy and idle time.
        streams = ["compute"]
        SCRIPT.say(f"{len(rows)} rows ({len(ranks)} ranks x {', '.join(names)}) would each be "
                   f"a few pixels tall: drawing the compute streams (--streams or --ranks "
                   f"choose)")
    if streams:
        unknown = [s for s in streams if s not in names]
        if unknown:
            SCRIPT.fail(f"--streams: expected streams the trace holds ({', '.join(names)}), "
                        f"found '{unknown[0]}'")
        rows = [r for r in rows if tracks.get(r, "") in streams]
    row_of = {r: i for i, r in enumerate(rows)}
    spans, phases, units = intervals(bars, tracks, row_of, set(ranks), args.trace)
    if not spans:
        SCRIPT.fail(f"{args.trace}: expected events on the rows to draw, found none")
    events = sum(len(iv) for k, iv in spans.items() if not k[1].startswith(WAIT))
    SCRIPT.say(f"{args.trace}: {events:,} events on {len(rows)} rows of {len(ranks)} rank"
               f"{'s' if len(ranks) != 1 else ''} ({time.monotonic() - began:.1f} s to read)")
    first = min(iv[:, 0].min() for k, iv in spans.items() if not k[1].startswith(WAIT))
    last = max(iv[:, 1].max() for iv in spans.values())
    lo = args.start if args.start is not None else min(first, 0.0)
    hi = args.end if args.end is not None else last
    if hi <= lo:
        SCRIPT.fail(f"--start/--end: expected a window that ends after it starts, found "
                    f"{lo:g}-{hi:g} ms")
    # Without a window: the whole step, and under it one layer, whose
    # kernels a whole step's pixels cannot show one by one.
    whole = args.start is None and args.end is None
    zoom = layer_window(units) if whole else None
    windows = [(lo, hi, "the whole trace" if whole else "--start/--end")]
    if zoom:
        windows.append(zoom)

    shown = min(len(rows), MAX_ROWS_FULL)
    panel_in = ROW_IN * shown
    gap_in = 0.9  # the upper panel's axis label and the lower one's phase names
    height = 1.4 + panel_in * len(windows) + gap_in * (len(windows) - 1)
    fig = plt.figure(figsize=(WIDTH_IN, height))
    columns = int(round(WIDTH_IN * DPI * (RIGHT - LEFT)))
    labels = [f"rank {pid} {tracks.get((pid, tid), tid)}" for pid, tid in rows]
    panels, used = [], set()
    for n, (a, b, what) in enumerate(windows):
        top_in = 0.45 + n * (panel_in + gap_in)
        ax = fig.add_axes([LEFT, 1 - (top_in + panel_in) / height, RIGHT - LEFT,
                           panel_in / height])
        # The zoomed layer lies inside one phase: its title names it.
        panel, drawn = draw_panel(ax, spans, phases if n == 0 else {}, rows, labels, a, b,
                                  columns)
        panel["shows"] = what
        panels.append(panel)
        used |= drawn
        SCRIPT.say(f"window {a:,.1f}-{b:,.1f} ms ({what}): {columns} columns of "
                   f"{panel['column_ms'] * 1e3:,.1f} us, each kind drawn as its share of "
                   f"every column, {panel['rectangles']:,} rectangles")
        if n == 0:
            ax.set_title(args.title or f"{os.path.basename(args.trace)}: rank"
                         f"{'s' if len(ranks) > 1 else ''} {rank_ranges(ranks)}",
                         pad=16)
            if zoom:
                ax.axvspan(zoom[0], zoom[1], color="#ffd54f", alpha=0.35, zorder=0, linewidth=0)
        else:
            ax.set_title(f"zoom: {what} ({a:,.1f}-{b:,.1f} ms, shaded above)", fontsize=9,
                         pad=16)
    handles = [mpatches.Patch(color=KINDS[k][1], label=KINDS[k][0]) for k in KINDS if k in used]
    if any(layer.startswith(WAIT) for layer in used):
        handles.append(mpatches.Patch(facecolor="white", edgecolor="black", hatch="////",
                                      label="waiting for the group"))
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(handles), 6), fontsize=8, frameon=False)

    save_figure(fig, args.output, dpi=DPI)
    SCRIPT.say(f"wrote {args.output} ({time.monotonic() - began:.1f} s)"
               + ("; --start/--end MS draw one window" if whole else ""))
    if args.data:
        write_drawn(args.data, {
            "events": events, "figure_px": figure_pixels(fig, DPI), "panels": panels,
            "phases": {k: list(v) for k, v in sorted(phases.items())},
            "legend": [h.get_label() for h in handles],
        })
        SCRIPT.say(f"wrote {args.data}")


if __name__ == "__main__":
    main()
