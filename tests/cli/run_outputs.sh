#!/usr/bin/env bash
# What a run tells and leaves behind: `zeropp --version` with the
# git revision and build options, recorded in checkpoints too; step lines with
# elapsed time and ETA; train.log in the run folder (appended on --resume);
# validation losses in metrics.h5 under the log's step numbers; `ckpt info` and
# `ckpt verify` on a run folder, a checkpoint folder or a `latest` file; a
# failing verify naming the damaged dataset; `bench step`'s kernels row, GEMM
# ratios and recompute rows. A tiny model, 2 ranks: ~3 s.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
cd "$ZEROPP_SOURCE_DIR" || exit 1
[[ -s data/kjv/train.bin ]] || { echo "data/kjv/train.bin missing: run scripts/prepare-corpus"; exit 1; }
py=/usr/bin/python3

# 1. --version: a revision of this checkout (an ancestor of HEAD: the binary may predate
# the last commit), "unknown" outside a git checkout; and the build options.
"$ZEROPP" --version > "$work/version" 2>&1
cat "$work/version"
rev=$(sed -nE 's/^  git revision : ([0-9a-f]+|unknown)(-dirty)?$/\1/p' "$work/version")
if git -C "$ZEROPP_SOURCE_DIR" rev-parse --show-toplevel > /dev/null 2>&1; then
  git -C "$ZEROPP_SOURCE_DIR" merge-base --is-ancestor "${rev:-none}" HEAD 2> /dev/null && rev_ok=1 || rev_ok=0
else
  [[ $rev == unknown ]] && rev_ok=1 || rev_ok=0
fi
if ((rev_ok)) && grep -q '^  compiler     : ' "$work/version" && grep -Eq '^  BLAS         : .+' "$work/version" &&
  grep -Eq '^  CUDA         : (on|off)$' "$work/version"; then
  ok "--version: git revision $rev, compiler, BLAS, CUDA"
else bad "--version: no revision of this checkout ('$rev') or a build option missing"; fi

# 2. A short run: 6 steps, validation every 2, checkpoints every 3.
run=(--model.n_layer=2 --model.n_embd=32 --model.n_head=2 --train.batch_size=2 --train.seq_len=32
     --model.max_seq_len=32 --train.sample_tokens=0 --log.every=1 --train.val_every=2 --train.val_batches=2
     --checkpoint.every=3 --train.out_dir="$work/run")
timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${run[@]}" --train.steps=6 > "$work/out1" 2>&1 ||
  { bad "training run failed"; cat "$work/out1"; }
if grep '^step ' "$work/out1" | grep -Eq '\| elapsed [0-9]+:[0-9]{2}:[0-9]{2} \| ETA [0-9]+:[0-9]{2}:[0-9]{2}$' &&
  grep '^step 6/6 ' "$work/out1" | grep -q 'ETA 0:00:00$'; then
  ok "step lines end with elapsed time and ETA (ETA 0:00:00 at the last step)"
else bad "step lines lack elapsed/ETA"; grep '^step ' "$work/out1"; fi
if grep -q '^  BLAS kernels' "$work/out1"; then ok "start-up table names the BLAS kernels ($(grep '^  BLAS kernels' "$work/out1" | sed 's/.*: //'))"
else bad "no BLAS kernels row"; fi
if [[ -f $work/run/train.log ]] && diff <(grep -v '^zeropp: warning' "$work/out1") "$work/run/train.log" > "$work/diff1"; then
  ok "train.log holds rank 0's output"
else bad "train.log differs from rank 0's output"; head "$work/diff1"; fi

