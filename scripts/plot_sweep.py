#!/usr/bin/python3
"""Plot a `clustersim sweep` CSV.

    /usr/bin/python3 scripts/plot_sweep.py RESULTS.csv -o FILE.png [--metric mfu]
        [--x KEY] [--y KEY] [--title TEXT] [--data FILE.json]
    /usr/bin/python3 scripts/plot_sweep.py RESULTS.csv -o FILE.png --breakdown
        [--metric mfu] [--top N] [--title TEXT] [--data FILE.json]
    /usr/bin/python3 scripts/plot_sweep.py RESULTS.csv -o FILE.png --parts
        [--title TEXT] [--data FILE.json]

The swept keys are the CSV's columns before `status`. Every simulated point
is drawn at its own value, out-of-memory ones too (a sweep simulates them:
what the layout would give if it fitted), marked as such; points that were
not simulated (skipped: an invalid layout, or one that does not fit under
--fitting-only; failed) are marked where they would be, with the reason
below the plot.

With one swept key it draws --metric (default mfu; any numeric column after
`status`) against it: fitted points filled and joined, out-of-memory points
hollow red circles labelled OOM and their peak memory, points not simulated
crosses on the axis (red: out of memory under --fitting-only; grey: skipped
or failed). Every point is labelled with its value. The y axis starts at
zero, so that a 2% difference looks like one.

With two or more swept keys (or --x and --y) it draws a heatmap of the
metric over the first two, each cell the best value over any other swept key
(the best fitting point; the best out-of-memory one where none fits). Every
cell is labelled with its value; the colour scale starts at zero (so cells
1% apart share a colour and read alike) and its label gives the values'
range; the best cell is outlined. Out-of-memory cells are hatched red and
labelled OOM with their value, cells not simulated grey.

--breakdown draws where each simulated point's step went (compute, each
exposed communication, the pipeline bubble, sync wait, launch-bound, idle;
seconds per rank), out-of-memory bars hatched. A sweep of one key and up
to 16 points: one upright bar per point in grid order, points not simulated
marked in their place. Otherwise one horizontal bar per point, labelled with
the values of the keys that vary, best first by --metric, the best --top
(default 30; 0: all) drawn and the rest summed up below the plot, so that
72 points stay readable.

--parts compares the points of a sweep over parts (hardware: h100, b200,
...) in three panels side by side, one horizontal bar per simulated point in
the CSV's order, each labelled with its value: tokens/s per GPU, step time,
and tokens per joule per GPU at the GPU's power limit and at the system's
power per GPU (tokens_per_joule_gpu, tokens_per_joule_system). A point
without a power figure gets a note, not a bar of zero; a CSV from before the
energy columns gets a note in that panel. Out-of-memory points are hatched
and marked as not fitting; points not simulated are listed below the plot
with their reason.

The title says what was swept (the metric, the keys, the file); --title
replaces it. A sweep with no point to draw (all skipped or failed, or no
value of the metric) is an error: exit 1, a message, no image. --data
FILE.json writes what was drawn, read back from the figure: each point's
or cell's value and status, the axis limits, the bars' heights.
Progress and the files written go to stderr.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3).
Writes the image atomically (temporary file, then rename).
"""

import argparse
import csv
import math
import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from plot_common import Script, figure_pixels, save_figure, write_drawn  # noqa: E402

SCRIPT = Script("plot_sweep.py")
DPI = 120

LABELS = {
    "mfu": "MFU",
    "step_time_s": "step time (s)",
    "tokens_per_s_per_gpu": "tokens/s per GPU",
    "tflops_per_gpu": "TFLOP/s per GPU",
    "exposed_comm_s": "exposed communication (s)",
    "peak_memory_bytes": "peak memory (bytes)",
    "ettr_mean": "ETTR",
    "time_to_train_days": "time to train (days)",
}
LOWER_IS_BETTER = {"step_time_s", "exposed_comm_s", "time_to_train_days", "peak_memory_bytes"}
STATUSES = {"ok", "out_of_memory", "skipped", "failed"}
OOM_RED = "#d62728"
# How each state is named on the plot.
STATE_TEXT = {"oom": "OOM", "oom_not_run": "OOM, not run", "skipped": "skipped",
              "failed": "failed", "missing": "no point", "no_value": "no value"}
VERTICAL_MAX = 16  # --breakdown: upright bars up to this many points
TOP_DEFAULT = 30


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def short(key):
    return key.rsplit(".", 1)[-1]


