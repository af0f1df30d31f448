#!/usr/bin/env bash
# A loss that turns non-finite (here: a learning rate of 1e30, so the first
# update throws the weights to ~1e30 and the next forward overflows) stops the
# run with one line naming the step and the last good checkpoint, exit status
# 4. Nothing is saved after it: `latest` still names a checkpoint with finite
# values only, and retention (keep 2) has removed none of the good ones.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
out="$work/run"
timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${tiny[@]}" \
  --train.steps=10 --optim.lr=1e30 --optim.warmup_steps=0 --checkpoint.at_start=true --checkpoint.every=1 \
  --checkpoint.keep=2 --train.out_dir="$out" > "$work/out" 2> "$work/err"
rc=$?
cat "$work/out" "$work/err"
ck="$out/checkpoints"
line=$(grep -E '^zeropp: error: step [0-9]+: loss is (nan|-?inf) \(gradient norm [-a-z0-9.e+]+\) - stopping; last good checkpoint: ' "$work/err")
step=$(sed -E 's/^zeropp: error: step ([0-9]+):.*/\1/' <<< "$line")
good=$(printf '%s/step_%08d.h5' "$ck" $((step - 1)))
if [[ $rc -eq 4 && -n $line && $(grep -c . "$work/err") -eq 1 && $line == *"checkpoint: $good" ]]; then
  ok "exit status 4 and one line: $line"
else bad "rc=$rc, line: ${line:-none}"; fi
if [[ -n $line ]] && [[ $(tail -n 1 "$out/train.log") == "$line" ]]; then ok "train.log ends with the same line"
else bad "train.log does not end with the error line: $(tail -n 1 "$out/train.log" 2> /dev/null)"; fi
latest=$(cat "$ck/latest" 2> /dev/null)
if [[ $latest == "$(basename "$good")" ]] && [[ $(ls "$ck") == "$(printf 'latest\nstep_%08d.h5\nstep_%08d.h5' $((step - 2)) $((step - 1)))" ]]; then
  ok "latest is still $latest; the newest two good checkpoints are kept, none after step $((step - 1))"
else bad "checkpoints after the stop: latest=$latest, $(ls "$ck" | tr '\n' ' ')"; fi
if /usr/bin/python3 - "$ck"/step_*.h5 <<'PY'; then
import sys, h5py, numpy as np
for f in sys.argv[1:]:
    with h5py.File(f, "r") as h:
        arrays = []
        h.visititems(lambda n, o: arrays.append(o[()]) if isinstance(o, h5py.Dataset) and o.dtype == np.float32 else None)
        assert arrays and all(np.isfinite(a).all() for a in arrays), f
PY
  ok "every saved checkpoint holds finite values only"
else bad "a saved checkpoint holds non-finite values"; fi
finish