# metrics.h5 against the log: /steps and /validation use the log's step numbers.
tables() {  # tables RUN_DIR: "steps 1 2 ..." and "val STEP:LOSS ..." (4 decimals, as printed)
  "$py" - "$1/metrics.h5" <<'PY'
import h5py, sys
f = h5py.File(sys.argv[1], "r", locking=False)
s, v = f["steps"][:], f["validation"][:]
print("steps", *[int(x) for x in s["step"][s["step"] >= 0]])
print("val", *["%d:%.4f" % (int(r["step"]), float(r["loss"])) for r in v[v["step"] >= 0]])
PY
}
from_log() {  # from_log LOG...: the same two lines from what the log printed
  echo "steps $(grep -h '^step ' "$@" | sed -E 's|^step ([0-9]+)/.*|\1|' | xargs)"
  echo "val $(grep -hE '^val (step|final) ' "$@" | sed -E 's/^val (step |final \| step )([0-9]+) \| loss ([0-9.]+)$/\2:\3/' | xargs)"
}
tables "$work/run" > "$work/tables1" 2>&1
from_log "$work/out1" > "$work/log1"
if diff "$work/log1" "$work/tables1" && grep -qx 'steps 1 2 3 4 5 6' "$work/tables1" && grep -q '^val 2:.* 4:.* 6:' "$work/tables1"; then
  ok "metrics.h5 /steps and /validation match the log's step numbers and losses ($(tail -1 "$work/tables1"))"
else bad "metrics.h5 and the log disagree"; cat "$work/log1" "$work/tables1"; fi

# 3. ckpt info on a run folder, a checkpoint folder and a `latest` file; the
# revision recorded at save.
want="$work/run/checkpoints/step_00000006.h5"
for arg in "$work/run" "$work/run/checkpoints" "$work/run/checkpoints/latest"; do
  if "$ZEROPP" ckpt info "$arg" > "$work/info" 2>&1 && grep -q "^checkpoint $want\$" "$work/info"; then
    ok "ckpt info ${arg#"$work"/} -> step_00000006.h5"
  else bad "ckpt info ${arg#"$work"/}"; head -3 "$work/info"; fi
done
if [[ -n $rev ]] && grep -q "saved by       : zeropp .*(git $rev" "$work/info"; then ok "the checkpoint records the git revision"
else bad "the checkpoint lacks the git revision"; grep 'saved by' "$work/info"; fi
if "$ZEROPP" ckpt verify "$work/run" > "$work/verify" 2>&1 && grep -q "^$want: all" "$work/verify"; then
  ok "ckpt verify on a run folder"
else bad "ckpt verify on a run folder"; cat "$work/verify"; fi
"$ZEROPP" ckpt info "$work/nothing" > "$work/none" 2>&1
rc=$?
if [[ $rc -ne 0 ]] && [[ $(wc -l < "$work/none") -eq 1 ]] && grep -q "$work/nothing" "$work/none"; then
  ok "ckpt info on a missing path: one line naming it, exit $rc"
else bad "ckpt info on a missing path"; cat "$work/none"; fi

# 4. A damaged dataset: verify fails and names it.
cp "$want" "$work/damaged.h5"
"$py" - "$work/damaged.h5" <<'PY'
import h5py, sys
with h5py.File(sys.argv[1], "r+") as f:
    d = f["model/wte.weight"]
    x = d[0, 0]
    d[0, 0] = x + 1.0  # the stored checksum stays: the data no longer matches it
PY
"$ZEROPP" ckpt verify "$work/damaged.h5" > "$work/verify_bad" 2>&1
rc=$?
if [[ $rc -ne 0 ]] && grep -q 'fail their checksum: /model/wte.weight$' "$work/verify_bad"; then
  ok "ckpt verify names the damaged dataset (exit $rc): $(cat "$work/verify_bad")"
else bad "ckpt verify did not name the damaged dataset"; cat "$work/verify_bad"; fi

# 5. --resume appends to train.log and metrics.h5 continues with the same numbering.
timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${run[@]}" --train.steps=8 --resume auto \
  > "$work/out2" 2>&1 || { bad "resumed run failed"; cat "$work/out2"; }
if [[ $(grep -c '^zeropp training' "$work/run/train.log") -eq 2 ]] && grep -q '^step 8/8 ' "$work/run/train.log"; then
  ok "--resume appends to train.log"