def read_rows(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(line for line in f if not line.startswith("#"))
            rows = list(reader)
            fields = reader.fieldnames or []
    except OSError as e:
        SCRIPT.fail(f"{path}: cannot read the file: {e.strerror}")
    except (csv.Error, UnicodeDecodeError) as e:
        SCRIPT.fail(f"{path}: expected a clustersim sweep CSV, found unreadable text: {e}")
    if "status" not in fields:
        SCRIPT.fail(f"{path}: expected a clustersim sweep CSV (a 'status' column), found "
                    f"columns {fields}")
    keys = fields[: fields.index("status")]
    if not keys:
        SCRIPT.fail(f"{path}: expected the swept keys before the 'status' column, found none")
    for line, r in enumerate(rows, start=2):
        if r.get("status") not in STATUSES:
            SCRIPT.fail(f"{path}:{line}: expected a status of {', '.join(sorted(STATUSES))}, "
                        f"found '{r.get('status')}'")
    return rows, keys, fields


def state_of(r):
    """ok, oom (simulated, does not fit), oom_not_run (--fitting-only),
    skipped or failed."""
    if r["status"] == "out_of_memory":
        return "oom"
    if r["status"] == "skipped" and r.get("fits_in_memory") == "false":
        return "oom_not_run"
    return r["status"]


def sort_values(values):
    if all(number(v) is not None for v in values):
        return sorted(values, key=float)
    return sorted(values)


def better(a, b, metric):
    """True when value a is better than b for the metric."""
    return a < b if metric in LOWER_IS_BETTER else a > b


def best_point(rows, metric):
    """(state, value, row) of the point to draw for a group of rows: the
    best fitting one, else the best out-of-memory one, else the first not
    simulated (with its reason)."""
    for wanted in ("ok", "oom"):
        best = None
        for r in rows:
            v = number(r.get(metric))
            if state_of(r) == wanted and v is not None:
                if best is None or better(v, best[1], metric):
                    best = (wanted, v, r)
        if best:
            return best
    if not rows:
        return ("missing", None, None)
    order = ["oom_not_run", "failed", "skipped", "ok", "oom"]
    r = min(rows, key=lambda r: order.index(state_of(r)))
    state = state_of(r)
    return (state if state not in ("ok", "oom") else "no_value", None, r)


def gib(r):
    """', 214 GiB': a point's peak memory per GPU, for its OOM label."""
    v = number((r or {}).get("peak_memory_bytes"))
    return f", {v / 2**30:,.0f} GiB" if v else ""


def plural(n, noun):
    return f"{n} {noun}{'' if n == 1 else 's'}"


def fmt(v):
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:,.0f}"


def require_values(rows, metric, path):
    """Exits when no point has a value of the metric to draw."""
    if any(state_of(r) in ("ok", "oom") and number(r.get(metric)) is not None for r in rows):
        return
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    found = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no rows"
    why = next((r.get("reason") for r in rows if r.get("reason")), "")
    hint = f" (first reason: {why[:160]})" if why else ""
    if any(state_of(r) in ("ok", "oom") for r in rows):
        hint = " (--campaign adds ettr_mean and time_to_train_days)" if metric in (
            "ettr_mean", "time_to_train_days") else ""
        SCRIPT.fail(f"{path}: expected a value of {metric} in a simulated point, found none "
                    f"among {found}{hint}")
    SCRIPT.fail(f"{path}: expected at least one simulated point to plot, found {found}{hint}")


def reasons_note(points, key_text):
    """One line per point not simulated, for below the plot (reasons can be
    long: each is cut to a line)."""
    lines = []
    for p in points:
        if p["state"] in ("skipped", "failed", "oom_not_run") and p.get("reason"):
            lines.append(f"{key_text(p)}: {STATE_TEXT[p['state']]}: {p['reason']}"[:130])
    if len(lines) > 4:
        lines = lines[:3] + [f"... and {len(lines) - 3} more not simulated"]
    return "\n".join(lines)


