#!/usr/bin/python3
"""Plots of zeropp training runs from their metrics.h5 (layout: io/files/metrics.hpp).

  scaling/plot_run.py RUN [RUN ...]                  RUN/plot.png for each run
  scaling/plot_run.py --overlay -o runs.png RUN ...  all runs in one figure
  scaling/plot_run.py --csv RUN [RUN ...]            RUN/metrics.csv for each run

RUN is a run folder (holding metrics.h5) or a metrics.h5 file. The figure has
seven panels: training and validation loss against step and against tokens
seen, learning rate, gradient norm, tokens/s (median over ranks, the band from
min to max), bytes sent across nodes per step (all ranks) and the fraction of
communication time that computation hid. Runs of a live job can be plotted at
any time: the writer keeps the file closed between flushes, and a read that
meets a flush is retried.

--report FILE writes, as JSON, each figure's panels: their pixel box in the PNG,
their legend's box and the series drawn in them (label, colour, points), for
checks and scripts.
--csv writes one row per step: every /steps column and val_loss (empty where no
validation ran after that step).

Needs h5py, numpy and matplotlib (Debian: python3-h5py python3-numpy
python3-matplotlib).
"""
import argparse
import csv
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # also through bin/zeropp-plot, a link
import metrics_table  # noqa: E402  (scaling/metrics_table.py: the metrics.h5 reader)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

PANELS = ["loss_step", "loss_tokens", "lr", "grad_norm", "tokens_per_s", "inter_bytes", "hidden_fraction"]
TITLES = {"loss_step": ("step", "loss"), "loss_tokens": ("tokens", "loss"), "lr": ("step", "learning rate"),
          "grad_norm": ("step", "gradient norm"), "tokens_per_s": ("step", "tokens/s"),
          "inter_bytes": ("step", "cross-node bytes/step"), "hidden_fraction": ("step", "hidden comm fraction")}


def die(msg):
    sys.exit(f"plot_run: {msg}")


def read_run(path):
    """/steps (rows with step >= 0) and /validation; retried while a live writer flushes."""
    for attempt in range(10):
        try:
            with metrics_table.open_file(path) as f:
                if metrics_table.attr(f, "format") != "zeropp-metrics":
                    die(f"{path}: not a zeropp metrics file (attribute format)")
                if "steps" not in f:
                    die(f"{path}: no /steps dataset")
                rows = f["steps"][:]
                val = f["validation"][:] if "validation" in f else None
            break
        except (OSError, KeyError) as e:
            if attempt == 9:
                die(f"{path}: cannot read: {e}")
            time.sleep(0.3)
    rows = rows[rows["step"] >= 0]
    if val is not None:
        val = val[val["step"] >= 0]
    return rows, val


def tokens_seen(rows):
    """Tokens after each step: a step's tokens are its tokens/s times its time (both medians)."""
    per_step = rows["tokens_per_s.median"] * rows["time_s.step.median"]
    return np.cumsum(per_step)


def series(rows, val):
    """{panel: [(label, x, y)]} for one run; a panel's series are missing when the file lacks them."""
    step = rows["step"]
    tokens = tokens_seen(rows)
    out = {p: [] for p in PANELS}
    out["loss_step"].append(("train", step, rows["loss"]))
    out["loss_tokens"].append(("train", tokens, rows["loss"]))
    if val is not None and len(val):
        vtok = np.interp(val["step"], step, tokens) if len(step) else val["step"] * 0.0
        out["loss_step"].append(("validation", val["step"], val["loss"]))
        out["loss_tokens"].append(("validation", vtok, val["loss"]))
    out["lr"].append(("lr", step, rows["lr"]))
    out["grad_norm"].append(("grad norm", step, rows["grad_norm"]))
    out["tokens_per_s"].append(("tokens/s", step, rows["tokens_per_s.median"]))
    out["inter_bytes"].append(("cross-node", step, metrics_table.total_bytes(rows, "inter")))
    if "comm_hidden_fraction.median" in rows.dtype.names:  # written since format version 3
        out["hidden_fraction"].append(("hidden", step, rows["comm_hidden_fraction.median"]))
    return out


