#!/usr/bin/python3
"""Smoke test of scaling/analyze.py (and scaling/sweep.py --dry-run).

Builds a tiny synthetic study in a temporary folder: a manifest as sweep.py
writes it and metrics.h5 files in io/files/metrics.hpp's layout (one packed
compound row per step, 8 bytes per member), with known numbers; one run is
recorded as failed with no metrics. Runs analyze.py on it and checks the
tables' figures and that the PNGs are written. Exit 0 and "analyze smoke
test: OK" on success. Needs h5py, numpy, matplotlib.

  scaling/test_analyze.py [--keep DIR]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ["all_gather", "reduce_scatter", "all_to_all", "all_reduce", "broadcast"]


def row_fields():
    """io/files/metrics.cpp's row_fields(), in order."""
    names = ["step", "ranks", "loss", "lr", "grad_norm"]
    rank = [("tokens_per_s", False), ("time_s.step", False), ("time_s.compute", False)]
    rank += [(f"time_s.{k}", False) for k in KINDS] + [("time_s.wait", False), ("time_s.comm", False)]
    for k in KINDS:
        rank += [(f"bytes.{k}.intra", True), (f"bytes.{k}.inter", True)]
    for name, is_bytes in rank:
        names += [f"{name}.{s}" for s in ("min", "median", "max")] + ([f"{name}.sum"] if is_bytes else [])
    return names