def lines_plot(rows, x, metric, ax):
    xs = sort_values({r[x] for r in rows})
    numeric = all(number(v) is not None for v in xs)
    points = []
    for vx in xs:
        state, value, r = best_point([r for r in rows if r[x] == vx], metric)
        points.append({"x": vx, "pos": float(vx) if numeric else xs.index(vx), "state": state,
                       "value": value, "reason": (r or {}).get("reason", ""),
                       "peak": gib(r)})
    sim = [p for p in points if p["value"] is not None]
    ok = [p for p in sim if p["state"] == "ok"]
    oom = [p for p in sim if p["state"] == "oom"]
    rest = [p for p in points if p["value"] is None]
    if oom and ok:
        # The trend if every layout fitted, under the line of those that do.
        ax.plot([p["pos"] for p in sim], [p["value"] for p in sim], ":", color="0.6", zorder=1)
    artists = []
    if ok:
        line, = ax.plot([p["pos"] for p in ok], [p["value"] for p in ok], "o-", color="#1f77b4",
                        label="fits in memory", zorder=3)
        artists += [(p, line, i) for i, p in enumerate(ok)]
    if oom:
        sc = ax.scatter([p["pos"] for p in oom], [p["value"] for p in oom], s=46,
                        facecolors="none", edgecolors=OOM_RED, linewidths=1.5, zorder=3,
                        label="out of memory (simulated anyway)")
        artists += [(p, sc, i) for i, p in enumerate(oom)]
    for group, colour, label in (
            ([p for p in rest if p["state"] == "oom_not_run"], OOM_RED,
             "out of memory, not simulated"),
            ([p for p in rest if p["state"] != "oom_not_run"], "0.45", "not simulated")):
        if group:
            sc = ax.scatter([p["pos"] for p in group], [0.0] * len(group), marker="x", s=40,
                            color=colour, zorder=3, clip_on=False, label=label)
            artists += [(p, sc, i) for i, p in enumerate(group)]
    values = [p["value"] for p in sim]
    low, high = min(values), max(values)
    if low >= 0:
        ax.set_ylim(0, high * 1.15 if high > 0 else 1)
    else:
        ax.set_ylim(min(low * 1.15, 0), max(high * 1.15, 0))
    for p in points:
        text = STATE_TEXT.get(p["state"], "") if p["value"] is None else fmt(p["value"])
        if p["state"] in ("oom", "oom_not_run"):
            text += f"\nOOM{p['peak']}" if p["state"] == "oom" else p["peak"].replace(", ", "\n")
        colour = "0.35" if p["state"] not in ("ok", "oom", "oom_not_run") else (
            OOM_RED if p["state"] != "ok" else "black")
        ax.annotate(text, (p["pos"], p["value"] or 0.0), xytext=(0, 6), fontsize=8,
                    textcoords="offset points", ha="center", va="bottom", color=colour)
    if numeric and min(p["pos"] for p in points) > 0 and \
            max(p["pos"] for p in points) / min(p["pos"] for p in points) >= 8:
        ax.set_xscale("log", base=2)
        ax.set_xticks([p["pos"] for p in points], [p["x"] for p in points])
        ax.minorticks_off()
    elif not numeric:
        ax.set_xticks(range(len(xs)), xs)
    ax.margins(x=0.08)  # room for the labels of the first and last points
    ax.set_xlabel(x)
    ax.set_ylabel(LABELS.get(metric, metric))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    for p, artist, i in artists:
        if isinstance(artist, Line2D):
            p["drawn"] = [float(artist.get_xdata()[i]), float(artist.get_ydata()[i])]
        else:
            p["drawn"] = [float(v) for v in artist.get_offsets()[i]]
    record = {"kind": "line", "x_key": x, "metric": metric, "ylim": list(ax.get_ylim()),
              "points": [{"x": p["x"], "status": p["state"], "csv_value": p["value"],
                          "drawn_y": p["drawn"][1], "reason": p["reason"]} for p in points]}
    return record, reasons_note(points, lambda p: f"{short(x)}={p['x']}")


