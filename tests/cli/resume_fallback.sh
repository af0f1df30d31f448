#!/usr/bin/env bash
# `--resume auto` whose newest checkpoint is corrupt (one flipped byte in a
# tensor) falls back to the newest one that verifies, says which it skipped
# and why, and continues from there; with none intact it refuses (exit 1).
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
out="$work/run"
ck="$out/checkpoints"
flip() {  # flip FILE: one bit in the middle of /model/wte.weight
  /usr/bin/python3 - "$1" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as h:
    d = h["model/wte.weight"]
    off = d.id.get_offset() + d.id.get_storage_size() // 2
with open(sys.argv[1], "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x10]))
PY
}
train_ckpt 4 || { bad "first run"; cat "$work/log"; }
flip "$ck/step_00000004.h5"
"$ZEROPP" ckpt verify "$ck/step_00000004.h5" > /dev/null 2>&1 && bad "the flipped byte went unnoticed"
train_ckpt 6 --resume auto
rc=$?
if [[ $rc -eq 0 ]] && grep -q '^resume: skipped step_00000004.h5 (/model/wte.weight: checksum mismatch' "$work/log" &&
  grep -q "^resume: step 2 from $ck/step_00000002.h5" "$work/log" && grep -q '^step 3/6' "$work/log"; then
  ok "corrupt newest skipped: $(grep 'resume: skipped' "$work/log" | cut -c1-80)...; resumed at step 2"
else
  bad "fallback: rc=$rc"
  grep -E 'resume|error' "$work/log"
fi
# Now step_4 (rewritten by the resumed run) and step_6 are good: damage all of them.
for f in "$ck"/step_*.h5; do flip "$f"; done
train_ckpt 8 --resume auto
rc=$?
if [[ $rc -eq 1 ]] && grep -q "^zeropp: error: resume: no checkpoint in $ck verifies: step_00000006.h5 (" "$work/log"; then
  ok "none verifies: exit 1, one line naming each"
else
  bad "none verifies: rc=$rc"
  tail -3 "$work/log"
fi
finish
