#!/usr/bin/env bash
# The end of the loop: a GPT-2 that PyTorch made (random weights, written
# as Hugging Face saves it by tests/torch/gpt2_safetensors.py, nothing
# downloaded), imported with `zeropp ckpt import`, generates with
# `zeropp generate` (1 and 2 ranks, greedy) the same tokens as PyTorch's greedy
# decoding on the same weights. Exit 77 (SKIPPED) without python3-torch.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
if ! /usr/bin/python3 -c "import torch" 2> /dev/null; then
  echo "SKIPPED: python3-torch is not installed"
  exit 77
fi
/usr/bin/python3 "$ZEROPP_SOURCE_DIR/tests/torch/gpt2_safetensors.py" "$work/st" > /dev/null || bad "gpt2_safetensors.py"
"$ZEROPP" ckpt import "$work/st" "$work/st.h5" > /dev/null || bad "ckpt import"
want=$(cat "$work/st/greedy_ids.txt")
for np in 1 2; do
  got=$(timeout 300 "$MPIEXEC" -n $np "$ZEROPP" generate "$work/st.h5" --prompt-file "$work/st/greedy_prompt.txt" \
    --temperature 0 --max-new-tokens 11 --ids 2> "$work/err")
  if [[ -n "$want" && "$got" == "$want" ]]; then
    ok "imported PyTorch GPT-2 on $np rank(s): PyTorch's greedy tokens $want"
  else bad "greedy tokens on $np rank(s): ours '$got', PyTorch '$want'"; cat "$work/err"; fi
done
finish
