#!/usr/bin/python3
"""Independent GPT-2 reference: loss and every parameter gradient from PyTorch autograd.

Usage: /usr/bin/python3 gpt2_reference.py OUT.bin [--seed N] [--V 64 --maxT 16 --L 2 --H 4 --C 32 --B 3 --T 16]

The model is written here in plain torch (no transformers, nothing downloaded)
so that tests/models/test_torch_reference.cpp can check our forward/backward
against an implementation that shares no code with it, as llm.c does with its
PyTorch-dumped states. Everything is float64 so the comparison can be tight.

Weights are random but deliberately far from GPT-2's init (biases nonzero, LN
gains away from 1, larger matrices) so that attention is not uniform, GELU is
in its curved region and no gradient is trivially zero or identical to another.

File format (all little-endian, no padding):
  magic     8 bytes   b"ZPPTREF1"
  config    9 x int32 vocab_size V, max_seq_len, n_layer L, n_head H, n_embd C,
                      batch B, tokens per sequence T, number of tensors N, seed
  N times, in our unit order (src/models/param_layout.cpp: wte, wpe, h.0.ln_1.weight
  .. h.{L-1}.mlp.c_proj.bias, ln_f.weight, ln_f.bias):
    name_len int32, name (UTF-8, Hugging Face GPT-2 name, e.g. "h.0.attn.c_attn.weight"),
    ndim int32, dims ndim x int64 (Hugging Face shape, Conv1D weights [C_in, C_out]),
    weights numel x float64 (row-major), gradients numel x float64 (row-major)
  tokens    B*T x int32 (row-major [B, T])
  targets   B*T x int32
  loss      1 x float64 (mean cross-entropy over the B*T positions)
  end magic 8 bytes   b"ZPPTEND1"
"""
import argparse
import math
import struct

import torch
import torch.nn.functional as F


def param_specs(V, MAXT, L, C):
    """(name, shape) in our unit order; must match ParamLayout::gpt2."""
    specs = [("wte.weight", (V, C)), ("wpe.weight", (MAXT, C))]
    for l in range(L):
        h = f"h.{l}."
        specs += [
            (h + "ln_1.weight", (C,)), (h + "ln_1.bias", (C,)),
            (h + "attn.c_attn.weight", (C, 3 * C)), (h + "attn.c_attn.bias", (3 * C,)),
            (h + "attn.c_proj.weight", (C, C)), (h + "attn.c_proj.bias", (C,)),
            (h + "ln_2.weight", (C,)), (h + "ln_2.bias", (C,)),
            (h + "mlp.c_fc.weight", (C, 4 * C)), (h + "mlp.c_fc.bias", (4 * C,)),
            (h + "mlp.c_proj.weight", (4 * C, C)), (h + "mlp.c_proj.bias", (C,)),
        ]
    specs += [("ln_f.weight", (C,)), ("ln_f.bias", (C,))]
    return specs


def random_weight(name, shape, g):
    if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
        return 1.0 + 0.3 * torch.randn(shape, generator=g, dtype=torch.float64)
    if name.endswith(".bias"):
        return 0.1 * torch.randn(shape, generator=g, dtype=torch.float64)
    if name in ("wte.weight", "wpe.weight"):
        return 0.3 * torch.randn(shape, generator=g, dtype=torch.float64)
    # Matrices: ~1/sqrt(fan_in) keeps activations O(1) so softmax and GELU are non-trivial.
    return torch.randn(shape, generator=g, dtype=torch.float64) / math.sqrt(shape[0])


