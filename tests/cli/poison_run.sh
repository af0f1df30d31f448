#!/usr/bin/env bash
# Whole runs with every engine and model buffer in the poisoned arena
# (ZEROPP_POISON_HOST_ACCESS=1, kernels/runtime/device_memory.hpp): any host access
# to one outside a kernel, a transfer or a communicator call faults, as it
# would on a GPU. ZeRO++ (qwZ + hpZ + qgZ with error feedback) on 2 ranks as
# 2 emulated nodes, validation and a sample every run: 2 steps with the
# end-of-run checkpoint (first_non_finite, the writer), a resume to step 4
# (the reader) whose steps equal an uninterrupted run's outside the arena,
# then --init-from and `zeropp generate` from that checkpoint. ~3 s.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
py=/usr/bin/python3
common=(--model.n_layer=1 --model.n_embd=32 --model.n_head=2 --model.max_seq_len=32 --train.batch_size=2
        --train.seq_len=32 --train.sample_tokens=4 --train.val_every=1 --train.val_batches=1 --log.every=1
        --optim.warmup_steps=2 --zero.ranks_per_node=1 --zero.quantized_weights=true
        --zero.hpz_partition_size=2 --zero.quantized_gradients=true --zero.gradient_error_feedback=true
        --zero.weight_block=32 --zero.gradient_block=32)
# UCX's cross-memory attach off (and Open MPI's): with it a peer reads our buffers
# from inside its own MPI calls; tcp off as well (tests/CMakeLists.txt, the poison entries).
poisoned() {  # poisoned LOG COMMAND...: COMMAND on 2 ranks in the arena
  local log=$1
  shift
  ZEROPP_POISON_HOST_ACCESS=1 UCX_TLS='^cma,tcp' OMPI_MCA_btl_vader_single_copy_mechanism=none \
    timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" "$@" < /dev/null > "$log" 2>&1
}
train() {  # train LOG OUT_DIR ARGS... (poisoned)
  local log=$1 out=$2
  shift 2
  poisoned "$log" train inputs/default.toml "${common[@]}" --train.out_dir="$out" "$@"
}
# steps OUT_DIR: step, loss and gradient norm of steps 3 and 4 in metrics.h5, full precision
steps() {
  "$py" -c '
import h5py, sys
s = h5py.File(sys.argv[1] + "/metrics.h5", "r", locking=False)["steps"][:]
for r in s[s["step"] >= 3]:
    print(int(r["step"]), repr(float(r["loss"])), repr(float(r["grad_norm"])))' "$1"
}
ckpt=$work/cut/checkpoints/step_00000002.h5

if train "$work/cut.log" "$work/cut" --train.steps=2 && [[ -s $ckpt ]] && grep -q '^sample:' "$work/cut.log"; then
  ok "2 steps with validation, a sample and the end-of-run checkpoint"
else bad "the first run: $(grep -a -m2 '^zeropp: ' "$work/cut.log")"; fi

timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${common[@]}" --train.out_dir="$work/ref" \
  --train.steps=4 < /dev/null > "$work/ref.log" 2>&1 || bad "the reference run: $(tail -3 "$work/ref.log")"
if train "$work/resume.log" "$work/cut" --train.steps=4 --resume auto &&
  grep -q "resume: step 2 from $ckpt" "$work/resume.log" && [[ -n $(steps "$work/ref") ]] &&
  [[ $(steps "$work/ref") == "$(steps "$work/cut")" ]]; then
  ok "the resume to step 4: steps 3 and 4 equal the uninterrupted run's (outside the arena)"
else bad "the resume: $(grep -a -m2 '^zeropp: ' "$work/resume.log"; diff <(steps "$work/ref") <(steps "$work/cut"))"; fi

if train "$work/init.log" "$work/init" --train.steps=1 --init-from="$ckpt" &&
  grep -q "init-from: model weights from $ckpt" "$work/init.log"; then
  ok "--init-from the checkpoint, one step"
else bad "init-from: $(grep -a -m2 '^zeropp: ' "$work/init.log")"; fi

if poisoned "$work/gen.log" generate "$ckpt" --prompt "And God" --max-new-tokens 4 --ids &&
  grep -Eq '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$' "$work/gen.log"; then
  ok "generate from the checkpoint"
else bad "generate: $(grep -a -m2 '^zeropp: ' "$work/gen.log")"; fi
finish
