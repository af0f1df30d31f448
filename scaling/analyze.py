#!/usr/bin/python3
"""Tables and plots of a scaling study written by scaling/sweep.py.

  scaling/analyze.py STUDY_DIR [--out DIR] [--prefix NAME_]

Reads STUDY_DIR/manifest.json and each run's metrics.h5 (layout:
io/files/metrics.hpp; read with scaling/metrics_table.py's functions) and run.json,
and writes into --out (default STUDY_DIR/report):

  PREFIXtables.md             one markdown table per scaling kind (also printed)
  PREFIXweak_efficiency.png   per-rank efficiency vs P, one panel per link
  PREFIXstrong_efficiency.png bandwidth, one line per variant
  PREFIXloss.png              loss curves of the variants (largest layout)

Per point: tokens/s (median over the steps after the first of the median over
ranks), per-rank efficiency (tokens/s per rank over that of the smallest P of
the same kind, variant and bandwidth: 1 is perfect scaling, weak or strong
alike), throughput relative to zero3 at the same kind, layout and bandwidth,
communication share of step time (time in collectives and waiting over step
time, medians over ranks), bytes sent across nodes per step by all ranks (and
relative to zero3), the final loss and the run's status. Failed runs appear
with their status; what they wrote is used if anything was.

Needs h5py, numpy and matplotlib (Debian: python3-h5py python3-numpy
python3-matplotlib); plots use the Agg backend (no display).
"""
import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics_table  # noqa: E402  (scaling/metrics_table.py: the metrics.h5 reader)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

VARIANT_ORDER = ["zero3", "qwz", "hpz", "qgz", "zeropp"]
VARIANT_LABEL = {"zero3": "ZeRO-3", "qwz": "qwZ", "hpz": "hpZ", "qgz": "qgZ", "zeropp": "ZeRO++"}
VARIANT_STYLE = {"zero3": ("tab:blue", "o"), "qwz": ("tab:orange", "s"), "hpz": ("tab:green", "^"),
                 "qgz": ("tab:purple", "D"), "zeropp": ("tab:red", "v")}


def die(msg):
    sys.exit(f"analyze: error: {msg}")


def gbps_label(g):
    return "unlimited" if g == 0 else f"{g:g} Gbit/s"


def vkey(v):
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER), v)


def load_study(study):
    try:
        with open(os.path.join(study, "manifest.json")) as f:
            man = json.load(f)
    except (OSError, ValueError) as e:
        die(f"{study}: no readable manifest.json ({e})")
    if man.get("format") != "zeropp-scaling-study":
        die(f"{study}/manifest.json: not a zeropp scaling study")
    runs = man["runs"]
    for run in runs.values():
        d = os.path.join(study, run["dir"])
        try:
            with open(os.path.join(d, "run.json")) as f:
                run.update({k: v for k, v in json.load(f).items() if k not in ("id", "dir")})
        except (OSError, ValueError):
            pass
        if run.get("status") in ("submitted", "running"):
            # A batch job of jobs/slurm/train.sbatch: its log's last exit line (requeued runs append).
            try:
                with open(os.path.join(d, "run.log"), errors="replace") as f:
                    ends = re.findall(r"zeropp exited with status (\d+)", f.read())
                if ends:
                    run["rc"] = int(ends[-1])
                    run["status"] = "ok" if run["rc"] == 0 else "failed"
            except OSError:
                pass
        run["summary"], run["cols"] = None, None
        path = os.path.join(d, "metrics.h5")
        if os.path.isfile(path):
            try:
                m = metrics_table.load(path)
                run["summary"], run["cols"] = metrics_table.summary(m), m["cols"]
            except (OSError, KeyError, SystemExit) as e:
                run["error"] = f"metrics.h5 unreadable: {e}"
    return man, runs


def derive(man, runs):
    """Points with their run's summary and the relative figures."""
    pts = []
    for p in man["points"]:
        run = runs.get(p["run"])
        if run is None:
            continue
        pts.append(dict(p, run_=run, s=run["summary"]))
    index = {(p["kind"], p["variant"], p["gbps"], p["P"], p["X"]): p for p in pts}
    for p in pts:
        s = p["s"]
        same = [q for q in pts if (q["kind"], q["variant"], q["gbps"]) == (p["kind"], p["variant"], p["gbps"])]
        base = min(same, key=lambda q: (q["P"], -q["X"]))
        p["eff"] = (s["tokens_per_s_per_rank"] / base["s"]["tokens_per_s_per_rank"]
                    if s and base["s"] and base["s"]["tokens_per_s_per_rank"] > 0 else math.nan)
        p["base_P"] = base["P"]
        z = index.get((p["kind"], "zero3", p["gbps"], p["P"], p["X"]))
        zs = z["s"] if z else None
        p["vs_zero3"] = s["tokens_per_s"] / zs["tokens_per_s"] if s and zs and zs["tokens_per_s"] > 0 else math.nan
        p["xnode_vs_zero3"] = (s["inter_bytes"] / zs["inter_bytes"]
                               if s and zs and zs["inter_bytes"] > 0 else math.nan)
    return pts


