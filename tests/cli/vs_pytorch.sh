#!/usr/bin/env bash
# scaling/vs_pytorch.py end to end on a small model (V 256, L 2, C 32, B 2,
# T 32): one interleaved round of zeropp and PyTorch, one core, fp32 and bf16,
# 2 timed steps each; the table's rows are printed with positive rates and a
# ratio. Keeps the side-by-side script from rotting (its figures are in
# docs/performance.md). About 15 s on a quiet 2-core machine.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
needs_corpus
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "SKIPPED: /usr/bin/python3 has no torch (apt: python3-torch)"
  exit 77
fi
cat > "$work/mini.toml" <<TOML
[model]
vocab_size = 256
max_seq_len = 32
n_layer = 2
n_head = 2
n_embd = 32
[train]
batch_size = 2
seq_len = 32
sample_tokens = 0
out_dir = "$work/run"
[data]
train = "data/kjv/train.bin"
val = ""
TOML
if out=$(/usr/bin/python3 scaling/vs_pytorch.py --zeropp "$ZEROPP" --decks "$work/mini.toml" --runs 1 --steps 2 \
  --cores 1 2>&1); then
  ok "vs_pytorch.py ran"
else
  bad "vs_pytorch.py failed: $out"
fi
echo "$out"
num='[0-9]+(\.[0-9]+)? \([0-9.]+–[0-9.]+\)'
for p in fp32 bf16; do
  if grep -Eq "^\| mini\.toml \| 1 \| $p \| $num \| 1 rank x 1 thread \| $num \| $num \|" <<< "$out"; then
    ok "row for $p: zeropp and PyTorch tokens/s and their ratio"
  else
    bad "no row for $p"
  fi
done
grep -Eq "^\| mini\.toml \| 1 \| fp32 \|.*\| [0-9.]+ \([0-9.]+–[0-9.]+\) \|$" <<< "$out" && ok "fp32 row has the GEMM ratio" ||
  bad "fp32 row lacks the GEMM ratio"
# A deck without a shape key is refused with the key's name.
printf '[model]\nvocab_size = 256\n' > "$work/bad.toml"
if out=$(/usr/bin/python3 scaling/vs_pytorch.py --zeropp "$ZEROPP" --decks "$work/bad.toml" --runs 1 2>&1); then
  bad "a deck without n_layer was accepted"
else
  grep -q "bad.toml: model.n_layer is not set" <<< "$out" && ok "missing key named" || bad "unclear error: $out"
fi
finish
