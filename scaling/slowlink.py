#!/usr/bin/python3
"""The slow-link table: step time of ZeRO-3 and each ZeRO++ variant at emulated
inter-node bandwidths, as speedups over ZeRO-3 (docs/performance.md, "Step time
under slow links").

  scaling/slowlink.py OUT [--layouts 2x2,2x4] [--gbps 0.1,1,10,100] [--latency-us 5]
                          [--links emulated|real|both] [--repeats 5] [--repeats-other 3] [--steps 4] [--deck scaling/slowlink.toml]

Runs are interleaved: repeat k of every cell (layout, link, variant) runs before
repeat k+1 of any, so that the machine's load drifts over all cells alike. The
acceptance cells (ZeRO-3 and ZeRO++ at 1 and 100 Gbit/s on the first layout) get
--repeats runs, the others --repeats-other. A run's step time is the median over
its steps after the first (metrics.h5: the median over ranks); a cell's is the
median over its runs, with the runs' min-max as its spread. Each run is one
mpirun of scaling/sweep.py's local mode (yield library, OPENBLAS_NUM_THREADS=1)
into OUT/runs/<id>/; OUT/results.json (rewritten after every run) holds every
run's step, compute and per-collective times and bytes for scaling/project.py.
Running the same command again skips runs already done; --table-only prints the
table of what OUT holds.

Real links (--links real or both; root): each run of a cell also, or instead, runs
on scripts/cluster's nodes (one network namespace per node, its link shaped by tc to
the --gbps rate, zeropp finding the nodes from host names), brought up for that run
and torn down after it. --gbps are then node link rates; an emulated run of the same
cell takes a rank's share (rate / ranks per node) and --latency-us, a real run no
added latency. The table puts each cell's real step time beside the emulator's and
scaling/project.py's prediction from the real runs.
"""
import argparse
import os
import sys
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics_table  # noqa: E402
import project  # noqa: E402
import sweep  # noqa: E402

LABELS = {"zero3": "ZeRO-3", "qwz": "qwZ", "hpz": "hpZ", "qgz": "qgZ", "zeropp": "ZeRO++"}
ACCEPT_GBPS = (1.0, 100.0)
ACCEPT_VARIANTS = ("zero3", "zeropp")


def die(msg):
    sys.exit(f"slowlink: error: {msg}")


def run_figures(path):
    """One run's figures from its metrics.h5 (None if it has no steps after the first)."""
    m = metrics_table.load(path)
    c, n = m["cols"], m["n"]
    if n < 2:
        return None
    sel = slice(1, None)  # the first step warms up

    def med(name):
        return float(np.median(c[name][sel]))

    kinds = {}
    for k in metrics_table.KINDS:
        kinds[k] = {
            "time_s": med(f"time_s.{k}.median"),
            # The busiest rank's bytes: the link that sets the pace.
            "inter_bytes_max": med(f"bytes.{k}.inter.max"),
            "intra_bytes_max": med(f"bytes.{k}.intra.max"),
            "inter_bytes_sum": med(f"bytes.{k}.inter.sum"),
        }
    return {"P": m["P"], "X": m["X"], "Y": m["Y"], "steps": n, "step_s": med("time_s.step.median"),
            "compute_s": med("time_s.compute.median"), "wait_s": med("time_s.wait.median"), "kinds": kinds}


def cell_key(layout, gbps, variant, links="emulated"):
    key = f"{variant}-bw{gbps:g}-{layout[0]}x{layout[1]}"
    return key + "-real" if links == "real" else key


def plan(args):
    """[(repeat, layout, gbps, variant, links)] in the interleaved order. With real links
    every cell is compared with its emulation, so every cell gets --repeats runs."""
    links = ("real", "emulated") if args.links == "both" else (args.links,)
    order = []
    for rep in range(max(args.repeats, args.repeats_other)):
        for li, layout in enumerate(args.layouts):
            for g in args.gbps:
                for v in args.variants:
                    accept = args.links != "emulated" or (li == 0 and g in ACCEPT_GBPS and v in ACCEPT_VARIANTS)
                    if rep < (args.repeats if accept else args.repeats_other):
                        order.extend((rep, layout, g, v, k) for k in links)
    return order


