#!/usr/bin/env python3
"""Draws docs/benchmarks.svg: ndnpy's speed-up over NumPy (or the Python tool
that does the same job) per operation, as horizontal bars on a log scale,
from docs/bench_summary.json (figures copied from BENCHMARKS.md's tables).

    python3 scripts/bench_chart.py [--data docs/bench_summary.json] [--out docs/benchmarks.svg]

Python's standard library only: the SVG is written as text. Each entry of the
data file has `operation`, `group`, `baseline`, `measured` (a date), and
either `ndnpy_s` and `baseline_s` (medians in seconds from one run) or
`speedup` (the ratio as the table gives it). Speed-up = baseline's time /
ndnpy's time: right of the 1x line, ndnpy is faster.
"""

import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WIDTH = 920
LABEL_X = 14            # left edge of the labels
LABEL_MAX = 400         # labels must end before this x
PLOT_X0, PLOT_X1 = 420, 860
LOG_MIN, LOG_MAX = -2, 5  # 0.25x .. 32x
TOP = 96                # first row
ROW_H = 32
GROUP_H = 28
FONT = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
LABEL_SIZE, DETAIL_SIZE = 13, 10.5
# Average advance of a character of these fonts, in ems: a generous estimate,
# used to refuse labels that would run into the bars.
CHAR_EM = 0.6

FASTER, TIE, SLOWER = "#2b6cb0", "#a0aec0", "#dd6b20"
TIE_BAND = 0.10         # +-10 %: this machine's run-to-run spread


def seconds(t):
    if t < 1e-3:
        return f"{t * 1e6:.4g} µs"
    if t < 1:
        return f"{t * 1e3:.4g} ms"
    return f"{t:.4g} s"


def ratio_text(r):
    return f"{r:.2f}×" if r < 10 else f"{r:.1f}×"


def speedup(e):
    if "speedup" in e:
        return float(e["speedup"])
    return e["baseline_s"] / e["ndnpy_s"]


def detail(e):
    if "ndnpy_s" in e:
        text = f"ndnpy {seconds(e['ndnpy_s'])} · {e['baseline']} {seconds(e['baseline_s'])}"
    else:
        text = f"{e['baseline']} {seconds(e['baseline_s'])} (median ratio)"
    return f"{text} · {e['measured']}"


def x_of(r):
    r = min(max(r, 2.0 ** LOG_MIN), 2.0 ** LOG_MAX)
    frac = (math.log2(r) - LOG_MIN) / (LOG_MAX - LOG_MIN)
    return PLOT_X0 + frac * (PLOT_X1 - PLOT_X0)


def text_width(s, size):
    return len(s) * size * CHAR_EM


def text(x, y, s, size=LABEL_SIZE, anchor="start", weight="normal", fill="#1a202c"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}">{escape(s)}</text>')


def draw(entries):
    groups = []
    for e in entries:
        if not groups or groups[-1][0] != e["group"]:
            groups.append((e["group"], []))
        groups[-1][1].append(e)
    height = TOP + sum(GROUP_H + ROW_H * len(rows) for _, rows in groups) + 60

    problems = []
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}">',
           f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
           text(LABEL_X, 26, "ndnpy's speed-up over NumPy (or the Python tool doing the same job)",
                size=16, weight="bold"),
           text(LABEL_X, 46, "Their median time ÷ ndnpy's, from one run per row (date on each row), "
                "log scale; right of 1×, ndnpy is faster. Details: BENCHMARKS.md.",
                size=11, fill="#4a5568")]
    # legend
    lx = LABEL_X
    for colour, name in ((FASTER, "ndnpy faster"), (TIE, "tie (within ±10 %, this machine's spread)"),
                         (SLOWER, "ndnpy slower")):
        out.append(f'<rect x="{lx}" y="57" width="12" height="12" fill="{colour}"/>')
        out.append(text(lx + 17, 67.5, name, size=11, fill="#2d3748"))
        lx += 17 + text_width(name, 11) + 22

    plot_top, plot_bottom = TOP - 8, height - 52
    # grid and tick labels (top and bottom)
    for k in range(LOG_MIN, LOG_MAX + 1):
        r = 2.0 ** k
        x = x_of(r)
        one = k == 0
        out.append(f'<line x1="{x:.1f}" y1="{plot_top}" x2="{x:.1f}" y2="{plot_bottom}" '
                   f'stroke="{"#4a5568" if one else "#e2e8f0"}" stroke-width="{1.2 if one else 1}"/>')
        label = f"{r:g}×"
        out.append(text(x, plot_top - 4, label, size=10.5, anchor="middle", fill="#4a5568"))
        out.append(text(x, plot_bottom + 14, label, size=10.5, anchor="middle", fill="#4a5568"))

    y = TOP
    for name, rows in groups:
        out.append(f'<rect x="0" y="{y}" width="{WIDTH}" height="{GROUP_H - 4}" fill="#f7fafc"/>')
        out.append(text(LABEL_X, y + 17, name, size=13.5, weight="bold", fill="#2d3748"))
        y += GROUP_H
        for e in rows:
            r = speedup(e)
            colour = FASTER if r >= 1 + TIE_BAND else SLOWER if r <= 1 - TIE_BAND else TIE
            label, small = e["operation"], detail(e)
            for s, size in ((label, LABEL_SIZE), (small, DETAIL_SIZE)):
                if LABEL_X + text_width(s, size) > LABEL_MAX:
                    problems.append(f"too long for the label column: {s!r}")
            out.append(text(LABEL_X, y + 13, label))
            out.append(text(LABEL_X, y + 26, small, size=DETAIL_SIZE, fill="#718096"))
            x1, xr = x_of(1.0), x_of(r)
            left, right = min(x1, xr), max(x1, xr)
            out.append(f'<rect x="{left:.1f}" y="{y + 8}" width="{max(right - left, 1.5):.1f}" '
                       f'height="15" fill="{colour}"><title>{escape(label)}: '
                       f'{escape(ratio_text(r))}</title></rect>')
            if r <= 1 - TIE_BAND:
                tx, anchor = left - 5, "end"
                if tx - text_width(ratio_text(r), 11.5) < LABEL_MAX:
                    problems.append(f"ratio text runs into the labels: {label!r}")
            else:
                tx, anchor = right + 5, "start"
                if tx + text_width(ratio_text(r), 11.5) > WIDTH - 4:
                    problems.append(f"ratio text runs off the right edge: {label!r}")
            out.append(text(tx, y + 20, ratio_text(r), size=11.5, anchor=anchor, weight="bold",
                            fill="#1a202c"))
            y += ROW_H

    out.append(text(LABEL_X, height - 14,
                    "2-core KVM guest, 23 GiB, NumPy 2.4.6. Data: docs/bench_summary.json; "
                    "drawn by scripts/bench_chart.py.", size=10.5, fill="#718096"))
    out.append("</svg>")
    return "\n".join(out) + "\n", problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "docs", "bench_summary.json"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.svg"))
    args = ap.parse_args()
    with open(args.data, encoding="utf-8") as f:
        entries = json.load(f)["entries"]
    for e in entries:
        if "speedup" not in e and not ("ndnpy_s" in e and "baseline_s" in e):
            sys.exit(f"{e.get('operation')}: needs speedup, or ndnpy_s and baseline_s")
    svg, problems = draw(entries)
    if problems:
        sys.exit("layout:\n  " + "\n  ".join(problems))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(svg)
    print(f"{args.out}: {len(entries)} operations")


if __name__ == "__main__":
    main()
