#!/usr/bin/python3
"""zeropp next to PyTorch (Debian's python3-torch 1.13, CPU) on the same GPT-2 step.

Usage (repository root, after scripts/setup and scripts/prepare-corpus):
  /usr/bin/python3 scaling/vs_pytorch.py [--decks inputs/tiny.toml inputs/small.toml]
      [--runs 5] [--steps 5] [--cores 1 2] [--zeropp build/bin/zeropp]

For each deck and core count, `runs` rounds alternate a zeropp run and a PyTorch
run (interleaved, so a change in the machine's load hits both), each in its own
process pinned with taskset to the first `cores` CPUs:
  zeropp:  `zeropp bench step DECK --steps N` (N timed steps after one warm-up,
           median; fp32 and bf16 in the same process). With 2 cores both settings run in every
           round, one rank with 2 BLAS/oneDNN threads and 2 ranks of 1 thread
           each on half the batch per rank (the same global batch), and the
           better of the two medians is reported.
  PyTorch: the same model written here in plain torch (tied LM head, pre-norm
           blocks, tanh GELU, causal attention), AdamW, the deck's B and T,
           torch.set_num_threads(cores); fp32, and bf16 under
           torch.autocast("cpu") (oneDNN's bf16 GEMMs with fp32 weights, as
           zeropp's train.precision = bf16). N timed steps after one warm-up,
           median.
Both sides get OPENBLAS_CORETYPE from scripts/openblas-coretype (Debian's torch
runs its fp32 GEMMs through OpenBLAS too).
Prints one markdown row per deck, cores and precision: the medians of tokens/s
and their spread (min-max over the rounds), and the ratio zeropp / PyTorch
(median and spread of the per-round ratios); with fp32, zeropp's step rate over
its GEMM library's rate on the model's shapes ("GEMM ratio").
Exit status 0 when every run worked (the ratios are reported, not judged).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import tomllib

PRECISIONS = ("fp32", "bf16")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def deck_shapes(path):
    """The model and batch shapes a deck sets; every one must be in the deck."""
    with open(path, "rb") as f:
        deck = tomllib.load(f)
    shapes = {}
    for table, key in (("model", "vocab_size"), ("model", "n_layer"), ("model", "n_head"), ("model", "n_embd"),
                       ("train", "batch_size"), ("train", "seq_len")):
        try:
            shapes[key] = int(deck[table][key])
        except KeyError:
            sys.exit(f"vs_pytorch: {path}: {table}.{key} is not set (the script needs it explicitly)")
    return shapes


def pinned(cores):
    return ["taskset", "-c", ",".join(str(c) for c in range(cores))]


def run_checked(cmd, env):
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"vs_pytorch: failed ({res.returncode}): {' '.join(cmd)}\n{res.stdout}{res.stderr}")
    return res.stdout


def threads_env(threads):
    """The environment of a run with `threads` BLAS/OpenMP threads and the
    OpenBLAS kernels scripts/openblas-coretype picks (both sides use them)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    coretype = run_checked(["bash", os.path.join(REPO, "scripts", "openblas-coretype")], env).strip()
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    return env


def zeropp_run(args, deck, shapes, cores, ranks):
    """{precision: (tok/s, GEMM ratio)} of one `zeropp bench step`."""
    env = threads_env(cores // ranks)
    cmd = [args.zeropp, "bench", "step", deck, "--steps", str(args.steps), "--data.val="]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks)] + cmd + [f"--train.batch_size={shapes['batch_size'] // ranks}"]
    out = run_checked(pinned(cores) + cmd, env)
    got = {}
    for p in PRECISIONS:
        m = re.search(rf"^bench step \| [^|]* \| {p} \| [0-9.]+ ms/step \| ([0-9.]+) tok/s .*\| ratio ([0-9.]+)",
                      out, re.M)
        if not m:
            sys.exit(f"vs_pytorch: no '{p}' result line in zeropp's output:\n{out}")
        got[p] = (float(m.group(1)), float(m.group(2)))
    return got


def torch_run(args, shapes, cores):
    """{precision: tok/s} of one PyTorch process."""
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", "--steps", str(args.steps),
           "--threads", str(cores)] + [f"--{k}={v}" for k, v in shapes.items()]
    out = run_checked(pinned(cores) + cmd, threads_env(cores))
    return {p: float(re.search(rf"^{p} ([0-9.]+) tok/s$", out, re.M).group(1)) for p in PRECISIONS}