def f(x, fmt):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def tables(man, pts):
    out = []
    for kind in man["kinds"]:
        kp = sorted((p for p in pts if p["kind"] == kind), key=lambda p: (vkey(p["variant"]), p["gbps"], p["P"], p["Y"]))
        if not kp:
            continue
        if kind == "weak":
            desc = (f"Weak scaling: every rank keeps B = {man['batch_size']} sequences per micro-batch and "
                    f"A = {man['grad_accum']} micro-batches per step; the global batch grows with P.")
        else:
            desc = (f"Strong scaling: the global batch stays {man['global_batch']} sequences per step "
                    f"(B = {man['batch_size']}, A = {man['global_batch']} / (B·P)).")
        out += [f"### {kind.capitalize()} scaling", "", desc, ""]
        header = ["variant", "link", "P (Y×X)", "A", "tokens/s", "per-rank eff.", "vs ZeRO-3", "comm share",
                  "cross-node MB/step", "vs ZeRO-3 bytes", "final loss", "status"]
        rows = []
        for p in kp:
            s, run = p["s"] or {}, p["run_"]
            rows.append([
                VARIANT_LABEL.get(p["variant"], p["variant"]), gbps_label(p["gbps"]),
                f"{p['P']} ({p['Y']}×{p['X']})", run.get("grad_accum", "-"),
                f(s.get("tokens_per_s"), ".0f"), f(p["eff"], ".2f"), f(p["vs_zero3"], ".2f"),
                f(100 * s["comm_share"] if s else None, ".1f") + ("%" if s else ""),
                f(s["inter_bytes"] / 1e6 if s else None, ".2f"), f(p["xnode_vs_zero3"], ".3f"),
                f(s.get("final_loss"), ".4f"), run.get("status", "-"),
            ])
        out += [metrics_table.table(header, rows), ""]
    return "\n".join(out)