def gpt2_logits(p, tokens, L, H, C):
    Bn, Tn = tokens.shape
    hs = C // H
    x = p["wte.weight"][tokens] + p["wpe.weight"][:Tn]
    mask = torch.ones(Tn, Tn, dtype=torch.bool).tril()
    for l in range(L):
        q = lambda n: p[f"h.{l}.{n}"]  # noqa: E731
        h = F.layer_norm(x, (C,), q("ln_1.weight"), q("ln_1.bias"), eps=1e-5)
        qkv = h @ q("attn.c_attn.weight") + q("attn.c_attn.bias")  # Conv1D: y = x @ W + b
        qh, kh, vh = (t.view(Bn, Tn, H, hs).transpose(1, 2) for t in qkv.split(C, dim=2))
        att = (qh @ kh.transpose(-2, -1)) / math.sqrt(hs)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ vh).transpose(1, 2).reshape(Bn, Tn, C)
        x = x + y @ q("attn.c_proj.weight") + q("attn.c_proj.bias")
        h = F.layer_norm(x, (C,), q("ln_2.weight"), q("ln_2.bias"), eps=1e-5)
        h = F.gelu(h @ q("mlp.c_fc.weight") + q("mlp.c_fc.bias"), approximate="tanh")
        x = x + h @ q("mlp.c_proj.weight") + q("mlp.c_proj.bias")
    x = F.layer_norm(x, (C,), p["ln_f.weight"], p["ln_f.bias"], eps=1e-5)
    return x @ p["wte.weight"].t()  # LM head tied to wte


def gpt2_loss(p, tokens, targets, V, L, H, C):
    logits = gpt2_logits(p, tokens, L, H, C)
    return F.cross_entropy(logits.view(-1, V), targets.view(-1))  # mean over B*T


def parse_args(doc, out, seed, **shape):
    """The command line: the output path, --seed and the shape options with these defaults."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument(out)
    ap.add_argument("--seed", type=int, default=seed)
    for k, v in shape.items():
        ap.add_argument("--" + k, type=int, default=v)
    return ap.parse_args()


def write_reference(path, header, specs, params, tokens, targets, loss):
    """The file format above; header = (V, MAXT, L, H, C, B, T, seed)."""
    V, MAXT, L, H, C, B, T, seed = header
    with open(path, "wb") as f:
        f.write(b"ZPPTREF1")
        f.write(struct.pack("<9i", V, MAXT, L, H, C, B, T, len(specs), seed))
        for name, shape in specs:
            w = params[name]
            assert w.grad is not None and w.grad.abs().max() > 0, name
            nb = name.encode()
            f.write(struct.pack("<i", len(nb)))
            f.write(nb)
            f.write(struct.pack("<i", len(shape)))
            f.write(struct.pack(f"<{len(shape)}q", *shape))
            f.write(w.detach().numpy().astype("<f8").tobytes())
            f.write(w.grad.numpy().astype("<f8").tobytes())
        f.write(tokens.to(torch.int32).numpy().astype("<i4").tobytes())
        f.write(targets.to(torch.int32).numpy().astype("<i4").tobytes())
        f.write(struct.pack("<d", loss.item()))
        f.write(b"ZPPTEND1")


def run(name, specs_of, weight_of, loss_of, doc):
    """Parses the command line, draws weights and tokens, backpropagates, writes."""
    args = parse_args(doc, "out", 1234, V=64, maxT=16, L=2, H=4, C=32, B=3, T=16)
    V, MAXT, L, H, C, B, T = args.V, args.maxT, args.L, args.H, args.C, args.B, args.T
    assert C % H == 0 and 0 < T <= MAXT
    torch.set_num_threads(1)  # the ctest machines are small; this model is tiny
    g = torch.Generator().manual_seed(args.seed)
    specs = specs_of(V, MAXT, L, C)
    params = {n: weight_of(n, s, g).requires_grad_() for n, s in specs}
    tokens = torch.randint(0, V, (B, T), generator=g)
    targets = torch.randint(0, V, (B, T), generator=g)
    loss = loss_of(params, tokens, targets, V, L, H, C)
    loss.backward()
    write_reference(args.out, (V, MAXT, L, H, C, B, T, args.seed), specs, params, tokens, targets, loss)
    print(f"{name}: loss {loss.item():.17g}, {len(specs)} tensors -> {args.out}")


if __name__ == "__main__":
    run("gpt2_reference", param_specs, random_weight, gpt2_loss, __doc__)