def torch_worker(a):
    """Times the PyTorch model; prints "fp32 X tok/s" and "bf16 X tok/s"."""
    import math

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    V, L, H, C, B, T = a.vocab_size, a.n_layer, a.n_head, a.n_embd, a.batch_size, a.seq_len
    hs = C // H

    def block_params():
        r = lambda *s: torch.nn.Parameter(0.02 * torch.randn(*s))  # noqa: E731
        z = lambda *s: torch.nn.Parameter(torch.zeros(*s))  # noqa: E731
        o = lambda *s: torch.nn.Parameter(torch.ones(*s))  # noqa: E731
        return [o(C), z(C), r(C, 3 * C), z(3 * C), r(C, C), z(C), o(C), z(C), r(C, 4 * C), z(4 * C), r(4 * C, C),
                z(C)]

    wte = torch.nn.Parameter(0.02 * torch.randn(V, C))
    wpe = torch.nn.Parameter(0.02 * torch.randn(T, C))
    blocks = [block_params() for _ in range(L)]
    lnf = [torch.nn.Parameter(torch.ones(C)), torch.nn.Parameter(torch.zeros(C))]
    params = [wte, wpe] + [p for b in blocks for p in b] + lnf
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    def loss_of(tokens, targets):
        x = wte[tokens] + wpe[:T]
        for ln1w, ln1b, aw, ab, pw, pb, ln2w, ln2b, fw, fb, mw, mb in blocks:
            h = F.layer_norm(x, (C,), ln1w, ln1b)
            q, k, v = (t.view(B, T, H, hs).transpose(1, 2) for t in (h @ aw + ab).split(C, dim=2))
            att = ((q @ k.transpose(-2, -1)) / math.sqrt(hs)).masked_fill(~mask, float("-inf")).softmax(-1)
            x = x + (att @ v).transpose(1, 2).reshape(B, T, C) @ pw + pb
            x = x + F.gelu(F.layer_norm(x, (C,), ln2w, ln2b) @ fw + fb, approximate="tanh") @ mw + mb
        logits = F.layer_norm(x, (C,), lnf[0], lnf[1]) @ wte.t()
        return F.cross_entropy(logits.reshape(B * T, V).float(), targets.reshape(B * T))

    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, V, (B, T), generator=g)
    targets = torch.randint(0, V, (B, T), generator=g)
    for p in PRECISIONS:
        times = []
        for s in range(a.steps + 1):  # step 0 warms up and is not timed
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=p == "bf16"):
                loss = loss_of(tokens, targets)
            loss.backward()
            opt.step()
            if s > 0:
                times.append(time.perf_counter() - t0)
        print(f"{p} {B * T / statistics.median(times):.1f} tok/s", flush=True)


def spread(xs, fmt):
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--decks", nargs="+", default=["inputs/tiny.toml", "inputs/small.toml"])
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds (medians over them)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps per run, after one warm-up")
    ap.add_argument("--cores", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    ap.add_argument("--zeropp", default="build/bin/zeropp")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    for k in ("vocab_size", "n_layer", "n_head", "n_embd", "batch_size", "seq_len"):
        ap.add_argument(f"--{k}", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return torch_worker(a)
    if a.runs < 1 or a.steps < 1:
        sys.exit("vs_pytorch: --runs and --steps must be at least 1")
    if (os.cpu_count() or 1) < max(a.cores):
        sys.exit(f"vs_pytorch: --cores {max(a.cores)} but this machine has {os.cpu_count()}")
    print(f"| deck | cores | precision | zeropp tok/s | zeropp setting | PyTorch tok/s | zeropp / PyTorch | "
          f"GEMM ratio |\n|---|---:|---|---:|---|---:|---:|---:|", flush=True)
    for deck in a.decks:
        shapes = deck_shapes(deck)
        for cores in a.cores:
            # zeropp settings: ranks per run (1 rank with `cores` threads, or one rank per core)
            settings = sorted({1, cores}) if shapes["batch_size"] % cores == 0 else [1]
            z = {(r, p): [] for r in settings for p in PRECISIONS}
            gemm = {r: [] for r in settings}
            t = {p: [] for p in PRECISIONS}
            for _ in range(a.runs):
                for r in settings:
                    got = zeropp_run(a, deck, shapes, cores, r)
                    for p in PRECISIONS:
                        z[(r, p)].append(got[p][0])
                    gemm[r].append(got["fp32"][1])
                for p, v in torch_run(a, shapes, cores).items():
                    t[p].append(v)
                # each round's figures as they come (stderr), so that a long run can be followed
                print(f"{os.path.basename(deck)} cores {cores} round {len(t['fp32'])}: zeropp " +
                      ", ".join(f"{r} rank(s) {p} {z[(r, p)][-1]:.0f}" for r in settings for p in PRECISIONS) +
                      f"; PyTorch fp32 {t['fp32'][-1]:.0f}, bf16 {t['bf16'][-1]:.0f} tok/s", file=sys.stderr,
                      flush=True)
            for p in PRECISIONS:
                best = max(settings, key=lambda r: statistics.median(z[(r, p)]))
                what = f"{best} rank{'s' if best > 1 else ''} x {cores // best} thread{'s' if cores > best else ''}"
                ratios = [zz / tt for zz, tt in zip(z[(best, p)], t[p])]
                g = spread(gemm[best], "{:.2f}") if p == "fp32" else ""
                print(f"| {os.path.basename(deck)} | {cores} | {p} | {spread(z[(best, p)], '{:.0f}')} | {what} | "
                      f"{spread(t[p], '{:.0f}')} | {spread(ratios, '{:.2f}')} | {g} |", flush=True)


if __name__ == "__main__":
    main()