def write_metrics(path, P, X, steps, tok, comm_share, inter_per_rank, loss0):
    names = row_fields()
    dt = np.dtype({"names": names, "formats": ["<i8"] * 2 + ["<f8"] * (len(names) - 2),
                   "offsets": [8 * i for i in range(len(names))], "itemsize": 8 * len(names)})
    rows = np.zeros(steps + 1, dtype=dt)
    step_s = 1.0
    for i in range(steps + 1):
        r = rows[i]
        r["step"] = i if i < steps else -1  # the last row: unwritten (a cut flush), to be dropped
        r["ranks"] = P
        r["loss"] = loss0 - 0.1 * i
        r["lr"] = 1e-3
        r["grad_norm"] = 1.0
        t = tok if i > 0 else tok / 10  # a slow first step, which the figures leave out
        for s in ("min", "median", "max"):
            r[f"tokens_per_s.{s}"] = t
            r[f"time_s.step.{s}"] = step_s
            r[f"time_s.all_gather.{s}"] = comm_share * step_s
            r[f"time_s.comm.{s}"] = comm_share * step_s
            r[f"time_s.compute.{s}"] = (1 - comm_share) * step_s
            r[f"bytes.all_gather.inter.{s}"] = inter_per_rank
        r["bytes.all_gather.inter.sum"] = inter_per_rank * P
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "zeropp-metrics"
        f.attrs["format_version"] = np.int64(1)
        f.attrs["deck"] = "[train]\n"
        f.attrs["P"], f.attrs["X"], f.attrs["Y"] = np.int64(P), np.int64(X), np.int64(P // X)
        f.attrs["code_version"] = "test"
        f.attrs["hosts"] = "localhost"
        f.attrs["kinds"] = "\n".join(KINDS)
        f.create_dataset("steps", data=rows, maxshape=(None,), chunks=(64,))


def make_study(study):
    # Weak scaling over P = 1 (1x1) and 4 (2x2), variants zero3 and zeropp, links 0 and 0.1;
    # strong scaling over the same (P = 1 with A = 4); zeropp's slow-link P = 4 run failed.
    runs, points = {}, []
    spec = {  # (kind, variant, gbps, P): tokens/s, comm share, inter bytes per rank
        ("weak", "zero3", 0, 1): (1000, 0.0, 0), ("weak", "zero3", 0, 4): (3000, 0.3, 1e6),
        ("weak", "zeropp", 0, 1): (1000, 0.0, 0), ("weak", "zeropp", 0, 4): (3600, 0.2, 2.5e5),
        ("weak", "zero3", 0.1, 4): (2000, 0.5, 1e6), ("weak", "zeropp", 0.1, 4): None,
        ("strong", "zero3", 0, 1): (1200, 0.0, 0), ("strong", "zero3", 0, 4): (3000, 0.3, 1e6),
        ("strong", "zeropp", 0, 1): (1200, 0.0, 0), ("strong", "zeropp", 0, 4): (3600, 0.2, 2.5e5),
        ("strong", "zero3", 0.1, 4): (2000, 0.5, 1e6), ("strong", "zeropp", 0.1, 4): None,  # shares weak's run
    }
    for kind in ("weak", "strong"):
        for v in ("zero3", "zeropp"):
            for g in (0, 0.1):
                for P, X in ((1, 1), (4, 2)):
                    gr = 0 if P == 1 else g
                    A = 1 if kind == "weak" or P == 4 else 4
                    rid = f"{v}-bw{gr}-P{P}X{X}-A{A}"
                    d = os.path.join("runs", rid)
                    points.append({"kind": kind, "variant": v, "gbps": g, "P": P, "X": X, "Y": P // X, "run": rid})
                    if rid in runs:
                        continue
                    data = spec[(kind, v, gr, P)]
                    os.makedirs(os.path.join(study, d))
                    run = {"id": rid, "dir": d, "variant": v, "gbps": gr, "P": P, "X": X, "Y": P // X,
                           "batch_size": 8, "grad_accum": A, "status": "ok" if data else "failed"}
                    runs[rid] = run
                    with open(os.path.join(study, d, "run.json"), "w") as f:
                        json.dump(dict(run, rc=0 if data else 1), f)
                    if data:
                        write_metrics(os.path.join(study, d, "metrics.h5"), P, X, 5, data[0], data[1], data[2],
                                      5.5 if v == "zero3" else 5.6)
    man = {"format": "zeropp-scaling-study", "format_version": 1, "deck": "inputs/default.toml", "steps": 5,
           "batch_size": 8, "grad_accum": 1, "global_batch": 32, "kinds": ["weak", "strong"],
           "layouts": [[1, 1], [2, 2]], "variants": ["zero3", "zeropp"], "gbps": [0, 0.1], "points": points,
           "runs": runs}
    with open(os.path.join(study, "manifest.json"), "w") as f:
        json.dump(man, f)


def check(cond, msg):
    if not cond:
        sys.exit(f"analyze smoke test: FAILED: {msg}")


def main():
    keep = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--keep" else None
    tmp = tempfile.mkdtemp(prefix="zeropp-analyze-")
    try:
        study = os.path.join(tmp, "study")
        os.makedirs(study)
        make_study(study)
        out = os.path.join(tmp, "figures")
        p = subprocess.run([sys.executable, os.path.join(HERE, "analyze.py"), study, "--out", out, "--cores", "2"],
                           capture_output=True, text=True)
        print(p.stdout)
        print(p.stderr, file=sys.stderr)
        check(p.returncode == 0, f"analyze.py exited {p.returncode}")
        md = open(os.path.join(out, "scaling_tables.md")).read()
        check(md.strip() in p.stdout, "the printed tables differ from scaling_tables.md")
        # weak, zeropp, unlimited, P=4: 3600 tok/s, per rank 900 over 1000 -> 0.90; vs zero3 1.20;
        # 20% comm; 4 ranks x 0.25 MB = 1.00 MB cross-node, 0.250 of zero3's; loss 5.6 - 0.4.
        want = [
            r"\| ZeRO\+\+ \| unlimited \| 4 \(2×2\) \| 1 \| 3600 \| 0\.90 \| 1\.20 \| 20\.0% \| 1\.00 \| 0\.250 \| 5\.2000 \| ok \|",
            r"\| ZeRO-3 \| 0\.1 Gbit/s \| 4 \(2×2\) \| 1 \| 2000 \| 0\.50 \| 1\.00 \| 50\.0% \| 4\.00 \| 1\.000 \| 5\.1000 \| ok \|",
            r"\| ZeRO-3 \| unlimited \| 4 \(2×2\) \| 1 \| 3000 \| 0\.62 \| 1\.00 \| 30\.0% \| 4\.00 \| 1\.000 \| 5\.1000 \| ok \|",
            r"\| ZeRO\+\+ \| 0\.1 Gbit/s \| 4 \(2×2\) \| 1 \| - \| - \| - \| - \| - \| - \| - \| failed \|",
            r"### Weak scaling", r"### Strong scaling", r"Runs not finished ok: zeropp-bw0\.1-P4X2-A1 \(failed\)",
        ]
        for w in want:
            check(re.search(w, md), f"no line matching {w}")
        for name in ("scaling_weak_efficiency.png", "scaling_strong_efficiency.png", "scaling_loss.png"):
            path = os.path.join(out, name)
            check(os.path.isfile(path), f"{name} not written")
            with open(path, "rb") as f:
                check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{name} is not a PNG")
            check(os.path.getsize(path) > 10000, f"{name} is suspiciously small")
        # The driver's dry run: 3 layouts x 2 variants x 2 links, weak + strong, shared runs.
        p = subprocess.run([sys.executable, os.path.join(HERE, "sweep.py"), os.path.join(tmp, "dry"), "--dry-run",
                            "--layouts", "1x1,2x1,2x2", "--gbps", "0,0.1", "--steps", "3"],
                           capture_output=True, text=True)
        print(p.stdout[:2000])
        check(p.returncode == 0, f"sweep.py --dry-run exited {p.returncode}: {p.stderr}")
        cmds = [ln for ln in p.stdout.splitlines() if not ln.startswith("#")]
        check(len(cmds) == 16, f"sweep.py --dry-run printed {len(cmds)} commands, want 16")
        check(sum("--train.grad_accum=4" in c for c in cmds) == 2, "strong scaling at P = 1 should use A = 4")
        check(not os.path.exists(os.path.join(tmp, "dry")), "--dry-run wrote the study folder")
        print("analyze smoke test: OK")
    finally:
        if keep:
            shutil.copytree(tmp, keep, dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
