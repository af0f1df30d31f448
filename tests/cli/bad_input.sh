#!/usr/bin/env bash
# Bad input end to end: every case must exit non-zero on 2 ranks within the
# time limit (no rank left hanging), print exactly one "zeropp: error:" line
# naming the file, key or value, and leave an existing run folder untouched.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"

# A valid deck on a small synthetic corpus, and a run folder with a sentinel.
/usr/bin/python3 - "$work" <<'PY'
import struct, sys, os
d = sys.argv[1]
def write(name, tokens, magic=20240520, version=1, count=None, cut=0):
    hdr = [0] * 256
    hdr[0], hdr[1], hdr[2] = magic, version, len(tokens) if count is None else count
    data = struct.pack("<256i", *hdr) + struct.pack("<%dH" % len(tokens), *tokens)
    open(os.path.join(d, name), "wb").write(data[:len(data) - cut])
toks = [(i * 7) % 251 for i in range(4000)]
write("good.bin", toks)
write("magic.bin", toks, magic=12345)
write("version.bin", toks, version=2)
write("truncated.bin", toks, cut=100)
write("short.bin", toks[:50])
write("vocab.bin", toks[:2000] + [300] + toks[2000:])
PY
one_layer_deck "$work/deck.toml" "$work/good.bin" "$work/good.bin" 2 "out_dir = \"$work/run\""
mkdir -p "$work/run"
echo "sentinel" > "$work/run/config.toml"
chmod 000 "$work/good.bin" 2>/dev/null; cp "$work/deck.toml" "$work/unreadable.toml"; chmod 000 "$work/unreadable.toml"
chmod 644 "$work/good.bin"

# expect_error NAME EXPECTED-SUBSTRING ARGS...: runs $binary on 2 ranks, prefixed
# by the command in as_user (empty: as ourselves).
as_user=()
binary=$ZEROPP
expect_error() {
  local name=$1 want=$2
  shift 2
  local out err rc
  out=$(timeout 120 "${as_user[@]}" "$MPIEXEC" -n 2 "$binary" "$@" 2> "$work/stderr")
  rc=$?
  err=$(cat "$work/stderr")
  local lines
  lines=$(grep -c '^zeropp: error:' <<< "$err")
  if [[ $rc -eq 0 || $rc -eq 124 ]]; then
    echo "FAIL $name: exit status $rc (want non-zero, not a timeout)"; fails=$((fails + 1)); return
  fi
  if [[ $lines -ne 1 ]] || ! grep -qF -- "$want" <<< "$err"; then
    echo "FAIL $name: want one error line containing '$want', got:"; echo "$err" | head -5; fails=$((fails + 1)); return
  fi
  if [[ $(cat "$work/run/config.toml") != sentinel ]]; then
    echo "FAIL $name: the existing run folder was modified"; fails=$((fails + 1)); return
  fi
  echo "ok   $name: $(grep '^zeropp: error:' <<< "$err")"
  passes=$((passes + 1))
}

