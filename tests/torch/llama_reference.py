#!/usr/bin/python3
"""Independent LLaMA-style reference: loss and every parameter gradient from PyTorch autograd.

Usage: /usr/bin/python3 llama_reference.py OUT.bin [--seed N] [--V 64 --maxT 16 --L 2 --H 4 --C 32 --B 3 --T 16]

The model of src/models/llama written in plain torch, float64: RMSNorm (eps
1e-5), rotary positions on interleaved pairs (theta = t * 10000^(-2i/hs)),
causal attention, SwiGLU with hidden size 4C (gate | up fused), untied head.
The file format is gpt2_reference.py's, tensors in src/models/llama's unit order.
"""
import math

import torch
import torch.nn.functional as F

from gpt2_reference import run


def param_specs(V, MAXT, L, C):
    """(name, shape) in our unit order; must match llama_layout (ffn_hidden 0: 4C)."""
    Fh = 4 * C
    specs = [("tok_embeddings.weight", (V, C))]
    for l in range(L):
        h = f"layers.{l}."
        specs += [
            (h + "attention_norm.weight", (C,)), (h + "attention.wqkv.weight", (C, 3 * C)),
            (h + "attention.wo.weight", (C, C)), (h + "ffn_norm.weight", (C,)),
            (h + "feed_forward.w13.weight", (C, 2 * Fh)), (h + "feed_forward.w2.weight", (Fh, C)),
        ]
    specs += [("norm.weight", (C,)), ("output.weight", (V, C))]
    return specs


def random_weight(name, shape, g):
    if name.endswith("norm.weight"):
        return 1.0 + 0.3 * torch.randn(shape, generator=g, dtype=torch.float64)
    if name in ("tok_embeddings.weight", "output.weight"):
        return 0.3 * torch.randn(shape, generator=g, dtype=torch.float64)
    return torch.randn(shape, generator=g, dtype=torch.float64) / math.sqrt(shape[0])


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w


def rotary(x, hs):
    """x [B, T, H, hs]: pair i of position t rotated by t * 10000^(-2i/hs)."""
    Tn = x.shape[1]
    inv = 10000.0 ** (-torch.arange(0, hs, 2, dtype=torch.float64) / hs)
    theta = torch.arange(Tn, dtype=torch.float64)[:, None] * inv[None, :]  # [T, hs/2]
    c, s = theta.cos()[None, :, None, :], theta.sin()[None, :, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


def llama_loss(p, tokens, targets, V, L, H, C):
    Bn, Tn = tokens.shape
    hs = C // H
    x = p["tok_embeddings.weight"][tokens]
    mask = torch.ones(Tn, Tn, dtype=torch.bool).tril()
    for l in range(L):
        q = lambda n: p[f"layers.{l}.{n}"]  # noqa: E731
        h = rms_norm(x, q("attention_norm.weight"))
        qh, kh, vh = (h @ q("attention.wqkv.weight")).split(C, dim=2)
        qh = rotary(qh.view(Bn, Tn, H, hs), hs).transpose(1, 2)
        kh = rotary(kh.view(Bn, Tn, H, hs), hs).transpose(1, 2)
        vh = vh.view(Bn, Tn, H, hs).transpose(1, 2)
        att = (qh @ kh.transpose(-2, -1)) / math.sqrt(hs)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ vh).transpose(1, 2).reshape(Bn, Tn, C)
        x = x + y @ q("attention.wo.weight")
        h = rms_norm(x, q("ffn_norm.weight"))
        gate, up = (h @ q("feed_forward.w13.weight")).chunk(2, dim=-1)
        x = x + (F.silu(gate) * up) @ q("feed_forward.w2.weight")
    x = rms_norm(x, p["norm.weight"])
    logits = x @ p["output.weight"].t()  # untied head
    return F.cross_entropy(logits.view(-1, V), targets.view(-1))


if __name__ == "__main__":
    run("llama_reference", param_specs, random_weight, llama_loss, __doc__)
