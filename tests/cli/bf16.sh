#!/usr/bin/env bash
# train.precision = bf16 end to end, 4 ranks as 2 nodes x 2: a tiny model
# trained 40 steps in fp32 and in bf16, for ZeRO-3 and for full ZeRO++ (qwZ,
# hpZ over the node, qgZ); the final validation losses of fp32 and bf16 must
# agree within 1%, and their training curves must differ (bf16 ran) (the 300-step default-deck run in docs/performance.md is
# held to the same). The start-up table must name the bf16 GEMM library.
# About 30 s on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
export OMP_NUM_THREADS=1  # oneDNN's threads, as OPENBLAS_NUM_THREADS=1 for OpenBLAS (ranks outnumber cores)
common=("${tiny[@]}" --data.val=data/kjv/val.bin --train.val_batches=2 --train.steps=40 --log.every=10
        --optim.warmup_steps=5 --zero.ranks_per_node=2)
zeropp=(--zero.quantized_weights=true --zero.hpz_partition_size=0 --zero.quantized_gradients=true)
val_loss() { sed -n -E 's/^val final \| step [0-9]+ \| loss ([0-9.]+)$/\1/p' "$1"; }
for variant in zero3 zeropp; do
  extra=()
  [[ $variant == zeropp ]] && extra=("${zeropp[@]}")
  for p in fp32 bf16; do
    out="$work/$variant-$p"
    if ! timeout 300 "$MPIEXEC" -n 4 "$ZEROPP" train inputs/default.toml "${common[@]}" "${extra[@]}" \
      --train.precision=$p --train.out_dir="$out" < /dev/null > "$out.log" 2>&1; then
      bad "$variant $p: training failed"
      tail -5 "$out.log"
    fi
  done
  f=$(val_loss "$work/$variant-fp32.log") b=$(val_loss "$work/$variant-bf16.log")
  if [[ -n $f && -n $b ]] && awk -v f="$f" -v b="$b" 'BEGIN { d = b - f; if (d < 0) d = -d; exit !(d <= 0.01 * f) }'; then
    ok "$variant: final validation loss bf16 $b within 1% of fp32 $f"
  else
    bad "$variant: final validation loss bf16 '$b' not within 1% of fp32 '$f'"
  fi
  # The bf16 products really ran: the training losses and norms are not fp32's.
  if [[ -n $(curve "$work/$variant-fp32.log") && $(curve "$work/$variant-fp32.log") != "$(curve "$work/$variant-bf16.log")" ]]; then
    ok "$variant: bf16 training curve differs from fp32's (rounding shows)"
  else
    bad "$variant: bf16 training curve identical to fp32's or missing"
  fi
  # oneDNN's matmul, or the BLAS "on bf16-rounded operands (oneDNN …, ISA …: no AMX)"
  if grep -qE "^ +precision +: bf16 GEMMs on (.* on bf16-rounded operands \()?oneDNN [0-9.]+, ISA [a-z0-9_]+" \
    "$work/$variant-bf16.log" &&
    grep -qE "^ +precision +: fp32$" "$work/$variant-fp32.log"; then
    ok "$variant: the start-up table names the precision, the bf16 kernel and oneDNN's ISA"
  else
    bad "$variant: no precision row naming oneDNN in the start-up table"
    grep -E "precision" "$work/$variant-bf16.log" "$work/$variant-fp32.log"
  fi
done
# A wrong value is one clear line naming the key.
if ! "$ZEROPP" train inputs/default.toml --train.precision=fp16 > "$work/bad.log" 2>&1 &&
  grep -q 'train.precision.*"fp16".*must be "fp32" or "bf16"' "$work/bad.log"; then
  ok "train.precision = fp16 is refused naming the key"
else
  bad "train.precision = fp16 not refused clearly"
  cat "$work/bad.log"
fi
finish
