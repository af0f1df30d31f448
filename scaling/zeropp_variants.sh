#!/usr/bin/env bash
# ZeRO++ variants against ZeRO-3 on the same run: final training and
# validation loss and cross-node bytes per step, one row per variant
# (markdown). Defaults: the default deck, 4 ranks as 2 nodes x 2, 150 steps.
#   scaling/zeropp_variants.sh [STEPS] [RANKS] [RANKS_PER_NODE]
# scaling/sweep.py --define covers these variants for studies (docs/scaling-study.md);
# this script stays for the validation-loss table of docs/performance.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ZEROPP_BUILD_DIR:-$root/build}"
steps="${1:-150}" ranks="${2:-4}" rpn="${3:-2}"
cd "$root"
export LD_PRELOAD="$build/lib/libzeropp_yield.so${LD_PRELOAD:+:$LD_PRELOAD}"
export OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
variants=(
  "ZeRO-3|"
  "qwZ int8|--zero.quantized_weights=true"
  "qwZ int4|--zero.quantized_weights=true --zero.weight_bits=4"
  "qwZ fp8|--zero.quantized_weights=true --zero.weight_format=fp8"
  "hpZ|--zero.hpz_partition_size=0"
  "qgZ int4/int4|--zero.quantized_gradients=true"
  "qgZ int8/int4|--zero.quantized_gradients=true --zero.intra_node_gradient_bits=8"
  "qgZ int4/int4 + error feedback|--zero.quantized_gradients=true --zero.gradient_error_feedback=true"
  "ZeRO++ (qwZ+hpZ+qgZ)|--zero.quantized_weights=true --zero.hpz_partition_size=0 --zero.quantized_gradients=true"
  "ZeRO++ + int8 intra + EF|--zero.quantized_weights=true --zero.hpz_partition_size=0 --zero.quantized_gradients=true --zero.intra_node_gradient_bits=8 --zero.gradient_error_feedback=true"
)
echo "| variant | final train loss (mean of last 5 logged) | val loss | cross-node MB/step |"
echo "|---|---|---|---|"
for v in "${variants[@]}"; do
  label=${v%%|*} args=${v#*|}
  # shellcheck disable=SC2086
  mpirun -n "$ranks" "$build/bin/zeropp" train inputs/default.toml --zero.ranks_per_node="$rpn" \
    --train.steps="$steps" --log.every=1 --train.val_every=0 --train.sample_tokens=0 \
    --train.out_dir="$work/run" $args > "$work/log"
  train=$(grep '^step ' "$work/log" | tail -5 | sed -E 's/.*\| loss ([0-9.]+) .*/\1/' |
    awk '{ s += $1 } END { printf "%.4f", s / NR }')
  val=$(grep '^val final' "$work/log" | sed -E 's/.*loss ([0-9.]+).*/\1/')
  xnode=$(grep '^step ' "$work/log" | tail -1 | sed -E 's/.*xnode ([0-9.]+) MB.*/\1/')
  echo "| $label | $train | $val | $xnode |"
done