def heatmap(rows, x, y, metric, fig, ax):
    xs = sort_values({r[x] for r in rows})
    ys = sort_values({r[y] for r in rows})
    cells = {}
    for vy in ys:
        for vx in xs:
            state, value, r = best_point([r for r in rows if r[x] == vx and r[y] == vy], metric)
            cells[(vx, vy)] = {"x": vx, "y": vy, "state": state, "value": value,
                               "reason": (r or {}).get("reason", "")}
    ok = [c["value"] for c in cells.values() if c["state"] == "ok"]
    grid = np.array([[cells[(vx, vy)]["value"] if cells[(vx, vy)]["state"] == "ok" else np.nan
                      for vx in xs] for vy in ys], dtype=float)
    lower = metric in LOWER_IS_BETTER
    cmap = plt.get_cmap("viridis_r" if lower else "viridis").copy()
    cmap.set_bad("white")
    if ok:
        low, high = min(ok), max(ok)
        vmin, vmax = (0.0, high) if low >= 0 else (low, max(high, 0.0))
    else:
        vmin, vmax, low, high = 0.0, 1.0, 0.0, 0.0
    if vmax <= vmin:
        vmax = vmin + 1.0
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
    label = LABELS.get(metric, metric)
    spread = f", {100 * (high - low) / abs(high):.1f}% apart" if ok and high else ""
    scale = f"{label}: scale from {fmt(vmin)}" if vmin == 0 else label
    if ok:
        scale += f"; fitting cells {fmt(low)} to {fmt(high)}{spread}"
    fig.colorbar(image, ax=ax, label=scale)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_yticks(range(len(ys)), ys)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    size = 8 if len(xs) <= 10 else 6
    best = None
    for (vx, vy), c in cells.items():
        if c["state"] == "ok" and (best is None or better(c["value"], best["value"], metric)):
            best = c
    for c in cells.values():
        i, j = xs.index(c["x"]), ys.index(c["y"])
        if c["state"] == "ok":
            r, g, b, _ = cmap((c["value"] - vmin) / (vmax - vmin))
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            c["text"] = fmt(c["value"])
            ax.text(i, j, c["text"], ha="center", va="center", fontsize=size,
                    color="white" if dark else "black")
        elif c["state"] == "oom":
            ax.add_patch(plt.Rectangle((i - 0.5, j - 0.5), 1, 1, facecolor="#fbe3e3", hatch="xx",
                                       edgecolor="#f0a0a0", linewidth=0))
            c["text"] = f"OOM\n{fmt(c['value'])}"
            ax.text(i, j, c["text"], ha="center", va="center", fontsize=size, color=OOM_RED,
                    fontweight="bold", bbox=dict(facecolor="white", edgecolor="none", pad=1))
        else:
            ax.add_patch(plt.Rectangle((i - 0.5, j - 0.5), 1, 1, color="0.85"))
            c["text"] = STATE_TEXT[c["state"]]
            ax.text(i, j, c["text"], ha="center", va="center", color="0.35", fontsize=size - 1)
    if best:
        i, j = xs.index(best["x"]), ys.index(best["y"])
        ax.add_patch(plt.Rectangle((i - 0.48, j - 0.48), 0.96, 0.96, fill=False,
                                   edgecolor="black", linewidth=2))
    ax.legend(handles=[mpatches.Patch(facecolor="#fbe3e3", hatch="xx", edgecolor="#f0a0a0",
                                      label="out of memory (its value if it fitted)"),
                       mpatches.Patch(color="0.85", label="not simulated"),
                       mpatches.Patch(fill=False, edgecolor="black", linewidth=2, label="best")],
              fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.12), ncol=3, frameon=False)
    array = image.get_array()
    drawn = []
    for c in cells.values():
        i, j = xs.index(c["x"]), ys.index(c["y"])
        v = array[j, i]
        drawn.append({"x": c["x"], "y": c["y"], "status": c["state"], "csv_value": c["value"],
                      "colour_value": None if np.ma.is_masked(v) else float(v),
                      "text": c["text"], "reason": c["reason"]})
    record = {"kind": "heatmap", "x_key": x, "y_key": y, "metric": metric,
              "colour_limits": list(image.get_clim()), "cells": drawn,
              "best": [best["x"], best["y"]] if best else None}
    return record, reasons_note(list(cells.values()),
                                lambda c: f"{short(x)}={c['x']} {short(y)}={c['y']}")


# The step's parts as the sweep CSV has them, with labels and colours.
PARTS = [
    ("compute_s", "compute", "#1f77b4"),
    ("exposed_all_gather_s", "exposed all-gather", "#2ca02c"),
    ("exposed_reduce_scatter_s", "exposed reduce-scatter", "#d62728"),
    ("exposed_all_reduce_s", "exposed all-reduce", "#ff7f0e"),
    ("exposed_tp_s", "exposed TP", "#9467bd"),
    ("exposed_cp_s", "exposed CP", "#8c564b"),
    ("exposed_pcie_s", "exposed PCIe", "#7f7f7f"),
    ("pipeline_bubble_s", "pipeline bubble", "#bcbd22"),
    ("sync_wait_s", "sync wait", "#17becf"),
    ("launch_bound_s", "launch-bound", "#e377c2"),
    ("idle_s", "idle", "#c7c7c7"),
]