def run_all(args, results_path, results):
    zeropp = os.path.join(args.build_dir, "bin", "zeropp")
    if not os.access(zeropp, os.X_OK):
        die(f"{zeropp} not built (ninja -C {args.build_dir} zeropp zeropp_yield)")
    # sweep.run_local's view of the study: every emulated run gets the link latency too; a
    # real link has its own.
    sargs = {links: types.SimpleNamespace(build_dir=args.build_dir, mpirun=args.mpirun, run_timeout=args.run_timeout,
                                          deck=args.deck, steps=args.steps, log_every=1, extra=extra + args.extra)
             for links, extra in (("emulated", [f"--comm.internode_latency_us={args.latency_us:g}"]), ("real", []))}
    order = plan(args)
    for i, (rep, (Y, X), g, v, links) in enumerate(order):
        rid = f"{cell_key((Y, X), g, v, links)}-r{rep}"
        if rid in results["runs"]:
            continue
        run = {"dir": os.path.join("runs", rid), "P": Y * X, "X": X, "gbps": g, "batch_size": args.batch_size,
               "grad_accum": 1, "variant": v, "links": links}
        if args.links != "emulated":
            # --gbps are node link rates; the emulator and the projection take a rank's share.
            run.update(gbps=g / X, node_gbps=g)
        print(f"[{i + 1}/{len(order)}] {rid}", flush=True)
        sweep.run_local(sargs[links], args.out, run, zeropp, print)
        fig = None
        if run["status"] == "ok":
            fig = run_figures(os.path.join(args.out, run["dir"], "metrics.h5"))
        if fig is None:
            die(f"run {rid} failed ({run['status']}); see {os.path.join(args.out, run['dir'], 'run.log')}")
        fig.update(variant=v, gbps=run["gbps"], layout=[Y, X], repeat=rep, wall_s=run["wall_s"], links=links)
        if "node_gbps" in run:
            fig["node_gbps"] = g
        results["runs"][rid] = fig
        sweep.write_json(results_path, results)


def cells(results, links="emulated", by="gbps"):
    """{(Y, X, gbps, variant): [step_s of each run]} of the runs over `links`; `by` names
    the bandwidth (gbps: a rank's, node_gbps: its node link's)."""
    out = {}
    for r in results["runs"].values():
        if r.get("links", "emulated") == links:
            out.setdefault((r["layout"][0], r["layout"][1], r[by], r["variant"]), []).append(r["step_s"])
    return out


