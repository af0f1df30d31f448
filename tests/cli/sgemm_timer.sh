#!/usr/bin/env bash
# src/bench/profile/sgemm_timer.c preloaded into a 2-step run: one row per GEMM
# shape with its call count, and the total line. A few seconds.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
needs_corpus
lib=$(dirname "${ZEROPP:?}")/../lib/libzeropp_sgemm_timer.so
[[ -f $lib ]] || { echo "FAIL no $lib"; exit 1; }
if LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$lib" OPENBLAS_NUM_THREADS=1 "$ZEROPP" train inputs/tiny.toml "${tiny[@]}" \
  --train.steps=2 --checkpoint.at_end=false --train.out_dir="$work/run" > "$work/out" 2>&1; then
  ok "the run with the library preloaded"
else
  bad "the run with the library preloaded: $(tail -3 "$work/out")"
fi
# The MLP's first product (x·W, [256, 64] x [64, 256], beta 1: onto its bias rows):
# once per layer and step, 2 x 2.
if grep -q '^| A | B | 256 | 256 | 64 | 64 256 256 | 1 | 4 | ' "$work/out"; then
  ok "the MLP forward product's row, 4 calls"
else
  bad "no row '| A | B | 256 | 256 | 64 | 64 256 256 | 1 | 4 |': $(grep '^|' "$work/out" | head -20)"
fi
if grep -Eq '^sgemm_timer: total [0-9.]+ ms in the run \([0-9.]+ GFLOP/s\), [0-9.]+ ms hot .*run / hot [0-9.]+$' \
  "$work/out"; then
  ok "the total line"
else
  bad "no total line: $(grep sgemm_timer "$work/out")"
fi
finish
