#!/usr/bin/python3
"""Step time of ZeRO-3 and ZeRO++ beyond this machine: a latency-bandwidth model
of a two-level network (intra-node links, inter-node NICs) fed with measured
compute times and the exact bytes of every collective (docs/scaling-study.md,
"Projection"). python3 and numpy only (matplotlib for --plot).

  scaling/project.py bytes STUDY       closed-form bytes per collective against the
                                       counters of every run of a slowlink.py study
  scaling/project.py validate STUDY    predicted against measured step times per cell
  scaling/project.py paper [--plot F]  the ZeRO++ paper's setting, with its reported ratios

The model, per step on the busiest rank:
T = T_other + sum over collective kinds of max(T_machine, (1 - h) * T_link), where
T_link = inter-node bytes * 8 / bandwidth + messages * latency on the rank whose
link carries the most (plus the same for the intra-node link when it is given),
T_machine is the kind's time on this machine without a slow link (the real
transfer, waiting for descheduled ranks), T_other the rest of the step (compute),
and h the fraction of link time hidden under compute. `validate` measures T_other
and T_machine in each (layout, variant)'s cell at the highest bandwidth and
predicts the other bandwidths; `paper` takes T_other as the model's FLOPs over an
assumed GPU rate and T_machine = 0.
"""
import argparse
import json
import os
import sys
import tomllib

import numpy as np

VARIANTS = {  # qwZ, hpZ, qgZ
    "zero3": (False, False, False),
    "qwz": (True, False, False),
    "hpz": (False, True, False),
    "qgz": (False, False, True),
    "zeropp": (True, True, True),
}
LABELS = {"zero3": "ZeRO-3", "qwz": "qwZ", "hpz": "hpZ", "qgz": "qgZ", "zeropp": "ZeRO++"}
KINDS = ("all_gather", "reduce_scatter", "all_to_all")
PACK_ALIGN = 16  # src/zero/quant_scheme.hpp kPackAlign


def die(msg):
    sys.exit(f"project: error: {msg}")


# ---- sizes (pure) ------------------------------------------------------------------

def gpt2_units(V, T, L, C):
    """Elements of each ZeRO unit of a GPT-2 (src/models/gpt2): the embeddings (wte,
    wpe), L blocks (two layer norms, qkv, attention projection, MLP: 12C^2 + 13C),
    the final layer norm."""
    return [V * C + T * C] + [12 * C * C + 13 * C] * L + [2 * C]