def table(results):
    c = cells(results)
    variants = [v for v in LABELS if any(k[3] == v for k in c)]
    others = [v for v in variants if v != "zero3"]
    head = ["layout", "Gbit/s", "ZeRO-3 ms (min-max, n)"] + [f"{LABELS[v]} (min-max, n)" for v in others]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for Y, X, g in sorted({k[:3] for k in c}):
        base = c.get((Y, X, g, "zero3"))
        if not base:
            continue
        b = np.array(base) * 1e3
        row = [f"{Y}x{X}", f"{g:g}", f"{np.median(b):.0f} ({b.min():.0f}-{b.max():.0f}, {len(b)})"]
        for v in others:
            t = c.get((Y, X, g, v))
            if not t:
                row.append("-")
                continue
            t = np.array(t) * 1e3
            # The spread of the ratio: the slowest baseline run over the fastest variant run and back.
            row.append(f"{np.median(b) / np.median(t):.2f} ({b.min() / t.max():.2f}-{b.max() / t.min():.2f}, {len(t)})")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def real_table(results):
    """Real links beside their emulation and the projection, per node link rate: each
    variant's step time over scripts/cluster's links, the emulator's for the same setting
    (a rank's share of the node rate) and scaling/project.py's prediction from the real
    runs (its reference cell, the highest rate, is the prediction's input), then the
    speedups over ZeRO-3 measured both ways."""
    res = dict(results, latency_us=0.0)  # a real link adds no emulated latency
    real, emul = cells(res, "real", "node_gbps"), cells(res, "emulated", "node_gbps")
    real_res = project.over_links(res, "real")
    h, rms = project.fit_overlap(real_res, sweep.ROOT)
    pred = {(Y, X, v, g * X): p for Y, X, v, g, _, p, _ in project.validate(real_res, sweep.ROOT, h)}
    variants = [v for v in LABELS if any(k[3] == v for k in real)]

    def ms(ts):
        t = np.array(ts) * 1e3
        return f"{np.median(t):.0f} ({t.min():.0f}-{t.max():.0f})"

    head = ["layout", "node Gbit/s"]
    for v in variants:
        head += [f"{LABELS[v]} real ms", "emulated", "projected"]
    head += [f"{LABELS[v]} / ZeRO-3 real, emulated" for v in variants if v != "zero3"]
    lines = [f"Projection: fitted overlap h = {h:.2f} (RMS error {100 * rms:.1f}%); n = "
             f"{min(len(t) for t in real.values())} or more runs per cell.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for Y, X, g in sorted({k[:3] for k in real}):
        row = [f"{Y}x{X}", f"{g:g}"]
        for v in variants:
            t, e, p = real.get((Y, X, g, v)), emul.get((Y, X, g, v)), pred.get((Y, X, v, g))
            row += [ms(t) if t else "-", ms(e) + f" {np.median(e) / np.median(t) - 1:+.0%}" if e and t else "-",
                    f"{1e3 * p:.0f} {p / np.median(t) - 1:+.0%}" if p and t else "ref"]
        base_r, base_e = real.get((Y, X, g, "zero3")), emul.get((Y, X, g, "zero3"))
        for v in variants[1:]:
            t, e = real.get((Y, X, g, v)), emul.get((Y, X, g, v))
            rr = f"{np.median(base_r) / np.median(t):.2f}" if base_r and t else "-"
            re = f"{np.median(base_e) / np.median(e):.2f}" if base_e and e else "-"
            row.append(f"{rr}, {re}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="study folder (created)")
    ap.add_argument("--deck", default="scaling/slowlink.toml")
    ap.add_argument("--layouts", default="2x2,2x4", help="NODESxRANKS_PER_NODE list; the smallest holds the acceptance cells")
    ap.add_argument("--gbps", default="0.1,1,10,100",
                    help="inter-node Gbit/s: per rank when emulated (comm.internode_gbps), else per node link")
    ap.add_argument("--links", choices=("emulated", "real", "both"), default="emulated",
                    help="emulated in zeropp (default), real (scripts/cluster's nodes, root), or both interleaved")
    ap.add_argument("--latency-us", type=float, default=5.0, help="comm.internode_latency_us (default 5)")
    ap.add_argument("--variants", default=",".join(LABELS), help="subset of " + ",".join(LABELS))
    ap.add_argument("--repeats", type=int, default=5, help="runs per acceptance cell")
    ap.add_argument("--repeats-other", type=int, default=3, help="runs per other cell")
    ap.add_argument("--steps", type=int, default=4, help="steps per run (the first is left out)")
    ap.add_argument("--batch-size", type=int, default=1, help="sequences per rank per step")
    ap.add_argument("--run-timeout", type=float, default=300)
    ap.add_argument("--mpirun", default=os.environ.get("MPIRUN", "mpirun"))
    ap.add_argument("--set", dest="extra", action="append", default=[], metavar="--section.key=value",
                    help="a further zeropp override for every run")
    ap.add_argument("--table-only", action="store_true", help="print the table of OUT's results; run nothing")
    args = ap.parse_args()
    args.build_dir = os.path.join(sweep.ROOT, os.environ.get("ZEROPP_BUILD_DIR", "build"))
    args.layouts = sweep.parse_layouts(args)  # sorted by P: the first is the smallest
    args.gbps = sweep.parse_list(args.gbps, float, "--gbps")
    if any(g <= 0 for g in args.gbps):
        die("--gbps: every bandwidth must be > 0 (a study of slow links)")
    args.variants = sweep.parse_list(args.variants, str, "--variants")
    for v in args.variants:
        if v not in LABELS:
            die(f"--variants: unknown variant '{v}' (known: {', '.join(LABELS)})")
    if "zero3" not in args.variants:
        die("--variants: zero3 is the baseline and must be among them")
    if args.repeats < 1 or args.repeats_other < 1 or args.steps < 2:
        die("--repeats and --repeats-other must be >= 1 and --steps >= 2")
    args.deck = os.path.abspath(args.deck)
    if not os.path.isfile(args.deck):
        die(f"--deck: {args.deck}: no such file")
    os.makedirs(args.out, exist_ok=True)
    args.out = os.path.abspath(args.out)
    results_path = os.path.join(args.out, "results.json")
    results = sweep.read_json(results_path) or {"format": "zeropp-slowlink", "runs": {}}
    if not args.table_only:
        results.update(deck=os.path.relpath(args.deck, sweep.ROOT), latency_us=args.latency_us, links=args.links,
                       steps=args.steps, batch_size=args.batch_size, extra=args.extra)
        run_all(args, results_path, results)
    if any(r.get("links") == "real" for r in results["runs"].values()):
        print(real_table(results))
    else:
        print(table(results))


if __name__ == "__main__":
    main()
