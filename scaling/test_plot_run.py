#!/usr/bin/python3
"""scaling/plot_run.py on synthetic metrics.h5 files (io/files/metrics.hpp's layout,
written with h5py): the PNG's size, every panel's series present as pixels of
its colour inside the panel (legends masked out), the overlay of two runs, a
file a writer holds open, the CSV's columns and rows, and one clear line for a
file that is not a metrics file.
Prints "plot_run smoke test: OK" when every check passes."""
import csv
import json
import os
import subprocess
import sys
import tempfile

import h5py
import matplotlib.image as mpimg
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_analyze import KINDS, row_fields  # noqa: E402  (io/files/metrics.cpp's members, version 2)

TOOL = os.path.join(HERE, "plot_run.py")
STEPS = 40
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def write_run(path, loss0, k=1.0):
    """A run of STEPS steps; k scales its curves so that overlaid runs do not cover each other."""
    names = row_fields() + [f"comm_hidden_fraction.{s}" for s in ("min", "median", "max")]
    dt = np.dtype({"names": names, "formats": ["<i8"] * 2 + ["<f8"] * (len(names) - 2),
                   "offsets": [8 * i for i in range(len(names))], "itemsize": 8 * len(names)})
    rows = np.zeros(STEPS + 1, dtype=dt)
    for i in range(STEPS + 1):
        r = rows[i]
        r["step"] = i + 1 if i < STEPS else -1  # the last row: a cut flush, to be dropped
        r["ranks"] = 4
        r["loss"] = loss0 * np.exp(-i / 20)
        r["lr"] = k * 1e-3 * min(1.0, (i + 1) / 10)
        r["grad_norm"] = k * 2.0 / (1 + i)
        for s, m in (("min", 0.9), ("median", 1.0), ("max", 1.1)):
            r[f"tokens_per_s.{s}"] = k * (1000 * m + 10 * i)
            r[f"time_s.step.{s}"] = 0.5
            r[f"comm_hidden_fraction.{s}"] = k * (0.2 + 0.01 * i)
        r["bytes.all_gather.inter.sum"] = k * (1e6 + 1e4 * (i % 5))
    val = np.zeros(3, dtype=[("step", "<i8"), ("loss", "<f8")])
    val["step"], val["loss"] = [20, 40, -1], [loss0 * 0.4, loss0 * 0.2, 0]
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "zeropp-metrics"
        f.attrs["format_version"] = np.int64(3)
        f.attrs["P"], f.attrs["X"], f.attrs["Y"] = np.int64(4), np.int64(2), np.int64(2)
        f.attrs["kinds"] = "\n".join(KINDS)
        f.create_dataset("steps", data=rows, maxshape=(None,), chunks=(64,))
        f.create_dataset("validation", data=val, maxshape=(None,), chunks=(64,))


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


def colour_pixels(img, box, legend, colour):
    """Pixels within a small distance of `colour` inside box, outside the legend."""
    x0, y0, x1, y1 = box
    mask = np.zeros(img.shape[:2], dtype=bool)
    mask[y0:y1, x0:x1] = True
    if legend:
        lx0, ly0, lx1, ly1 = legend
        mask[ly0:ly1, lx0:lx1] = False
    rgb = np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    near = np.abs(img[:, :, :3] - rgb).max(axis=2) < 0.06
    return int((near & mask).sum())


def check_figure(png, panels, expect_series):
    img = mpimg.imread(png)
    check(img.shape[0] >= 700 and img.shape[1] >= 1500, f"{os.path.basename(png)} is {img.shape[1]}x{img.shape[0]}")
    for panel, info in panels.items():
        got = len(info["series"])
        check(got == expect_series[panel], f"{panel}: {got} series drawn (want {expect_series[panel]})")
        for s in info["series"]:
            n = colour_pixels(img, info["box"], info["legend"], s["color"])
            check(n >= 30 and s["points"] > 1, f"{panel}/{s['label']}: {n} pixels of {s['color']}, {s['points']} points")


def main():
    with tempfile.TemporaryDirectory() as work:
        checks(work)
    if failures:
        print(f"FAILED: {len(failures)} checks")
        sys.exit(1)
    print("plot_run smoke test: OK")


def checks(work):
    a, b = os.path.join(work, "a"), os.path.join(work, "b")
    for d, loss0, k in ((a, 5.5, 1.0), (b, 4.0, 0.6)):
        os.mkdir(d)
        write_run(os.path.join(d, "metrics.h5"), loss0, k)
    one = {"loss_step": 2, "loss_tokens": 2, "lr": 1, "grad_norm": 1, "tokens_per_s": 1, "inter_bytes": 1,
           "hidden_fraction": 1}
    rep = os.path.join(work, "report.json")
    p = run(a, "--report", rep)
    check(p.returncode == 0, f"plot of one run exits 0 ({p.stderr.strip()})")
    check_figure(os.path.join(a, "plot.png"), json.load(open(rep))[os.path.join(a, "plot.png")], one)

    over = os.path.join(work, "both.png")
    p = run("--overlay", "-o", over, "--report", rep, a, b)
    check(p.returncode == 0, f"overlay exits 0 ({p.stderr.strip()})")
    check_figure(over, json.load(open(rep))[over], {k: 2 * v for k, v in one.items()})

    # A writer holding the file open (and HDF5's lock on it) must not stop a reader.
    with h5py.File(os.path.join(b, "metrics.h5"), "a"):
        p = run(b, "-o", os.path.join(work, "live.png"))
    check(p.returncode == 0 and os.path.getsize(os.path.join(work, "live.png")) > 0,
          f"plot of a file a writer holds open ({p.stderr.strip()[-200:]})")

    out = os.path.join(work, "a.csv")
    p = run("--csv", "-o", out, a)
    check(p.returncode == 0, f"csv exits 0 ({p.stderr.strip()})")
    with open(out) as f:
        table = list(csv.reader(f))
    header, body = table[0], table[1:]
    want = row_fields() + [f"comm_hidden_fraction.{s}" for s in ("min", "median", "max")] + ["val_loss"]
    check(header == want, f"csv has the {len(want)} columns of /steps and val_loss")
    check(len(body) == STEPS, f"csv has {len(body)} rows (want {STEPS}: the cut row dropped)")
    vals = {int(r[0]): r[-1] for r in body}
    check(vals[20] != "" and vals[40] != "" and vals[1] == "", "val_loss filled at steps 20 and 40 only")
    check(abs(float(body[0][header.index("loss")]) - 5.5) < 1e-12, "csv loss of step 1 exact")

    bogus = os.path.join(work, "bogus.h5")
    with h5py.File(bogus, "w") as f:
        f.attrs["format"] = "something-else"
    p = run(bogus)
    lines = p.stderr.strip().splitlines()
    check(p.returncode != 0 and len(lines) == 1 and "bogus.h5" in lines[0] and "format" in lines[0],
          f"not a metrics file: one line naming it ({p.stderr.strip()})")
    empty = os.path.join(work, "empty")
    os.mkdir(empty)
    p = run(empty)
    check(p.returncode != 0 and p.stderr.strip() == f"plot_run: {empty}: no metrics.h5 there",
          f"a folder without metrics.h5: one line ({p.stderr.strip()})")


if __name__ == "__main__":
    main()
