#!/usr/bin/python3
"""A GPT-2 as Hugging Face saves it, with random weights, and PyTorch's next-token
probabilities on a batch: for tests/app/test_import_torch.cpp (`zeropp ckpt import`).

Usage: /usr/bin/python3 gpt2_safetensors.py OUT_DIR [--seed N] [--V 96 --maxT 16 --L 2 --H 4 --C 32 --B 2 --T 16]

Writes, with nothing downloaded and neither transformers nor the safetensors
package (the format is written here: 8-byte header length, JSON header, raw bytes):
  OUT_DIR/model.safetensors  GPT2LMHeadModel's state dict: "transformer."-prefixed float32
                             weights (Conv1D [in, out]), the h.<l>.attn.bias / masked_bias
                             buffers, and lm_head.weight (= wte, tied)
  OUT_DIR/config.json        its shape, in Hugging Face's keys
  OUT_DIR/gpt2_llmc.bin      the same weights as llm.c's float32 model file (version 3):
                             layers stacked, matrices [out, in], wte padded to Vp = 128 rows
  OUT_DIR/greedy_prompt.txt  a prompt of printable bytes (ids 32..95, one line) and
  OUT_DIR/greedy_ids.txt     PyTorch's greedy continuation of it (11 ids, recomputing the
                             whole float64 forward for every token; tests/cli/generate_torch.sh)
  OUT_DIR/reference.bin      magic b"ZPPIMP01"; int32 B, T, V; tokens B*T int32;
                             targets B*T int32; probabilities B*T*V float64 (softmax of the
                             logits); loss float64 (mean cross-entropy); b"ZPPIEND1"
The reference is computed in float64 from the float32 weights the file holds.
"""
import json
import os
import struct

import torch
import torch.nn.functional as F

from gpt2_reference import gpt2_logits, param_specs, parse_args, random_weight


def write_safetensors(path, tensors):
    """tensors: list of (name, float32 torch tensor), written in this order."""
    header, blobs, pos = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors:
        b = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [pos, pos + len(b)]}
        blobs.append(b)
        pos += len(b)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_llmc(path, p, V, maxT, L, H, C):
    """llm.c's layout: 256 int32 header, then 16 arrays (matrices transposed to [out, in])."""
    Vp = (V + 127) // 128 * 128
    header = [20240326, 3, maxT, V, L, H, C, Vp] + [0] * 248
    stack = lambda suffix, t=False: torch.stack([p[f"h.{l}.{suffix}"].t() if t else p[f"h.{l}.{suffix}"] for l in range(L)])  # noqa: E731
    arrays = [torch.cat([p["wte.weight"], torch.zeros(Vp - V, C)]), p["wpe.weight"],
              stack("ln_1.weight"), stack("ln_1.bias"), stack("attn.c_attn.weight", True), stack("attn.c_attn.bias"),
              stack("attn.c_proj.weight", True), stack("attn.c_proj.bias"), stack("ln_2.weight"), stack("ln_2.bias"),
              stack("mlp.c_fc.weight", True), stack("mlp.c_fc.bias"), stack("mlp.c_proj.weight", True),
              stack("mlp.c_proj.bias"), p["ln_f.weight"], p["ln_f.bias"]]
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        for a in arrays:
            f.write(a.contiguous().numpy().astype("<f4").tobytes())


def main():
    a = parse_args(__doc__, "out_dir", 4321, V=96, maxT=16, L=2, H=4, C=32, B=2, T=16)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(a.seed)
    params = {n: random_weight(n, s, g).float() for n, s in param_specs(a.V, a.maxT, a.L, a.C)}
    tensors = []
    for n, t in params.items():
        tensors.append(("transformer." + n, t))
        if n.endswith("ln_1.weight"):  # the buffers GPT2Attention registers (not weights)
            l = n.split(".")[1]
            mask = torch.ones(a.maxT, a.maxT).tril().view(1, 1, a.maxT, a.maxT)
            tensors += [(f"transformer.h.{l}.attn.bias", mask), (f"transformer.h.{l}.attn.masked_bias", torch.tensor(-1e4))]
    tensors.append(("lm_head.weight", params["wte.weight"]))
    os.makedirs(a.out_dir, exist_ok=True)
    write_safetensors(os.path.join(a.out_dir, "model.safetensors"), tensors)
    config = dict(architectures=["GPT2LMHeadModel"], model_type="gpt2", vocab_size=a.V, n_positions=a.maxT,
                  n_ctx=a.maxT, n_embd=a.C, n_layer=a.L, n_head=a.H, n_inner=None,
                  activation_function="gelu_new", layer_norm_epsilon=1e-5, tie_word_embeddings=True)
    json.dump(config, open(os.path.join(a.out_dir, "config.json"), "w"), indent=2)
    write_llmc(os.path.join(a.out_dir, "gpt2_llmc.bin"), params, a.V, a.maxT, a.L, a.H, a.C)

    p64 = {n: t.double() for n, t in params.items()}
    tokens = torch.randint(0, a.V, (a.B, a.T), generator=g)
    targets = torch.randint(0, a.V, (a.B, a.T), generator=g)
    logits = gpt2_logits(p64, tokens, a.L, a.H, a.C)
    probs = logits.softmax(dim=-1)
    loss = F.cross_entropy(logits.view(-1, a.V), targets.view(-1))
    with open(os.path.join(a.out_dir, "reference.bin"), "wb") as f:
        f.write(b"ZPPIMP01" + struct.pack("<3i", a.B, a.T, a.V))
        f.write(tokens.to(torch.int32).numpy().astype("<i4").tobytes())
        f.write(targets.to(torch.int32).numpy().astype("<i4").tobytes())
        f.write(probs.numpy().astype("<f8").tobytes())
        f.write(struct.pack("<d", loss.item()) + b"ZPPIEND1")
    prompt = torch.randint(32, min(96, a.V), (5,), generator=g)
    seq = prompt.view(1, -1)
    for _ in range(11):
        nxt = gpt2_logits(p64, seq, a.L, a.H, a.C)[0, -1].argmax()
        seq = torch.cat([seq, nxt.view(1, 1)], dim=1)
    with open(os.path.join(a.out_dir, "greedy_prompt.txt"), "w") as f:
        f.write("".join(chr(t) for t in prompt.tolist()) + "\n")
    with open(os.path.join(a.out_dir, "greedy_ids.txt"), "w") as f:
        f.write(" ".join(str(t) for t in seq[0, len(prompt):].tolist()) + "\n")
    print(f"gpt2_safetensors: {len(tensors)} tensors, loss {loss.item():.17g} -> {a.out_dir}")


if __name__ == "__main__":
    main()
