#!/usr/bin/env bash
# train.threads: one rank of the tiny model trained 3 steps with 2 threads (the
# environment says 1) reports 2 threads (and with 1, one) for the BLAS, the bf16 GEMM and the
# elementwise kernels in its start-up table, and its losses equal the 1-thread
# run's to the printed digits (the GEMMs split C, not the sums, between
# threads: tests/kernels/gemm/test_gemm_threads.cpp; the elementwise kernels cut
# fixed chunks: test_kernel_threads.cpp). About 2 s on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}"
needs_corpus
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
for n in 1 2; do
  "$ZEROPP" train inputs/tiny.toml "${tiny[@]}" --train.steps=3 --log.every=1 --train.precision=bf16 \
    --train.threads=$n --train.out_dir="$work/t$n" > "$work/t$n.log" 2>&1 || bad "train.threads = $n failed"
done
# The thread count each row names, whatever the rest of the row says (the BLAS's and
# oneDNN's own wording differ between CPUs and kernels).
threads_of() {  # threads_of LOG ROW-LABEL: the number before "thread(s)" on that row
  grep -E "^ +$2 +: " "$1" | grep -oE '[0-9]+ threads?\b' | head -n 1 | cut -d' ' -f1
}
rows=(BLAS precision 'elementwise kernels')
counts() { for r in "${rows[@]}"; do printf '%s ' "$(threads_of "$1" "$r")"; done; }
if [[ $(counts "$work/t1.log") == "1 1 1 " && $(counts "$work/t2.log") == "2 2 2 " ]]; then
  ok "train.threads = 1 and 2: the start-up table's BLAS, bf16 and elementwise rows name that many threads"
else
  bad "train.threads not in the start-up table: 1 thread gives '$(counts "$work/t1.log")', 2 give '$(counts "$work/t2.log")'"
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
