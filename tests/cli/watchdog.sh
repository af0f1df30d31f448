#!/usr/bin/env bash
# A stalled rank (fault injection) must not hang the job: the others'
# watchdog aborts it with one line naming the collective, unit, step and the
# rank that did not arrive.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
start=$(date +%s)
timeout 120 "$MPIEXEC" -n 4 "$ZEROPP" train inputs/default.toml --zero.ranks_per_node=2 --train.steps=5 --log.every=1 \
  --train.sample_tokens=0 --data.val= --train.out_dir="$work/run" --comm.timeout_s=3 \
  --comm.fault_stall_rank=3 --comm.fault_stall_step=2 > "$work/out" 2> "$work/err"
rc=$?
cat "$work/out" "$work/err"
elapsed=$(( $(date +%s) - start ))
if [[ $rc -eq 0 || $rc -eq 124 ]]; then echo "FAIL: exit status $rc (want the watchdog's abort)"; exit 1; fi
# One line for the job, from rank 0, naming the stalled rank and its (emulated) node.
if [[ $(grep -c 'did not complete within' "$work/err") -ne 1 ]] ||
  ! grep -qE "^zeropp: rank 0: all-gather \(forward gather\) of unit '[^']+' at step 2 did not complete within 3 s; aborting: rank 3 \(node 1, ranks 2-3\) did not arrive$" "$work/err"; then
  echo "FAIL: the watchdog's one line is missing"; exit 1
fi
grep -q '^step 2/5' "$work/out" || { echo "FAIL: steps before the stall did not run"; exit 1; }
echo "watchdog fired after ${elapsed}s"
echo "1 passed, 0 failed"