def breakdown(rows, keys, metric, top, path):
    """Stacked bars of where each simulated point's step went; returns the
    figure, the record of what was drawn and the note for below it."""
    simulated = [r for r in rows if state_of(r) in ("ok", "oom")]
    if not simulated:
        require_values(rows, "step_time_s", path)
    varying = [k for k in keys if len({r[k] for r in rows}) > 1] or keys[:1]
    # Upright bars carry one value each under them; several keys' values
    # need the width of a horizontal bar's label.
    upright = len(varying) == 1 and len(simulated) <= VERTICAL_MAX
    notes = []
    if upright:
        shown = rows if len(rows) <= VERTICAL_MAX else simulated
        if len(shown) < len(rows):
            notes.append(f"{plural(len(rows) - len(shown), 'point')} not simulated not drawn")
    else:
        ranked = [r for r in simulated if number(r.get(metric)) is not None]
        if not ranked:
            SCRIPT.fail(f"--breakdown: expected values of {metric} to rank the points by, "
                        "found none (--metric picks another column)")
        # As the sweep ranks them: fitting points first, then best first.
        sign = 1 if metric in LOWER_IS_BETTER else -1
        ranked.sort(key=lambda r: (state_of(r) != "ok", sign * number(r[metric])))
        shown = ranked if top == 0 else ranked[:top]
        label = LABELS.get(metric, metric)
        if len(shown) < len(ranked):
            rest = [number(r[metric]) for r in ranked[len(shown):]]
            notes.append(f"the {len(shown)} best of {len(ranked)} simulated points, those that "
                         f"fit first, then by {label}; {plural(len(rest), 'more point')} ({label} "
                         f"{fmt(min(rest))} to {fmt(max(rest))}) not drawn: --top 0 draws all")
        else:
            notes.append(f"all {len(ranked)} simulated points, those that fit first, then by "
                         f"{label}")
        not_run = len(rows) - len(simulated)
        if not_run:
            notes.append(f"{plural(not_run, 'point')} not simulated (skipped or failed) "
                         f"not drawn")
    n = len(shown)
    if upright:
        fig, ax = plt.subplots(figsize=(min(max(8.0, 0.7 * n + 3), 14.0), 5.5))
    else:
        fig, ax = plt.subplots(figsize=(11.0, 1.9 + 0.24 * n))
    positions = np.arange(n, dtype=float)
    bottom = np.zeros(n)
    bars = []
    for column, label, colour in PARTS:
        values = np.array([number(r.get(column)) or 0.0 if state_of(r) in ("ok", "oom") else 0.0
                           for r in shown])
        if not values.any():
            continue
        draw = ax.bar if upright else ax.barh
        extent = {"bottom": bottom} if upright else {"left": bottom}
        container = draw(positions, values, color=colour, label=label, **extent,
                         **({"width": 0.7} if upright else {"height": 0.7}))
        bars.append((column, container))
        bottom = bottom + values
    oom_hatched = False
    for i, r in enumerate(shown):
        if state_of(r) == "oom":
            box = (i - 0.35, 0) if upright else (0, i - 0.35)
            w, h = (0.7, bottom[i]) if upright else (bottom[i], 0.7)
            ax.add_patch(mpatches.Rectangle(box, w, h, fill=False, hatch="//", edgecolor=OOM_RED,
                                            linewidth=1.0, label=None if oom_hatched
                                            else "out of memory (simulated anyway)"))
            oom_hatched = True
    if upright:
        labels = []
        for i, r in enumerate(shown):
            s = state_of(r)
            text = r[varying[0]] + (f"\n(OOM{gib(r)})" if s == "oom" else "")
            labels.append(text)
            if s not in ("ok", "oom"):
                ax.text(i, 0, f" {STATE_TEXT[s]}", rotation=90, ha="center", va="bottom",
                        fontsize=8, color="0.35")
        ax.set_xticks(positions, labels, fontsize=7)
        if len(varying) == 1:
            ax.set_xlabel(varying[0])
        ax.set_ylabel("seconds per step (mean per rank)")
        ax.set_xlim(-0.6, n - 0.4)
        for i, r in enumerate(shown):
            if bottom[i] > 0:
                ax.text(i, bottom[i], f"{fmt(bottom[i])} s", ha="center", va="bottom", fontsize=8)
    else:
        # The values alone, the keys named once on the axis: labels of
        # key=value pairs would take most of the figure's width.
        labels = [" / ".join(r[k] for k in varying) +
                  (f"  (OOM{gib(r)})" if state_of(r) == "oom" else "")
                  for r in shown]
        ax.set_yticks(positions, labels, fontsize=8)
        ax.set_ylim(n - 0.4, -0.6)
        ax.set_ylabel(" / ".join(short(k) for k in varying), fontsize=9)
        ax.set_xlabel("seconds per step (mean per rank)")
        for i, r in enumerate(shown):
            ax.text(bottom[i], i, f" {LABELS.get(metric, metric)} {fmt(number(r[metric]))}",
                    va="center", fontsize=7, color="0.25")
        ax.set_xlim(0, bottom.max() * 1.25)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    heights = {column: [float(p.get_height() if upright else p.get_width()) for p in c]
               for column, c in bars}
    ticks = ax.get_xticklabels() if upright else ax.get_yticklabels()
    record = {"kind": "breakdown", "orientation": "vertical" if upright else "horizontal",
              "metric": metric, "figure_px": figure_pixels(fig, DPI),
              "tick_fontsize": min(t.get_fontsize() for t in ticks) if ticks else None,
              "value_axis": list(ax.get_ylim() if upright else ax.get_xlim()),
              "points_in_csv": len(rows), "drawn": n,
              "bars": [{"label": labels[i].replace("\n", " "), "status": state_of(r),
                        "total_s": float(sum(h[i] for h in heights.values())),
                        "parts_s": {c: h[i] for c, h in heights.items() if h[i]}}
                       for i, r in enumerate(shown)]}
    return fig, ax, record, "\n".join(notes)