deck="$work/deck.toml"
expect_error "missing deck" "$work/nope.toml" train "$work/nope.toml"
# Root reads any file: as root (CI), that case runs as nobody, who may enter $work but
# not always the build tree (a checkout under /root): the binary and the preloaded
# libraries are copied into $work, and the ranks start there.
if [[ $(id -u) -eq 0 ]]; then
  chmod 755 "$work"
  mkdir "$work/as_nobody"
  cp "$ZEROPP" "$work/as_nobody/"
  binary="$work/as_nobody/$(basename "$ZEROPP")"
  preload=()
  IFS=: read -ra libs <<< "${LD_PRELOAD:-}"
  for lib in "${libs[@]}"; do
    cp "$lib" "$work/as_nobody/" && preload+=("$work/as_nobody/$(basename "$lib")")
  done
  as_user=(env -C "$work" LD_PRELOAD="$(IFS=:; echo "${preload[*]}")"
           setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
expect_error "unreadable deck" "$work/unreadable.toml" train "$work/unreadable.toml"
as_user=()
binary=$ZEROPP
printf '[model]\nn_layers = 2\n' > "$work/unknown.toml"
expect_error "unknown key" "unknown key 'model.n_layers'" train "$work/unknown.toml"
printf '[train]\nsteps = "many"\n' > "$work/type.toml"
expect_error "wrong type" "'train.steps' must be an integer" train "$work/type.toml"
expect_error "unknown override" "unknown option --model.n_heads" train "$deck" --model.n_heads=2
printf '[train]\nbatchsize = 2\n' > "$work/typo.toml"
expect_error "misspelt key" "typo.toml:2: unknown key 'train.batchsize' (did you mean 'train.batch_size'?)" \
  train "$work/typo.toml"
expect_error "misspelt override" "unknown option --optim.weight_dekay (did you mean --optim.weight_decay?)" \
  train "$deck" --optim.weight_dekay=0
expect_error "override type" "--train.steps: expected an integer, got 'x'" train "$deck" --train.steps=x
expect_error "heads not dividing C" "model.n_head = 3" train "$deck" --model.n_head=3
expect_error "sequence longer than positions" "train.seq_len = 64" train "$deck" --train.seq_len=64
expect_error "zero batch" "train.batch_size = 0" train "$deck" --train.batch_size=0
expect_error "negative learning rate" "optim.lr = -0.1" train "$deck" --optim.lr=-0.1
expect_error "data missing" "$work/none.bin" train "$deck" --data.train="$work/none.bin"
expect_error "wrong magic" "$work/magic.bin" train "$deck" --data.train="$work/magic.bin"
expect_error "wrong version" "$work/version.bin" train "$deck" --data.train="$work/version.bin"
expect_error "truncated data" "$work/truncated.bin" train "$deck" --data.train="$work/truncated.bin"
expect_error "too short for a window" "$work/short.bin" train "$deck" --data.train="$work/short.bin"
expect_error "token id >= V" "300" train "$deck" --data.train="$work/vocab.bin"
expect_error "bad validation file" "$work/magic.bin" train "$deck" --data.val="$work/magic.bin"
expect_error "ranks_per_node not dividing P" "zero.ranks_per_node" train "$deck" --zero.ranks_per_node=3
expect_error "unknown comm backend" 'comm.backend = "gloo"' train "$deck" --comm.backend=gloo
# nccl cannot run here: no CUDA build, no device, or (today, everywhere) host-resident engine buffers.
expect_error "nccl backend unavailable" 'comm.backend = "nccl": ' train "$deck" --comm.backend=nccl
# Refused in every build and on every machine: no CUDA build, no device, or staging asked for nccl.
expect_error "device staging refused" 'comm.device_staging = true: ' train "$deck" --comm.device_staging=true \
  --comm.backend=nccl
# train.device = "cuda": the rules between keys and the host-only commands everywhere; the
# refusal for want of a GPU only where none is (tests/cuda and scripts/gpu-check run it on one).
expect_error "train.device cuda over mpi without staging" 'comm.device_staging = false: train.device = "cuda"' \
  train "$deck" --train.device=cuda --comm.backend=mpi
expect_error "train.tf32 on the host" 'train.tf32 = true: applies to cuBLAS only' train "$deck" --train.tf32=true
if nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIPPED: train.device = cuda without a GPU (this machine has one)"
else
  expect_error "train.device cuda without a GPU" 'train.device = "cuda": ' train "$deck" --train.device=cuda
  # bench step runs on the GPU (where one is): refused here as train is, by the run's set-up
  expect_error "bench step on cuda without a GPU" 'train.device = "cuda": ' bench step "$deck" \
    --train.device=cuda
fi
expect_error "prepare-data missing input" "$work/none.txt" prepare-data --input "$work/none.txt" --out-dir "$work/prep"

# Usage errors are CLI11's: a non-zero status and a message, no hang.
if timeout 60 "$MPIEXEC" -n 2 "$ZEROPP" train > /dev/null 2>&1; then
  echo "FAIL usage: 'zeropp train' without a deck succeeded"; fails=$((fails + 1))
else
  passes=$((passes + 1))
fi
finish
