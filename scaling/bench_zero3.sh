#!/usr/bin/env bash
# ZeRO-3 against one rank on the same global batch, in one run: P = 1, 2, 4
# (one node) and 4 as 2 emulated nodes x 2. The global batch is B·A·P with
# A = 4/P, so every row trains on the same tokens per step. Prints a markdown
# table (tokens/s, overhead against P = 1, bytes per step by link class).
#   scaling/bench_zero3.sh [DECK] [STEPS]     (default inputs/default.toml, 10)
# For weak/strong-scaling studies over layouts, variants and link bandwidths use
# scaling/sweep.py and scaling/analyze.py (docs/scaling-study.md); this script stays
# for the `bench step` figures of docs/performance.md (ms/step, peak RSS).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ZEROPP_BUILD_DIR:-$root/build}"
deck="${1:-inputs/default.toml}"
steps="${2:-10}"
cd "$root"
export LD_PRELOAD="$build/lib/libzeropp_yield.so${LD_PRELOAD:+:$LD_PRELOAD}"
export OPENBLAS_NUM_THREADS=1
rows=()
base=""
echo "| layout | A | ms/step | tokens/s | vs P=1 | intra MB/step | inter MB/step | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|"
for layout in "1 1" "2 2" "4 4" "4 2"; do
  read -r P X <<< "$layout"
  A=$((4 / P))
  line=$(mpirun -n "$P" "$build/bin/zeropp" bench step "$deck" --steps "$steps" --train.grad_accum="$A" \
    --zero.ranks_per_node="$X" --data.val= | grep '^bench step .*| fp32 |')  # bench step times fp32 and bf16
  ms=$(sed -E 's/.*\| ([0-9.]+) ms\/step.*/\1/' <<< "$line")
  tok=$(sed -E 's/.*\| ([0-9.]+) tok\/s.*/\1/' <<< "$line")
  intra=$(sed -E 's/.*intra ([0-9.]+) MB.*/\1/' <<< "$line")
  inter=$(sed -E 's/.*inter ([0-9.]+) MB.*/\1/' <<< "$line")
  rss=$(sed -E 's/.*peak RSS ([0-9.]+) MiB.*/\1/' <<< "$line")
  [[ -z $base ]] && base=$tok
  ratio=$(awk -v a="$tok" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
  echo "| P=$P X=$X Y=$((P / X)) | $A | $ms | $tok | $ratio | $intra | $inter | $rss |"
done
