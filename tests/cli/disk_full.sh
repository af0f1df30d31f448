#!/usr/bin/env bash
# A checkpoint that does not fit on the disk: one line naming the file and
# "no space left on device", no temporary file left, the previous checkpoint
# and `latest` untouched, exit status 1 on every rank. The disk is a 4 MiB
# tmpfs (two checkpoints of this model fit, the third does not); mounting it
# needs root, else the test is skipped (exit 77).
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
disk="$work/disk"
mkdir -p "$disk"
trap 'umount "$disk" 2> /dev/null; rm -rf "$work"' EXIT
needs_corpus
if [[ $(id -u) -ne 0 ]] || ! mount -t tmpfs -o size=4m tmpfs "$disk" 2> /dev/null; then
  echo "SKIPPED: mounting a small tmpfs needs root"
  exit 77
fi
ck="$disk/ck"
# Each rank reports its own exit status.
timeout 300 "$MPIEXEC" -n 2 bash -c '"$0" "$@"; rc=$?; echo "rank exit status $rc" >&2; exit $rc' \
  "$ZEROPP" train inputs/default.toml "${tiny[@]}" --log.every=1 --train.steps=6 --checkpoint.every=1 \
  --train.out_dir="$work/run" --checkpoint.dir="$ck" > "$work/out" 2> "$work/err"
rc=$?
cat "$work/err"
errors=$(grep -c '^zeropp: error' "$work/err")
if [[ $rc -eq 1 && $errors -eq 1 ]] &&
  grep -q "^zeropp: error: checkpoint $ck/step_00000003.h5: no space left on device (needs .* MiB free in $ck)$" "$work/err"; then
  ok "one line naming the file: $(grep '^zeropp: error' "$work/err")"
else bad "rc=$rc, $errors error lines"; fi
if [[ $(tail -n 1 "$work/run/train.log" 2> /dev/null) == "$(grep '^zeropp: error' "$work/err")" ]]; then
  ok "train.log ends with the same line"
else bad "train.log does not end with the error line: $(tail -n 1 "$work/run/train.log" 2> /dev/null)"; fi
if [[ $(grep -c '^rank exit status 1$' "$work/err") -eq 2 ]]; then ok "exit status 1 on both ranks"
else bad "rank exit statuses: $(grep '^rank exit' "$work/err" | tr '\n' ' ')"; fi
if [[ $(ls -A "$ck") == "$(printf 'latest\nstep_00000001.h5\nstep_00000002.h5')" && $(cat "$ck/latest") == step_00000002.h5 ]] &&
  "$ZEROPP" ckpt verify "$ck/step_00000002.h5" > /dev/null; then
  ok "no temporary file; latest still names step 2, which verifies"
else bad "checkpoint folder after the failure: $(ls -A "$ck" | tr '\n' ' '), latest=$(cat "$ck/latest")"; fi
if grep -q '^step 3/6' "$work/out" && ! grep -q '^step 4/6' "$work/out"; then ok "the run stopped at the failed save"
else bad "steps after the failed save"; fi
finish