def round_up(n, m):
    return -(-n // m) * m


def padded(n, P, align=1):
    """A unit padded to a multiple of P*align (src/zero/shard.hpp)."""
    return round_up(n, P * align)


def payload_bytes(bits, n):
    return n if bits == 8 else n // 2


def wire_bytes(bits, n, block):
    """Quantized payload and fp32 scales, unpacked (qgZ's two all-to-alls)."""
    return payload_bytes(bits, n) + 4 * (n // block)


def packed_bytes(bits, n, block):
    """Payload and scales in one buffer, each 16-byte aligned (qwZ's all-gather)."""
    return round_up(round_up(payload_bytes(bits, n), PACK_ALIGN) + 4 * (n // block), PACK_ALIGN)


# ---- traffic of one step (pure) -------------------------------------------------------

class Traffic:
    """Bytes and messages each rank sends in one step, per collective kind and link."""

    def __init__(self, P, X):
        self.P, self.X = P, X
        self.sent = {k: np.zeros((P, 2)) for k in KINDS}  # [rank, intra=0 / inter=1]
        self.msgs = {k: np.zeros((P, 2)) for k in KINDS}

    def send(self, kind, src, dst, nbytes):
        link = int(src // self.X != dst // self.X)
        self.sent[kind][src, link] += nbytes
        self.msgs[kind][src, link] += 1

    def ring(self, kind, members, nbytes):
        """A ring all-gather or reduce-scatter over members: p-1 hops, each member
        sends nbytes to the next one per hop (src/comm/mpi)."""
        p = len(members)
        for _ in range(p - 1):
            for i, r in enumerate(members):
                self.send(kind, r, members[(i + 1) % p], nbytes)

    def all_to_all(self, kind, members, nbytes):
        for r in members:
            for d in members:
                if d != r:
                    self.send(kind, r, d, nbytes)

    def busiest(self, kind, link):
        """(bytes, messages) of the rank that sends the most over that link."""
        r = int(np.argmax(self.sent[kind][:, link]))
        return float(self.sent[kind][r, link]), float(self.msgs[kind][r, link])


def step_traffic(units, P, X, variant, weight_block=256, gradient_block=128, weight_bits=8,
                 grad_bits=(4, 4), wire=2):
    """The collectives of one step (one micro-batch) of a GPT-2-ordered model
    (forward: every unit, then the embeddings again for the tied head; backward:
    every unit but the embeddings, which the forward leaves gathered; one gradient
    reduction per unit) under a variant, as src/zero/engine.cpp issues them."""
    qwz, hpz, qgz = VARIANTS[variant]
    Y = P // X
    align = max(weight_block if qwz else 1, gradient_block if qgz else 1)
    t = Traffic(P, X)
    world = list(range(P))
    nodes = [list(range(y * X, (y + 1) * X)) for y in range(Y)]
    crosses = [list(range(x, P, X)) for x in range(X)]
    hpz = hpz and X > 1  # a group of one rank: hpZ has nothing to do
    secondary = set()  # units whose in-node copy is valid (hpZ)

    def gather(u, n):
        if u in secondary:  # hpZ: inside the node, from the secondary copies (wire dtype)
            for grp in nodes:
                t.ring("all_gather", grp, wire * n // X)
            return
        s = n // P
        t.ring("all_gather", world, packed_bytes(weight_bits, s, weight_block) if qwz else wire * s)
        if hpz:
            secondary.add(u)

    sizes = [padded(n, P, align) for n in units]
    for u in list(range(len(units))) + [0]:  # forward, then the tied head
        gather(u, sizes[u])
    for u in range(len(units) - 1, 0, -1):  # backward: the head's unit 0 is still there
        gather(u, sizes[u])
    for n in sizes:
        if qgz:
            intra_bits, inter_bits = grad_bits
            if X > 1:
                for grp in nodes:
                    t.all_to_all("all_to_all", grp, wire_bytes(intra_bits, n // X, gradient_block))
            if Y > 1:
                for grp in crosses:
                    t.all_to_all("all_to_all", grp, wire_bytes(inter_bits, n // P, gradient_block))
        else:
            t.ring("reduce_scatter", world, wire * (n // P))
    return t


# ---- the model (pure) ----------------------------------------------------------------

def link_times(traffic, inter_gbps, inter_latency_us=0.0, intra_gbps=0.0, intra_latency_us=0.0):
    """{kind: seconds the busiest rank's links are busy with that kind in a step}.
    Bandwidth 0: that link costs no time (latency still applies)."""
    out = {}
    for kind in KINDS:
        out[kind] = 0.0
        for link, gbps, lat in ((1, inter_gbps, inter_latency_us), (0, intra_gbps, intra_latency_us)):
            b, m = traffic.busiest(kind, link)
            out[kind] += (b * 8 / (gbps * 1e9) if gbps > 0 else 0.0) + m * lat * 1e-6
    return out


def link_time(traffic, *link):
    """The step's link seconds, the kinds one after another (the engine waits for each)."""
    return sum(link_times(traffic, *link).values())


def predict(other_s, link_s, overlap, machine_s=None):
    """Step seconds: other_s (compute and the rest) plus, per collective kind, the larger of
    the machine's own time for it (machine_s[kind]; the bytes' real transfer and waiting for
    descheduled ranks) and the link time not hidden under compute. The larger, not the sum:
    an emulated hop ends when both its real transfer and the link are done
    (src/comm/mpi/mpi_communicator.cpp), and on a cluster the link is the transfer.
    link_s and machine_s: {kind: seconds}; machine_s None: nothing but the links."""
    machine_s = machine_s or {}
    return other_s + sum(max(machine_s.get(k, 0.0), (1.0 - overlap) * t) for k, t in link_s.items())


# ---- a slowlink.py study ---------------------------------------------------------------

def over_links(res, links):
    """The study with only its runs over `links` ("emulated": comm.internode_gbps, the
    default of a run that does not say; "real": scripts/cluster's shaped links)."""
    runs = {k: r for k, r in res["runs"].items() if r.get("links", "emulated") == links}
    if not runs:
        die(f"the study has no runs over {links} links")
    return dict(res, runs=runs)


def load_study(folder):
    path = os.path.join(folder, "results.json")
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")
    if res.get("format") != "zeropp-slowlink" or not res.get("runs"):
        die(f"{path}: not a scaling/slowlink.py study with runs")
    return res


def deck_model(res, root):
    """The study deck's [model] and [zero] tables with the study's --set overrides applied."""
    path = os.path.join(root, res["deck"])
    try:
        with open(path, "rb") as f:
            deck = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        die(f"{path}: {e}")
    model, zero = dict(deck.get("model", {})), dict(deck.get("zero", {}))
    for o in res.get("extra", []):
        key, _, value = o.lstrip("-").partition("=")
        section, _, name = key.partition(".")
        if section in ("model", "zero"):
            (model if section == "model" else zero)[name] = int(value) if value.lstrip("-").isdigit() else value
    return model, zero


def run_traffic(run, model, zero):
    P, X = run["P"], run["X"]
    units = gpt2_units(model["vocab_size"], model["max_seq_len"], model["n_layer"], model["n_embd"])
    return step_traffic(units, P, X, run["variant"], weight_block=zero.get("weight_block", 256),
                        gradient_block=zero.get("gradient_block", 128), weight_bits=zero.get("weight_bits", 8),
                        grad_bits=(zero.get("intra_node_gradient_bits", 4), zero.get("inter_node_gradient_bits", 4)),
                        wire=2 if zero.get("comm_dtype", "bf16") == "bf16" else 4)


def check_bytes(res, root):
    """[(run id, kind, link, closed form, measured)] for every mismatch; and the count checked."""
    model, zero = deck_model(res, root)
    bad, n = [], 0
    for rid, run in sorted(res["runs"].items()):
        t = run_traffic(run, model, zero)
        for kind in KINDS:
            for link, name in ((1, "inter"), (0, "intra")):
                want = t.busiest(kind, link)[0]
                got = run["kinds"][kind][f"{name}_bytes_max"]
                n += 1
                if want != got:
                    bad.append((rid, kind, name, want, got))
    return bad, n


def cell_medians(res):
    """{(Y, X, variant): {gbps: (median step s, {kind: median s in it}, a run)}}."""
    acc = {}
    for run in res["runs"].values():
        key = (run["layout"][0], run["layout"][1], run["variant"])
        acc.setdefault(key, {}).setdefault(run["gbps"], []).append(run)
    out = {}
    for key, cells in acc.items():
        out[key] = {}
        for g, rs in cells.items():
            kinds = {k: float(np.median([r["kinds"][k]["time_s"] for r in rs])) for k in KINDS}
            out[key][g] = (float(np.median([r["step_s"] for r in rs])), kinds, rs[0])
    return out


def validate(res, root, overlap):
    """Rows (Y, X, variant, gbps, measured s, predicted s, error) for every cell but the
    reference (highest-bandwidth) one of each layout and variant. From the reference:
    the time outside the collectives and each kind's time in the machine (its link time
    there is below the machine's own); the other cells add their links' time."""
    model, zero = deck_model(res, root)
    lat = res.get("latency_us", 0.0)
    rows = []
    for (Y, X, v), cells in sorted(cell_medians(res).items()):
        ref = max(cells)
        step_ref, machine, run = cells[ref]
        t = run_traffic(run, model, zero)
        other = step_ref - sum(machine.values())
        for g in sorted(cells):
            if g == ref:
                continue
            pred = predict(other, link_times(t, g, lat), overlap, machine)
            rows.append((Y, X, v, g, cells[g][0], pred, pred / cells[g][0] - 1))
    return rows


def link_bound(res, root, overlap):
    """{(Y, X, gbps): ZeRO++ / ZeRO-3 speedup} predicted for a machine whose collectives
    cost nothing but their links (T_machine = 0), from the reference cells' T_other."""
    model, zero = deck_model(res, root)
    lat = res.get("latency_us", 0.0)
    cm = cell_medians(res)
    out = {}
    for (Y, X, v), cells in cm.items():
        if v != "zeropp" or (Y, X, "zero3") not in cm:
            continue
        t = {}
        for var in ("zero3", "zeropp"):
            c = cm[(Y, X, var)]
            step_ref, machine, run = c[max(c)]
            t[var] = (step_ref - sum(machine.values()), run_traffic(run, model, zero))
        for g in sorted(cells):
            t3, tp = (predict(o, link_times(tr, g, lat), overlap) for o, tr in (t["zero3"], t["zeropp"]))
            out[(Y, X, g)] = t3 / tp
    return out


def fit_overlap(res, root):
    """The hidden fraction h in [0, 1] (steps of 0.01) with the smallest RMS relative error."""
    best = min((float(np.sqrt(np.mean([r[6] ** 2 for r in validate(res, root, h)]))), h)
               for h in np.linspace(0, 1, 101))
    return best[1], best[0]


# ---- the paper's setting -----------------------------------------------------------------

# ZeRO++ as its authors report it: 384 V100 GPUs, 16 per node (DGX-2: 24 nodes), inter-node 4 x 100 Gbit/s
# InfiniBand per node in the high-bandwidth runs, 100 Gbit/s per node in the low-bandwidth
# ones; 1K and 2K tokens per GPU. Reported ZeRO++ / ZeRO-3 throughput ratios:
PAPER = [
    # (Gbit/s per node, tokens per GPU, reported ratio low, high, what the blog says)
    (400, 1024, 1.28, 1.36, "+28% to +36% at 1K tokens per GPU, 400 Gbit/s"),
    (400, 2048, 1.24, 1.29, "+24% to +29% at 2K tokens per GPU, 400 Gbit/s"),
    (100, None, 2.0, 2.2, "about 2x on average, up to 2.2x, 100 Gbit/s"),
]
# The models: GPT-style shapes we chose for the sizes the paper names (12 L C^2 + ...); the
# blog does not give their layer counts and widths.
PAPER_MODELS = {"18B": (40, 6144), "138B": (76, 12288)}


def paper_step(variant, layers, width, tokens, node_gbps, gpu_tflops, X=16, Y=24, seq=2048, vocab=50257,
               latency_us=5.0, intra_gbps=1200.0, overlap=0.0, flops_per_param_token=8):
    """Projected (compute, link, step) seconds of one GPU in the paper's cluster. Compute:
    8 FLOPs per parameter and token (forward 2, backward 4, activation recomputation 2) at
    gpu_tflops. Link: analytic_link, the node's NIC of node_gbps carrying what its X GPUs
    send across nodes (a NCCL ring crosses each node boundary once per hop, as ours does),
    intra-node links of intra_gbps per GPU (NVSwitch: about 150 GB/s)."""
    units = gpt2_units(vocab, seq, layers, width)
    n_params = sum(units)
    compute = flops_per_param_token * n_params * tokens / (gpu_tflops * 1e12)
    link = analytic_link(units, X, Y, variant, node_gbps, latency_us, intra_gbps)
    return compute, link, predict(compute, {"all": link}, overlap)


def analytic_bytes(units, X, Y, variant):
    """(bytes one node sends across nodes, bytes one GPU sends inside its node, messages
    one after another) per step at P = X * Y, without simulating P ranks: per unit the
    collectives of step_traffic. A world ring sends, per hop, one slice across each node
    boundary (from the node's last rank) and one inside the node from every other rank."""
    qwz, hpz, qgz = VARIANTS[variant]
    P = X * Y
    align = max(256 if qwz else 1, 128 if qgz else 1)
    inter_b = intra_b = 0
    hops = 0
    for n0 in units:
        n = padded(n0, P, align)
        s = n // P
        fwd = packed_bytes(8, s, 256) if qwz else 2 * s
        world_gathers = 1 if hpz else 2  # forward + backward (the embeddings: forward and tied head)
        inter_b += world_gathers * (P - 1) * fwd
        intra_b += world_gathers * (P - 1) * fwd
        hops += world_gathers * (P - 1)
        if hpz:  # the second use inside the node: a ring of X over n/X-element pieces (bf16)
            intra_b += (X - 1) * 2 * (n // X)
            hops += X - 1
        if qgz:
            intra_b += (X - 1) * wire_bytes(4, n // X, 128)
            inter_b += X * (Y - 1) * wire_bytes(4, s, 128)  # every GPU of the node sends across
            hops += (X - 1) + (Y - 1)
        else:
            inter_b += (P - 1) * 2 * s
            intra_b += (P - 1) * 2 * s
            hops += P - 1
    return inter_b, intra_b, hops


def analytic_link(units, X, Y, variant, node_gbps, latency_us, intra_gbps):
    """Link seconds per step: the node's cross-node bytes over its NIC, a GPU's in-node
    bytes over its intra-node link, and a latency per message."""
    inter_b, intra_b, hops = analytic_bytes(units, X, Y, variant)
    return inter_b * 8 / (node_gbps * 1e9) + intra_b * 8 / (intra_gbps * 1e9) + hops * latency_us * 1e-6


def paper_table(gpu_tflops, overlap, latency_us):
    rows = []
    for name, (L, C) in PAPER_MODELS.items():
        for gbps in (100, 200, 400, 800):
            for tokens in (1024, 2048):
                c3, l3, t3 = paper_step("zero3", L, C, tokens, gbps, gpu_tflops, latency_us=latency_us,
                                        overlap=overlap)
                cp, lp, tp = paper_step("zeropp", L, C, tokens, gbps, gpu_tflops, latency_us=latency_us,
                                        overlap=overlap)
                rows.append((name, gbps, tokens, t3, tp, t3 / tp))
    return rows


def plot_paper(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, tokens in zip(axes, (1024, 2048)):
        for name in PAPER_MODELS:
            pts = [(r[1], r[5]) for r in rows if r[0] == name and r[2] == tokens]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"{name} (projected)")
        for gbps, tok, lo, hi, _ in PAPER:
            if tok in (None, tokens):
                ax.errorbar([gbps], [(lo + hi) / 2], yerr=[[(hi - lo) / 2]], fmt="s", color="k", capsize=4,
                            label="paper (reported range)")
        ax.set_xscale("log", base=2)
        ax.set_xticks([100, 200, 400, 800], ["100", "200", "400", "800"])
        ax.set_xlabel("inter-node Gbit/s per node (16 V100 per node, 384 GPUs)")
        ax.set_title(f"{tokens // 1024}K tokens per GPU")
        ax.axhline(1, color="grey", lw=0.5)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("ZeRO++ / ZeRO-3 throughput")
    handles, labels = axes[1].get_legend_handles_labels()
    uniq = dict(zip(labels, handles))  # the paper's points: one entry
    axes[1].legend(uniq.values(), uniq.keys(), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bytes", help="closed-form bytes against a study's counters")
    b.add_argument("study")
    v = sub.add_parser("validate", help="predicted against measured step times")
    v.add_argument("study")
    v.add_argument("--overlap", type=float, help="hidden fraction h (default: fitted)")
    v.add_argument("--links", choices=("emulated", "real"), default="emulated",
                   help="the study's runs to use: emulated links (default) or scripts/cluster's real ones")
    p = sub.add_parser("paper", help="the paper's setting")
    p.add_argument("--gpu-tflops", type=float, default=50.0, help="achieved FLOP rate of one V100 (default 50)")
    p.add_argument("--overlap", type=float, default=0.0, help="hidden fraction h (default 0)")
    p.add_argument("--latency-us", type=float, default=5.0, help="per message (default 5)")
    p.add_argument("--plot", help="write the figure here (PNG)")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args.cmd == "bytes":
        res = load_study(args.study)
        bad, n = check_bytes(res, root)
        for rid, kind, link, want, got in bad:
            print(f"MISMATCH {rid} {kind} {link}: closed form {want:.0f}, measured {got:.0f}")
        print(f"closed-form bytes: {n - len(bad)} of {n} (run, collective, link) counts equal")
        sys.exit(1 if bad else 0)
    if args.cmd == "validate":
        res = over_links(load_study(args.study), args.links)
        if args.overlap is None:
            h, rms = fit_overlap(res, root)
            print(f"fitted overlap h = {h:.2f} (RMS relative error {100 * rms:.1f}%)\n")
        else:
            h = args.overlap
        rows = validate(res, root, h)
        print("| layout | variant | Gbit/s | measured ms | predicted ms | error |")
        print("|---|---|---|---|---|---|")
        for Y, X, var, g, meas, pred, err in rows:
            print(f"| {Y}x{X} | {LABELS[var]} | {g:g} | {1e3 * meas:.0f} | {1e3 * pred:.0f} | {100 * err:+.1f}% |")
        errs = np.abs([r[6] for r in rows])
        print(f"\n{len(rows)} cells: median |error| {100 * np.median(errs):.1f}%, max {100 * errs.max():.1f}%, "
              f"within 15%: {int(np.sum(errs <= 0.15))}")
        print("\nZeRO++ / ZeRO-3 where the collectives cost only their links (T_machine = 0):")
        for (Y, X, g), r in sorted(link_bound(res, root, h).items()):
            print(f"- {Y}x{X} at {g:g} Gbit/s: {r:.2f}")
        return
    rows = paper_table(args.gpu_tflops, args.overlap, args.latency_us)
    print(f"GPU rate {args.gpu_tflops:g} TFLOP/s, overlap {args.overlap:g}, latency {args.latency_us:g} us\n")
    print("| model | Gbit/s per node | tokens per GPU | ZeRO-3 s/step | ZeRO++ s/step | ZeRO++ / ZeRO-3 |")
    print("|---|---|---|---|---|---|")
    for name, gbps, tokens, t3, tp, ratio in rows:
        print(f"| {name} | {gbps} | {tokens} | {t3:.2f} | {tp:.2f} | {ratio:.2f} |")
    t = {(r[0], r[1], r[2]): r for r in rows}
    print("\nZeRO++ at 200 Gbit/s against ZeRO-3 at 800 (time ratio; < 1: ZeRO++ faster):")
    for name in PAPER_MODELS:
        for tokens in (1024, 2048):
            print(f"- {name}, {tokens} tokens per GPU: {t[(name, 200, tokens)][4] / t[(name, 800, tokens)][3]:.2f}")
    print("\nReported (paper's authors, DeepSpeed blog):")
    for _, _, lo, hi, what in PAPER:
        print(f"- {what}: {lo:.2f}-{hi:.2f}")
    print("- ZeRO++ at 200 Gbit/s about as fast as ZeRO-3 at 800 (18B and 138B)")
    if args.plot:
        plot_paper(rows, args.plot)
        print(f"\nwrote {args.plot}")


if __name__ == "__main__":
    main()