# --parts: tokens per joule at the GPU's power limit and at the whole
# system's maximum power per GPU (hosts, NICs, switches, cooling), so that a
# part that draws less per GPU but needs more around it reads as such.
ENERGY = [("tokens_per_joule_gpu", "at the GPU's power limit", "#2ca02c"),
          ("tokens_per_joule_system", "at the system's power per GPU", "#98df8a")]
NO_ENERGY = "this CSV has no energy columns (clustersim sweep before tokens per joule)"
NO_POWER = "no power figure"


def amount(v):
    """A bar's value: whole numbers from 1,000 up (fmt's three digits write
    3,598 tokens/s as 3.6e+03), else three digits with their zeros (5.00 s
    beside 4.58 s, not 5 s; 400, not 400.)."""
    return f"{v:,.0f}" if abs(v) >= 999.5 else f"{v:#.3g}".rstrip(".")


def parts(rows, keys, fields, path):
    """Three panels of horizontal bars, one bar per simulated point (a part)
    in the CSV's order: tokens/s per GPU, step time, tokens per joule (two
    bars each). Returns the figure, its axes, the record of what was drawn
    and the note for below it."""
    for column in ("tokens_per_s_per_gpu", "step_time_s"):
        if column not in fields:
            SCRIPT.fail(f"{path}: --parts: expected a '{column}' column, found none")
    require_values(rows, "tokens_per_s_per_gpu", path)
    shown = [r for r in rows if state_of(r) in ("ok", "oom")]
    # The values alone, the keys named once on the axis, as --breakdown's
    # horizontal bars have them.
    varying = [k for k in keys if len({r[k] for r in rows}) > 1] or keys[:1]
    labels = [" / ".join(r[k] for k in varying) for r in shown]
    oom = [state_of(r) == "oom" for r in shown]
    n = len(shown)
    # Nan, not zero, where a point has no figure: no bar, rather than a bar
    # of nothing that reads as a part that gives nothing.
    positions = np.arange(n, dtype=float)
    fig, axes = plt.subplots(1, 3, sharey=True, figsize=(11.5, max(4.0, 2.2 + 0.5 * n)))
    drawn = [{"label": label, "status": state_of(r), "texts": {}, "notes": []}
             for label, r in zip(labels, shown)]

    def bars(ax, column, offset, height, colour, label=None):
        values = [number(r.get(column)) if column in fields else None for r in shown]
        container = ax.barh(positions + offset, [np.nan if v is None else v for v in values],
                            height=height, color=colour, label=label)
        for patch, out in zip(container, oom):
            if out:  # what the part would give if the layout fitted, hatched as elsewhere
                patch.set_hatch("//")
                patch.set_edgecolor(OOM_RED)
                patch.set_linewidth(1.0)
        for i, (patch, v) in enumerate(zip(container, values)):
            width = patch.get_width()
            drawn[i][column] = float(width)
            if column == "tokens_per_s_per_gpu":
                drawn[i]["y"] = float(patch.get_y() + patch.get_height() / 2)
            if v is not None:
                unit = " s" if column == "step_time_s" else ""
                drawn[i]["texts"][column] = f"{amount(width)}{unit}"
                ax.text(width, positions[i] + offset, f" {amount(width)}{unit}", va="center",
                        fontsize=7 if height < 0.5 else 8,
                        color=OOM_RED if oom[i] else "black")
        return values

    for ax, column, colour, better_text in (
            (axes[0], "tokens_per_s_per_gpu", "#1f77b4", "higher is better"),
            (axes[1], "step_time_s", "#ff7f0e", "lower is better")):
        values = bars(ax, column, 0.0, 0.7, colour)
        for i, v in enumerate(values):
            if v is None:
                drawn[i]["notes"].append(f"{column}: {STATE_TEXT['no_value']}")
                ax.text(0, positions[i], f" {STATE_TEXT['no_value']}", va="center", fontsize=7,
                        color="0.35")
        known = [v for v in values if v is not None]
        ax.set_xlim(0, max(known) * 1.3 if known and max(known) > 0 else 1)
        ax.set_xlabel(f"{LABELS[column]} ({better_text})")
    ax = axes[2]
    energy = [c for c, _, _ in ENERGY if c in fields]
    if energy:
        values = {c: bars(ax, c, offset, 0.34, colour, label)
                  for (c, label, colour), offset in zip(ENERGY, (-0.18, 0.18))}
        for i in range(n):
            missing = [c for c, _, _ in ENERGY if values[c][i] is None]
            drawn[i]["notes"] += [f"{c}: {NO_POWER}" for c in missing]
            # Both missing (a profile with no power at all): one note for
            # the part, not two.
            at = [0.0] if len(missing) == 2 else [-0.18 if c == ENERGY[0][0] else 0.18
                                                   for c in missing]
            for offset in at:
                ax.text(0, positions[i] + offset, f" {NO_POWER}", va="center", fontsize=6,
                        color="0.35", style="italic")
        known = [v for vs in values.values() for v in vs if v is not None]
        ax.set_xlim(0, max(known) * 1.3 if known and max(known) > 0 else 1)
        # Above the panel: beside the bars it would hide the longest.
        ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=1,
                  frameon=False)
    else:
        ax.text(0.5, 0.5, NO_ENERGY.replace(" (", "\n("), transform=ax.transAxes, ha="center",
                va="center", fontsize=8, color="0.35")
        ax.set_xticks([])
    ax.set_xlabel("tokens per joule per GPU (higher is better)")
    ticks = [label + (f"\n(does not fit{gib(r)})" if out else "")
             for label, r, out in zip(labels, shown, oom)]
    axes[0].set_yticks(positions, ticks, fontsize=8)
    for part, tick in zip(drawn, axes[0].get_yticklabels()):
        part["tick"] = tick.get_text().replace("\n", " ")
    axes[0].set_ylim(n - 0.4, -0.6)  # the CSV's first point on top
    axes[0].set_ylabel(" / ".join(short(k) for k in varying), fontsize=9)
    if any(oom):
        axes[0].legend(handles=[mpatches.Patch(facecolor="white", hatch="//", edgecolor=OOM_RED,
                                               label="out of memory (simulated anyway)")],
                       fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    for ax in axes:
        ax.grid(True, axis="x", alpha=0.3)
    not_run = [{"state": state_of(r), "reason": r.get("reason", ""), "row": r}
               for r in rows if state_of(r) not in ("ok", "oom")]
    notes = [reasons_note(not_run, lambda p: ", ".join(f"{short(k)}={p['row'][k]}"
                                                        for k in keys))]
    unexplained = sum(1 for p in not_run if not p["reason"])
    if unexplained:  # reasons_note lists only the points with a reason
        notes.append(f"{plural(unexplained, 'point')} not simulated (no reason given) not drawn")
    record = {"kind": "parts", "keys": varying, "points_in_csv": len(rows), "drawn": n,
              "ylim": list(axes[0].get_ylim()), "energy_columns": energy,
              "energy_note": "" if energy else NO_ENERGY,
              "value_axes": {c: list(a.get_xlim()) for c, a in zip(
                  ("tokens_per_s_per_gpu", "step_time_s", "tokens_per_joule"), axes)},
              "parts": drawn}
    return fig, axes, record, "\n".join(note for note in notes if note)


def default_title(args, keys, x, y, mode):
    name = os.path.basename(args.csv)
    label = LABELS.get(args.metric, args.metric)
    if mode == "breakdown":
        return f"Where the step went, by {', '.join(short(k) for k in keys)} ({name})"
    if mode == "parts":
        return (f"Which part: throughput, step time and energy by "
                f"{', '.join(short(k) for k in keys)} ({name})")
    swept = short(x) if y is None else f"{short(x)} and {short(y)}"
    others = [short(k) for k in keys if k not in (x, y)]
    extra = f", best over {', '.join(others)}" if others else ""
    return f"{label} by {swept}{extra} ({name})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf)")
    parser.add_argument("--metric", default="mfu", help="column to plot (default mfu)")
    parser.add_argument("--x", help="swept key on the x axis (default: the first)")
    parser.add_argument("--y", help="swept key on the y axis (default: the second, if any)")
    parser.add_argument("--title", help="figure title (default: what was swept, and the file)")
    parser.add_argument("--breakdown", action="store_true",
                        help="stacked bars of where each point's step went")
    parser.add_argument("--parts", action="store_true",
                        help="tokens/s per GPU, step time and tokens per joule, one bar per "
                        "point, side by side")
    parser.add_argument("--top", type=int, default=TOP_DEFAULT,
                        help=f"--breakdown of more than {VERTICAL_MAX} points: draw the best N "
                        f"(default {TOP_DEFAULT}; 0: all)")
    parser.add_argument("--data", help="write what was drawn to this JSON file")
    args = parser.parse_args()
    SCRIPT.check_output(args.output)
    if args.data:
        SCRIPT.check_output(args.data, "--data")
    if args.parts and args.breakdown:
        SCRIPT.fail("--parts: expected either --parts or --breakdown, found both")
    if args.top < 0:
        SCRIPT.fail(f"--top: expected 0 (all) or a positive number of points, found {args.top}")

    rows, keys, fields = read_rows(args.csv)
    counts = ", ".join(f"{sum(r['status'] == s for r in rows)} {s}" for s in sorted(STATUSES)
                       if any(r["status"] == s for r in rows))
    SCRIPT.say(f"{args.csv}: {len(rows)} points over {', '.join(keys)} ({counts or 'none'})")
    if args.metric not in fields[fields.index("status") + 1:]:
        SCRIPT.fail(f"--metric: expected one of the CSV's columns after 'status', found "
                    f"'{args.metric}'")
    if args.parts:
        fig, axes, record, note = parts(rows, keys, fields, args.csv)
        ax = axes[1]
        title = args.title or default_title(args, keys, None, None, "parts")
        SCRIPT.say(f"parts: {record['drawn']} points, tokens/s, step time and tokens per joule"
                   + ("" if record["energy_columns"] else " (no energy columns)"))
    elif args.breakdown:
        missing = [c for c, _, _ in PARTS if c not in fields]
        if missing:
            SCRIPT.fail(f"--breakdown: expected the step's breakdown columns, found no "
                        f"{missing[0]}")
        fig, ax, record, note = breakdown(rows, keys, args.metric, args.top, args.csv)
        title = args.title or default_title(args, keys, None, None, "breakdown")
        SCRIPT.say(f"breakdown of {record['drawn']} points, {record['orientation']} bars")
    else:
        for flag, key in (("--x", args.x), ("--y", args.y)):
            if key is not None and key not in keys:
                SCRIPT.fail(f"{flag}: expected a swept key ({', '.join(keys)}), found '{key}'")
        if args.x is not None and args.x == args.y:
            SCRIPT.fail(f"--y: expected a swept key other than --x, found '{args.y}' for both")
        require_values(rows, args.metric, args.csv)
        x = args.x or keys[0]
        y = args.y or next((k for k in keys if k != x), None)
        if y is None:
            fig, ax = plt.subplots(figsize=(8, 5.5))
            record, note = lines_plot(rows, x, args.metric, ax)
            SCRIPT.say(f"{args.metric} against {x}: {len(record['points'])} points")
        else:
            xs, ys = len({r[x] for r in rows}), len({r[y] for r in rows})
            fig, ax = plt.subplots(figsize=(min(max(8.0, 0.8 * xs + 3), 16.0),
                                            min(max(5.5, 0.5 * ys + 2.5), 12.0)))
            record, note = heatmap(rows, x, y, args.metric, fig, ax)
            SCRIPT.say(f"heatmap of {args.metric} over {x} x {y}: {xs} x {ys} cells")
        title = args.title or default_title(args, keys, x, y, "plot")
    wrapped = textwrap.fill(title, int(11 * fig.get_size_inches()[0]))
    # Over all three panels for --parts: over the middle one it would run
    # into the energy panel's legend.
    heading = fig.suptitle(wrapped, fontsize=11) if args.parts else ax.set_title(wrapped,
                                                                                  fontsize=11)
    if note:
        fig.text(0.01, 0.005, note, fontsize=7, color="0.3", va="bottom", ha="left")
    note_in = 0.14 * (note.count("\n") + 1) if note else 0.0  # 7-point lines
    fig.tight_layout(rect=(0, note_in / fig.get_size_inches()[1], 1, 1))
    record.update({"title": heading.get_text(), "note": note, "figure_px": figure_pixels(fig, DPI)})
    save_figure(fig, args.output, dpi=DPI)
    SCRIPT.say(f"wrote {args.output}")
    if args.data:
        write_drawn(args.data, record)
        SCRIPT.say(f"wrote {args.data}")


if __name__ == "__main__":
    main()