def draw(runs, path):
    """One figure of the runs [(label, rows, val)]; returns the report of its panels."""
    fig, grid = plt.subplots(2, 4, figsize=(16, 7.5), dpi=100)
    axes = dict(zip(PANELS, grid.flat))
    fig.delaxes(grid.flat[-1])  # eight cells, seven panels
    drawn = {p: [] for p in PANELS}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, rows, val) in enumerate(runs):
        base = colours[(2 * i) % len(colours)]
        for panel, lines in series(rows, val).items():
            for name, x, y in lines:
                colour = colours[(2 * i + 1) % len(colours)] if name == "validation" else base
                style = dict(marker="o", linestyle="--") if name == "validation" else {}
                full = f"{label} {name}" if len(runs) > 1 else name
                axes[panel].plot(x, y, color=colour, label=full, **style)
                drawn[panel].append({"label": full, "color": colour, "points": int(len(x))})
        if "tokens_per_s.min" in rows.dtype.names and len(rows):
            axes["tokens_per_s"].fill_between(rows["step"], rows["tokens_per_s.min"], rows["tokens_per_s.max"],
                                              color=base, alpha=0.2, linewidth=0)
    for panel, ax in axes.items():
        xlabel, ylabel = TITLES[panel]
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if drawn[panel]:
            ax.legend(fontsize="small")
        else:
            ax.text(0.5, 0.5, "not recorded", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(", ".join(label for label, _, _ in runs))
    fig.tight_layout()
    fig.savefig(path)
    height = fig.bbox.height
    report = {}

    def box(b):  # display pixels from the bottom; the PNG's rows go down
        return [int(b.x0), int(height - b.y1), int(b.x1), int(height - b.y0)]

    for panel, ax in axes.items():
        legend = ax.get_legend()
        report[panel] = {"box": box(ax.get_window_extent()), "series": drawn[panel],
                         "legend": box(legend.get_window_extent()) if legend else None}
    plt.close(fig)
    return report


def write_csv(rows, val, path):
    names = list(rows.dtype.names)
    vloss = {}
    if val is not None:
        vloss = {int(s): float(v) for s, v in zip(val["step"], val["loss"])}
    with open(path, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(names + ["val_loss"])
        for r in rows:
            cells = [int(r[n]) if rows.dtype[n].kind == "i" else repr(float(r[n])) for n in names]
            v = vloss.get(int(r["step"]))
            w.writerow(cells + ["" if v is None else repr(v)])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="run folders or metrics.h5 files")
    ap.add_argument("--overlay", action="store_true", help="all runs in one figure (needs -o)")
    ap.add_argument("-o", "--output", help="the PNG (one run or --overlay; default RUN/plot.png)")
    ap.add_argument("--csv", action="store_true", help="write RUN/metrics.csv (or -o FILE for one run) instead")
    ap.add_argument("--report", help="write the panels and series drawn as JSON to this file")
    args = ap.parse_args()
    runs = []
    for arg in args.runs:
        if not os.path.isfile(os.path.join(arg, "metrics.h5") if os.path.isdir(arg) else arg):
            die(f"{arg}: no metrics.h5 there")
        path, label = metrics_table.resolve(arg)
        runs.append((path, label))
    if args.output and len(runs) > 1 and not args.overlay:
        die("-o names one file: give one run, or --overlay")
    if args.overlay and not args.output:
        die("--overlay needs -o FILE.png")
    if args.csv:
        for path, _ in runs:
            dest = args.output or os.path.join(os.path.dirname(path), "metrics.csv")
            write_csv(*read_run(path), dest)
            print(f"wrote {dest}")
        return
    loaded = [(label, *read_run(path)) for path, label in runs]
    figures = [(args.output, loaded)] if args.overlay else \
        [(args.output or os.path.join(os.path.dirname(path), "plot.png"), [run]) for (path, _), run in zip(runs, loaded)]
    report = {}
    for dest, group in figures:
        report[dest] = draw(group, dest)
        n = sum(len(p["series"]) for p in report[dest].values())
        print(f"wrote {dest} ({n} series)")
    if args.report:
        with open(args.report, "w") as out:
            json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