else bad "train.log not appended on --resume"; fi
tables "$work/run" > "$work/tables2" 2>&1
from_log "$work/out1" "$work/out2" > "$work/log2"
if diff "$work/log2" "$work/tables2" && grep -qx 'steps 1 2 3 4 5 6 7 8' "$work/tables2"; then
  ok "after the resume metrics.h5 still matches the log ($(tail -1 "$work/tables2"))"
else bad "after the resume metrics.h5 and the log disagree"; cat "$work/log2" "$work/tables2"; fi

# 6. Generic BLAS kernels on a CPU with AVX2 are warned about (forced here; OPENBLAS_CORETYPE
# names a kernel set, Prescott runs everywhere).
OPENBLAS_CORETYPE=Prescott "$ZEROPP" train inputs/default.toml "${run[@]}" --train.steps=1 --train.val_every=0 \
  --train.out_dir="$work/generic" > "$work/out3" 2>&1 || { bad "run with Prescott kernels failed"; cat "$work/out3"; }
if grep -qw avx2 /proc/cpuinfo; then
  if grep -q '^warning: BLAS runs its generic Prescott kernels .* set OPENBLAS_CORETYPE=' "$work/out3"; then
    ok "generic kernels on an AVX2 CPU: $(grep '^warning: BLAS' "$work/out3")"
  else bad "no warning about generic kernels on an AVX2 CPU"; fi
elif grep -q '^warning: BLAS' "$work/out3"; then bad "a warning although the CPU has no AVX2"
else ok "no AVX2 on this CPU: no warning about Prescott kernels"; fi

# ... and `bench step` shows the kernels and the same warning.
OPENBLAS_CORETYPE=Prescott "$ZEROPP" bench step inputs/default.toml "${run[@]}" --steps 1 > "$work/bench" 2>&1 ||
  { bad "bench step failed"; cat "$work/bench"; }
if grep -Eq '^  BLAS kernels +: Prescott$' "$work/bench" &&
  { ! grep -qw avx2 /proc/cpuinfo || grep -q '^warning: BLAS runs its generic Prescott' "$work/bench"; }; then
  ok "bench step names the kernels (Prescott) and warns on an AVX2 CPU"
else bad "bench step lacks the kernels row or the warning"; grep -E 'BLAS|warning' "$work/bench"; fi
# Its GEMM ratio paired per step (median and min-max) on the summary lines, and the
# older statistic (the GEMM mix once after the steps) in the table.
if grep -Eq '^bench step \| .* \| fp32 \| .*\| GEMM [0-9.]+ GFLOP/s \| ratio [0-9.]+ \([0-9.]+-[0-9.]+\) \| ' "$work/bench" &&
  grep -Eq '^bench step \| .* \| bf16 \| .*\| ratio [0-9.]+ \([0-9.]+-[0-9.]+\) \| ' "$work/bench" &&
  grep -Eq '^  fp32 GEMM ratio, paired +: [0-9.]+ \([0-9.]+-[0-9.]+\): ' "$work/bench" &&
  grep -Eq '^  fp32 GEMM ratio, once after +: [0-9.]+: median step rate / GEMM [0-9.]+ GFLOP/s timed once after all steps' \
    "$work/bench"; then
  ok "bench step: paired GEMM ratio with its spread, and the ratio against the GEMMs timed once after"
else bad "bench step lacks the paired ratio or the once-after row"; grep -E 'ratio' "$work/bench"; fi
# Each model.recompute policy: its activations and fp32 step time, side by side.
if grep -Eq '^bench step \| .* \| fp32 \| recompute none \| activations [0-9.]+ [KMG]iB \| [0-9.]+ ms/step$' "$work/bench" &&
  grep -Eq '^bench step \| .* \| fp32 \| recompute layer \| activations [0-9.]+ [KMG]iB \| [0-9.]+ ms/step$' "$work/bench" &&
  grep -Eq '^  fp32 recompute layer +: activations [0-9.]+ [KMG]iB, [0-9.]+ ms/step \([0-9.]+ x none\)$' "$work/bench"; then
  ok "bench step: activations and step time of recompute none and layer"
else bad "bench step lacks the recompute rows"; grep -E 'recompute' "$work/bench"; fi

finish
