#!/usr/bin/python3
"""Markdown tables from zeropp's metrics.h5 files (layout: io/files/metrics.hpp).

  scaling/metrics_table.py RUN [RUN ...]          one row per run
  scaling/metrics_table.py --steps RUN [RUN ...]  a table of steps per run

RUN is a run folder (holding metrics.h5) or a metrics.h5 file. Per run:
P, X, Y (ranks, ranks per node, nodes), the number of steps recorded, the
median over steps (all but the first, which warms up) of the per-step median
over ranks of tokens/s, that divided by P, the communication share of the
step time (sum over those steps of the median time in collectives plus
waiting, over the sum of the median step times), the bytes sent across nodes
per step by all ranks (mean over those steps), the last loss and the last
validation loss (/validation; "-" without one).

Files of a live run can be read at any time: the writer keeps the file closed
between flushes; a read that meets a flush is retried. Rows with step -1 (a
flush cut short by a crash) are left out.
"""
import argparse
import os
import sys
import time

import h5py
import numpy as np

KINDS = ["all_gather", "reduce_scatter", "all_to_all", "all_reduce", "broadcast"]


def open_file(path):
    """h5py.File read-only without taking HDF5's file lock where h5py allows it."""
    for attempt in range(5):
        try:
            try:
                return h5py.File(path, "r", locking=False)
            except (TypeError, ValueError):  # h5py < 3.5 or HDF5 without the setting
                return h5py.File(path, "r")
        except OSError:
            if attempt == 4:
                raise
            time.sleep(0.2)


def attr(f, name, default=None):
    v = f.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


def load(path):
    """The run's attributes and its columns, each cut to len(/steps/step)."""
    with open_file(path) as f:
        if attr(f, "format") != "zeropp-metrics":
            raise SystemExit(f"metrics_table: {path}: not a zeropp metrics file")
        rows = f["steps"][:]
        rows = rows[rows["step"] >= 0]  # unwritten rows of a flush cut short by a crash
        cols = {name: rows[name] for name in rows.dtype.names}
        n = len(rows)
        val = f["validation"][:] if "validation" in f else None  # format version 1 has none
        val = val[val["step"] >= 0] if val is not None else []
        return {
            "P": int(attr(f, "P", 0)),
            "X": int(attr(f, "X", 0)),
            "Y": int(attr(f, "Y", 0)),
            "cols": cols,
            "n": n,
            "val_loss": float(val["loss"][-1]) if len(val) else None,
        }


def resolve(arg):
    path = os.path.join(arg, "metrics.h5") if os.path.isdir(arg) else arg
    if not os.path.isfile(path):
        raise SystemExit(f"metrics_table: {arg}: no metrics.h5 there")
    label = os.path.dirname(arg.rstrip("/")) if os.path.basename(arg) == "metrics.h5" else arg.rstrip("/")
    return path, label or "."


def total_bytes(c, link):
    return sum(c[f"bytes.{k}.{link}.sum"] for k in KINDS)


def summary(m):
    """The run's figures as numbers (None without rows): steps, tokens_per_s
    (median over the steps after the first of the median over ranks),
    tokens_per_s_per_rank, comm_share (summed median comm time over summed
    median step time), step_s (median step time), inter_bytes and intra_bytes
    (all ranks, mean per step), final_loss; the first step is left out of all
    but the loss when there is more than one."""
    c, n = m["cols"], m["n"]
    if n == 0:
        return None
    sel = slice(1, None) if n > 1 else slice(0, None)  # the first step warms up
    tok = float(np.median(c["tokens_per_s.median"][sel]))
    step_time = float(np.sum(c["time_s.step.median"][sel]))
    return {
        "steps": n,
        "tokens_per_s": tok,
        "tokens_per_s_per_rank": tok / m["P"] if m["P"] > 0 else float("nan"),
        "comm_share": float(np.sum(c["time_s.comm.median"][sel])) / step_time if step_time > 0 else float("nan"),
        "step_s": float(np.median(c["time_s.step.median"][sel])),
        "inter_bytes": float(np.mean(total_bytes(c, "inter")[sel])),
        "intra_bytes": float(np.mean(total_bytes(c, "intra")[sel])),
        "final_loss": float(c["loss"][-1]),
    }


def run_row(label, m):
    s = summary(m)
    if s is None:
        return [label, m["P"], m["X"], m["Y"], 0, "-", "-", "-", "-", "-", "-"]
    return [
        label,
        m["P"],
        m["X"],
        m["Y"],
        s["steps"],
        f"{s['tokens_per_s']:.1f}",
        f"{s['tokens_per_s_per_rank']:.1f}" if m["P"] > 0 else "-",
        f"{100 * s['comm_share']:.1f}%",
        f"{s['inter_bytes']:.0f}",
        f"{s['final_loss']:.4f}",
        f"{m['val_loss']:.4f}" if m["val_loss"] is not None else "-",
    ]


def step_rows(m):
    c = m["cols"]
    intra, inter = total_bytes(c, "intra"), total_bytes(c, "inter")
    for i in range(m["n"]):
        t = float(c["time_s.step.median"][i])
        share = float(c["time_s.comm.median"][i]) / t if t > 0 else float("nan")
        yield [
            int(c["step"][i]),
            f"{float(c['loss'][i]):.4f}",
            f"{float(c['lr'][i]):.4g}",
            f"{float(c['grad_norm'][i]):.3f}",
            f"{float(c['tokens_per_s.median'][i]):.1f}",
            f"{float(c['tokens_per_s.min'][i]):.1f}",
            f"{float(c['tokens_per_s.max'][i]):.1f}",
            f"{1e3 * t:.1f}",
            f"{100 * share:.1f}%",
            f"{float(intra[i]):.0f}",
            f"{float(inter[i]):.0f}",
        ]


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="run folders or metrics.h5 files")
    ap.add_argument("--steps", action="store_true", help="print every step of each run")
    args = ap.parse_args()
    runs = [resolve(a) for a in args.runs]
    if args.steps:
        header = ["step", "loss", "lr", "grad norm", "tokens/s", "min", "max", "step ms", "comm share",
                  "intra B", "inter B"]
        for i, (path, label) in enumerate(runs):
            m = load(path)
            if i:
                print()
            print(f"### {label} (P={m['P']} X={m['X']} Y={m['Y']})\n")
            print(table(header, step_rows(m)))
    else:
        header = ["run", "P", "X", "Y", "steps", "tokens/s", "tokens/s per rank", "comm share",
                  "cross-node B/step", "final loss", "final val loss"]
        print(table(header, [run_row(label, load(path)) for path, label in runs]))


if __name__ == "__main__":
    main()