def efficiency_plot(man, pts, kind, path, cores=0):
    kp = [p for p in pts if p["kind"] == kind]
    if not kp:
        return False
    bws = sorted({p["gbps"] for p in kp}, key=lambda g: (g == 0, -g))  # unlimited last
    bws = [g for g in bws if g == 0] + [g for g in bws if g != 0]  # unlimited first, then fast to slow
    variants = sorted({p["variant"] for p in kp}, key=vkey)
    layouts = sorted({(p["P"], p["Y"], p["X"]) for p in kp})
    fig, axes = plt.subplots(1, len(bws), figsize=(4.6 * len(bws) + 2.2, 4.0), sharey=True, squeeze=False)
    ymax = max([1.05] + [p["eff"] for p in kp if not math.isnan(p["eff"])]) * 1.08
    for ax, g in zip(axes[0], bws):
        for v in variants:
            vp = sorted((p for p in kp if p["variant"] == v and p["gbps"] == g), key=lambda p: p["P"])
            color, marker = VARIANT_STYLE.get(v, (None, "o"))
            ax.plot([p["P"] for p in vp], [p["eff"] for p in vp], marker=marker, color=color, linewidth=1.8,
                    markersize=6, label=VARIANT_LABEL.get(v, v))
        ax.axhline(1.0, color="0.6", linestyle="--", linewidth=1, label="ideal")
        if cores:
            Ps = [P for P, _, _ in layouts]
            base = min(Ps)
            ax.plot(Ps, [min(1.0, cores / P) / min(1.0, cores / base) for P in Ps], color="0.35", linestyle=":",
                    linewidth=1.5, label=f"ceiling on {cores} cores")
        ax.set_xscale("log", base=2)
        ax.set_xticks([P for P, _, _ in layouts])
        ax.set_xticklabels([f"{P}\n({Y}×{X})" for P, Y, X in layouts])
        ax.minorticks_off()
        ax.set_title(f"link {gbps_label(g)}")
        ax.set_xlabel("ranks P (nodes × ranks per node)")
        ax.set_ylim(0, ymax)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel(f"per-rank efficiency vs P = {min(P for P, _, _ in layouts)}")
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, borderaxespad=0)
    fig.suptitle(f"{kind.capitalize()} scaling: tokens/s per rank relative to the smallest P")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def loss_plot(man, pts, path):
    """Left: the variants' loss curves at the largest layout (weak scaling when
    the study has it); right: each variant's loss minus ZeRO-3's at the same
    step, where the curves lie on top of each other."""
    have = [p for p in pts if p["run_"]["cols"] is not None]
    if not have:
        return False
    kind = "weak" if any(p["kind"] == "weak" for p in have) else have[0]["kind"]
    kp = [p for p in have if p["kind"] == kind]
    P, Y, X = max((p["P"], p["Y"], p["X"]) for p in kp)
    g = min(p["gbps"] for p in kp if (p["P"], p["X"]) == (P, X))  # losses do not depend on the link
    curves = {}
    for p in sorted(kp, key=lambda p: vkey(p["variant"])):
        if (p["P"], p["X"], p["gbps"]) == (P, X, g):
            curves[p["variant"]] = p["run_"]
    zero3 = curves.get("zero3")
    ncol = 2 if zero3 is not None and len(curves) > 1 else 1
    fig, axes = plt.subplots(1, ncol, figsize=(5.4 * ncol + 0.6, 4.0), squeeze=False)
    dashes = [(None, None), (6, 2), (2, 2), (6, 2, 2, 2), (1, 1)]
    for i, (v, run) in enumerate(curves.items()):
        c = run["cols"]
        color, _ = VARIANT_STYLE.get(v, (None, "o"))
        kw = dict(color=color, linewidth=1.6, label=VARIANT_LABEL.get(v, v))
        if dashes[i % len(dashes)][0]:
            kw["dashes"] = dashes[i % len(dashes)]
        axes[0][0].plot(c["step"], c["loss"], **kw)
        if ncol == 2 and v != "zero3":
            z = zero3["cols"]
            n = min(len(z["loss"]), len(c["loss"]))
            axes[0][1].plot(c["step"][:n], c["loss"][:n] - z["loss"][:n], **kw)
    run0 = next(iter(curves.values()))
    axes[0][0].set_title(f"training loss, {kind} scaling, P = {P} ({Y}×{X}), "
                         f"B = {run0.get('batch_size', '?')}, A = {run0.get('grad_accum', '?')}", fontsize=10)
    axes[0][0].set_ylabel("training loss")
    if ncol == 2:
        axes[0][1].axhline(0.0, color=VARIANT_STYLE["zero3"][0], linewidth=1, label="ZeRO-3")
        axes[0][1].set_title("loss minus ZeRO-3's loss at the same step", fontsize=10)
        axes[0][1].set_ylabel("Δ loss")
    for ax in axes[0]:
        ax.set_xlabel("step")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=9)
    fig.suptitle("Loss curves of the ZeRO variants")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", help="a study folder written by scaling/sweep.py")
    ap.add_argument("--out", help="output folder (default STUDY/report)")
    ap.add_argument("--prefix", default="scaling_", help="prefix of the output file names (default scaling_)")
    ap.add_argument("--cores", type=int, default=0,
                    help="draw the efficiency ceiling min(1, cores/P) of a machine with this many cores "
                         "(for studies whose ranks share one machine)")
    args = ap.parse_args()
    man, runs = load_study(args.study)
    pts = derive(man, runs)
    if not any(p["s"] for p in pts):
        die(f"{args.study}: no run has metrics yet")
    out = args.out or os.path.join(args.study, "report")
    os.makedirs(out, exist_ok=True)
    failed = sorted(r["id"] for r in runs.values() if r.get("status") not in ("ok",))
    text = [f"Study: deck {man['deck']}, {man['steps']} steps per run; "
            f"tokens/s and times leave out the first step.", ""]
    if failed:
        text += ["Runs not finished ok: " + ", ".join(f"{r} ({runs[r].get('status', '?')})" for r in failed), ""]
    text.append(tables(man, pts))
    md = "\n".join(text)
    with open(os.path.join(out, args.prefix + "tables.md"), "w") as fh:
        fh.write(md + "\n")
    print(md)
    written = [args.prefix + "tables.md"]
    for kind in ("weak", "strong"):
        name = f"{args.prefix}{kind}_efficiency.png"
        if efficiency_plot(man, pts, kind, os.path.join(out, name), args.cores):
            written.append(name)
    if loss_plot(man, pts, os.path.join(out, args.prefix + "loss.png")):
        written.append(args.prefix + "loss.png")
    print(f"analyze: wrote {', '.join(written)} in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
