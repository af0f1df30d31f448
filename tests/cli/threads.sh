#!/usr/bin/env bash
# train.threads: one rank of the tiny model trained 3 steps with 2 threads (the
# environment says 1) reports 2 threads for the BLAS, the bf16 GEMM and the
# elementwise kernels in its start-up table, and its losses equal the 1-thread
# run's to the printed digits (the GEMMs split C, not the sums, between
# threads: tests/kernels/test_gemm_threads.cpp; the elementwise kernels cut
# fixed chunks: test_kernel_threads.cpp). About 2 s on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}"
needs_corpus
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
for n in 1 2; do
  "$ZEROPP" train inputs/tiny.toml "${tiny[@]}" --train.steps=3 --log.every=1 --train.precision=bf16 \
    --train.threads=$n --train.out_dir="$work/t$n" > "$work/t$n.log" 2>&1 || bad "train.threads = $n failed"
done
if grep -qE '^ +BLAS +: .*\(2 threads\)$' "$work/t2.log" &&
  grep -qE '^ +precision +: bf16 GEMMs on .*\(2 threads\)' "$work/t2.log" &&
  grep -qE '^ +elementwise kernels +: .*\(2 threads\)$' "$work/t2.log"; then
  ok "train.threads = 2: the start-up table shows 2 GEMM and elementwise threads"
else
  bad "train.threads = 2 not in the start-up table"
  grep -E 'BLAS|precision|elementwise' "$work/t2.log"
fi
losses() { grep -E '^step ' "$1" | sed -E 's/\| [0-9.]+ ms.*//'; }
if [[ -n $(losses "$work/t1.log") ]] && diff <(losses "$work/t1.log") <(losses "$work/t2.log") > /dev/null; then
  ok "losses with 1 and 2 threads agree"
else
  bad "losses differ between 1 and 2 threads"
  losses "$work/t1.log"
  losses "$work/t2.log"
fi
finish
