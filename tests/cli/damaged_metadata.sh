#!/usr/bin/env bash
# A checkpoint whose HDF5 metadata is damaged (8 bytes overwritten inside the
# root group's link table, where HDF5 itself crashes while iterating the links)
# is one line from `zeropp ckpt verify` and `ckpt info`, exit 1, and
# `--resume auto` skips it for the older good checkpoint. The signal that ends the
# scanning child depends on the build: a segmentation fault, a bus error under ASan.
# A scan past its time limit (HDF5 looping, a stalled file system; here a limit no
# scan can meet) is killed: one line, exit 1, and `--resume auto` skips the file.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
out="$work/run"
ck="$out/checkpoints"
train_ckpt 4 || { bad "first run"; cat "$work/log"; }
newest="$ck/step_00000004.h5"
# Offset 2032: inside the root group's dense link storage for this deck's checkpoints.
printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$newest" bs=1 seek=2032 conv=notrunc status=none
for cmd in verify info; do
  "$ZEROPP" ckpt "$cmd" "$newest" > "$work/out" 2> "$work/err"
  rc=$?
  if [[ $rc -eq 1 && $(wc -l < "$work/err") -eq 1 ]] &&
    grep -Eq "^zeropp: error: checkpoint $newest: reading it crashed HDF5 \((Segmentation fault|Bus error|Aborted)\): the file is damaged$" \
      "$work/err"; then
    ok "ckpt $cmd: exit 1, one line: $(cut -c1-100 "$work/err")"
  else
    bad "ckpt $cmd: rc=$rc"
    cat "$work/err"
  fi
done
train_ckpt 6 --resume auto
rc=$?
if [[ $rc -eq 0 ]] && grep -q '^resume: skipped step_00000004.h5 (checkpoint .*: reading it crashed HDF5' "$work/log" &&
  grep -q "^resume: step 2 from $ck/step_00000002.h5" "$work/log" && grep -q '^step 3/6' "$work/log"; then
  ok "resume auto: the damaged newest skipped, resumed at step 2"
else
  bad "resume auto: rc=$rc"
  grep -E 'resume|error|fault' "$work/log"
fi
# The resumed run saved step 4 again, through a temporary file and a rename.
[[ $("$ZEROPP" ckpt verify "$ck/step_00000004.h5" 2>&1) == *"match their checksums"* ]] &&
  ok "step 4 saved again by the resumed run verifies" || bad "step 4 after the resumed run"
ZEROPP_CKPT_SCAN_TIMEOUT_S=0.001 "$ZEROPP" ckpt verify "$ck/step_00000004.h5" > "$work/out" 2> "$work/err"
rc=$?
if [[ $rc -eq 1 && $(wc -l < "$work/err") -eq 1 ]] &&
  grep -q "^zeropp: error: checkpoint $ck/step_00000004.h5: scanning it took longer than 0.001 s (" "$work/err"; then
  ok "scan past its limit: exit 1, one line: $(cut -c1-90 "$work/err")..."
else
  bad "scan past its limit: rc=$rc"
  cat "$work/err"
fi
ZEROPP_CKPT_SCAN_TIMEOUT_S=0.001 train_ckpt 8 --resume auto
rc=$?
if [[ $rc -eq 1 ]] && grep -q "^zeropp: error: resume: no checkpoint in $ck verifies: .*scanning it took longer" "$work/log"; then
  ok "resume auto with every scan past its limit: exit 1, each named"
else
  bad "resume auto past the scan limit: rc=$rc"
  tail -3 "$work/log"
fi
finish
