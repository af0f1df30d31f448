#!/usr/bin/env bash
# A rank that hangs inside a checkpoint save (fault injection: its process alive,
# as when its node drops off the network mid-write) must not hang the job: on 2
# ranks, synchronous and asynchronous, the save of step 4 stalls on rank 1 after
# its first dataset; checkpoint.timeout_s = 3 ends the run with one line naming
# the save, a non-zero status, within the limit plus the watchdog's stagger and
# a margin, and step 2's checkpoint still named by `latest` and verifying. Reading
# weights for generation is under the same limit: one far too short ends it the same way.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
for mode in false true; do
  name=sync
  [[ $mode == true ]] && name=async
  out=$work/$name
  echo "step: $name save stalled on rank 1"
  t0=$SECONDS
  timeout -k 5 120 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${tiny[@]}" --log.every=1 \
    --train.steps=8 --checkpoint.every=2 --checkpoint.async=$mode --checkpoint.timeout_s=3 \
    --checkpoint.fault_kill_rank=1 --checkpoint.fault_kill_step=4 --checkpoint.fault_kill_after=1 \
    --checkpoint.fault_stall=true --train.out_dir="$out" > "$out.log" 2>&1
  rc=$? took=$((SECONDS - t0))
  line=$(grep -E 'checkpoint save of step 4 did not complete within 3 s' "$out.log")
  latest=$(cat "$out/checkpoints/latest" 2> /dev/null)
  # The run itself takes a few seconds; rank 0 gives up 3 s into the save.
  if ((rc != 0 && rc != 124 && took < 30)) && [[ $(grep -c . <<< "$line") -eq 1 ]] &&
    [[ $line == "zeropp: rank 0: "*"exiting, the last complete checkpoint stays in $out/checkpoints" ]] &&
    [[ $latest == step_00000002.h5 ]] && "$ZEROPP" ckpt verify "$out/checkpoints/$latest" > /dev/null 2>&1; then
    ok "$name save stalled: status $rc after $took s, one line, step 2 verifies"
  else
    bad "$name save stalled: status $rc after $took s, latest '$latest', line(s): '$line'"
    tail -5 "$out.log"
  fi
done
echo "step: generate under a limit no read can meet"
timeout -k 5 60 "$MPIEXEC" -n 2 "$ZEROPP" generate "$work/sync" --prompt "In the" --max-new-tokens 2 \
  --checkpoint.timeout_s=0.000001 > "$work/gen.log" 2>&1
rc=$?
line=$(grep -E "^zeropp: rank 0: reading the weights of $work/sync/checkpoints/step_00000002.h5 did not complete within 1e-06 s" \
  "$work/gen.log")
if ((rc != 0 && rc != 124)) && [[ -n $line ]]; then
  ok "generate: status $rc, $(cut -c1-90 <<< "$line")..."
else
  bad "generate under checkpoint.timeout_s: status $rc"
  tail -3 "$work/gen.log"
fi
finish
