#!/usr/bin/env bash
# Checks before step 0, end to end on 2 ranks: a run folder that holds a run
# is refused unless --resume or --overwrite; a failed --resume changes
# nothing; unwritable folders are found before the first step; a model that
# does not fit is refused with one line before anything is allocated; an
# error on one rank is printed by that rank and no rank hangs. ~25 s.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
unset ZEROPP_MEMORY_AVAILABLE

/usr/bin/python3 - "$work" <<'PY'
import struct, sys
toks = [(i * 7) % 251 for i in range(40000)]
hdr = [0] * 256
hdr[0], hdr[1], hdr[2] = 20240520, 1, len(toks)
open(sys.argv[1] + "/good.bin", "wb").write(struct.pack("<256i", *hdr) + struct.pack("<%dH" % len(toks), *toks))
PY
one_layer_deck "$work/deck.toml" "$work/good.bin" "" 4

# zeropp [ARGS...] on 2 ranks: status in $rc, stdout+stderr in $out.
zeropp() {
  out=$(timeout 120 "$MPIEXEC" -n 2 "$ZEROPP" train "$work/deck.toml" "$@" 2>&1)
  rc=$?
}
errors() { grep -c '^zeropp: error:' <<< "$out"; }
# expect_refusal NAME WANT...: exit 1, exactly one error line holding every WANT, no step taken.
expect_refusal() {
  local name=$1 w
  shift
  if [[ $rc -ne 1 || $(errors) -ne 1 ]] || grep -q '^step ' <<< "$out"; then
    bad "$name: want exit 1, one error line and no step; got exit $rc:"; echo "$out" | grep -v '^ \|^\[\|=\|^$' | head -5
    return 1
  fi
  for w in "$@"; do
    grep '^zeropp: error:' <<< "$out" | grep -qF -- "$w" || { bad "$name: error line lacks '$w': $out"; return 1; }
  done
  ok "$name: $(grep '^zeropp: error:' <<< "$out" | cut -c1-160)"
}
fingerprint() { (cd "$work/run" && find . -type f -print0 | sort -z | xargs -0 md5sum); }
rows() {  # optimizer steps recorded in OUT_DIR/metrics.h5
  /usr/bin/python3 -c 'import h5py, sys; s = h5py.File(sys.argv[1], "r", locking=False)["steps"][:]; print(int((s["step"] >= 0).sum()))' \
    "$1/metrics.h5"
}

# 1. A run folder that holds a run (metrics.h5, checkpoints) is refused, untouched.
zeropp --train.out_dir="$work/run"
[[ $rc -eq 0 && -s $work/run/checkpoints/step_00000004.h5 ]] || { bad "first run: exit $rc"; echo "$out" | tail -3; }
before=$(fingerprint)
zeropp --train.out_dir="$work/run" --train.steps=2
expect_refusal "folder holding a run" "a previous run is there" "metrics.h5" "--resume auto" "--overwrite"
[[ $(fingerprint) == "$before" ]] && ok "refused: run folder unchanged" || bad "refused run changed the run folder"

# 2. A failed --resume changes nothing: a missing file, and a checkpoint of
#    another model (refused after the allocation and the read).
zeropp --train.out_dir="$work/run" --train.steps=9 --resume "$work/none.h5"
expect_refusal "resume from a missing file" "$work/none.h5"
[[ $(fingerprint) == "$before" ]] && ok "failed resume (missing file): run folder unchanged" ||
  bad "failed resume (missing file) changed the run folder: $(grep -c 'steps = 9' "$work/run/config.toml") config.toml"
zeropp --train.out_dir="$work/run" --train.steps=9 --model.n_embd=32 \
  --resume "$work/run/checkpoints/step_00000004.h5"
expect_refusal "resume of another model" "refusing to resume a different model"
[[ $(fingerprint) == "$before" ]] && ok "failed resume (other model): run folder unchanged" ||
  bad "failed resume (other model) changed the run folder"
zeropp --train.out_dir="$work/run" --train.steps=6 --resume auto
[[ $rc -eq 0 ]] && grep -q 'resume: step 4' <<< "$out" && [[ $(rows "$work/run") -eq 6 ]] &&
  ok "--resume auto continues the run in the folder (steps 4..5 appended)" || bad "--resume auto: exit $rc"

# 3. --overwrite starts over: metrics.h5 replaced, the old run's checkpoints gone.
zeropp --train.out_dir="$work/run" --train.steps=2 --overwrite
ckpts=$(ls "$work/run/checkpoints" | tr '\n' ' ')
if [[ $rc -eq 0 && $ckpts == "latest step_00000002.h5 " && $(rows "$work/run") -eq 2 ]]; then
  ok "--overwrite: a new run of 2 steps, checkpoints now: $ckpts"
else bad "--overwrite: exit $rc, checkpoints: $ckpts"; echo "$out" | grep error; fi
zeropp --train.out_dir="$work/other" --checkpoint.dir="$work/run/checkpoints"
expect_refusal "checkpoint.dir holding another run's checkpoints" \
  "checkpoint.dir '$work/run/checkpoints': a previous run is there ($work/run/checkpoints/step_00000002.h5)"
out=$(timeout 60 "$MPIEXEC" -n 2 "$ZEROPP" train "$work/deck.toml" --overwrite --resume auto 2>&1)
[[ $? -eq 2 ]] && ok "--overwrite with --resume: usage error" || bad "--overwrite with --resume accepted"

# 4. Folders that cannot be written are found before step 0.
touch "$work/file"
zeropp --train.out_dir="$work/file/run"
expect_refusal "train.out_dir under a regular file" "train.out_dir '$work/file/run'" "is not a folder"
# A read-only folder: permission bits as a user; as root (who ignores them) a
# read-only tmpfs in a private mount namespace.
mkdir -p "$work/ro"
readonly_run() {  # readonly_run ARGS...: zeropp with $work/ro read-only
  if [[ $(id -u) -ne 0 ]]; then
    chmod 555 "$work/ro"
    zeropp "$@"
    chmod 755 "$work/ro"
  else
    out=$(unshare --mount bash -c 'mount -t tmpfs -o ro,size=1m none "$0" && exec "$@"' "$work/ro" \
      timeout 120 "$MPIEXEC" -n 2 "$ZEROPP" train "$work/deck.toml" "$@" 2>&1)
    rc=$?
  fi
}
if [[ $(id -u) -eq 0 ]] && ! unshare --mount bash -c 'mount -t tmpfs -o ro none "$0"' "$work/ro" 2> /dev/null; then
  echo "SKIPPED read-only folders: root without the right to mount (unshare --mount) here"
else
  readonly_run --train.out_dir="$work/ok" --checkpoint.dir="$work/ro/ckpt"
  expect_refusal "read-only checkpoint.dir" "checkpoint.dir '$work/ro/ckpt'" "cannot write in $work/ro"
  [[ ! -e $work/ok ]] && ok "read-only checkpoint.dir: train.out_dir not created" || bad "train.out_dir created"
  readonly_run --train.out_dir="$work/ro/run"
  expect_refusal "read-only train.out_dir" "train.out_dir '$work/ro/run'" "cannot write in $work/ro"
fi

# 5. Memory: a model that cannot fit stops with one line, before allocating.
start=$SECONDS
zeropp --train.out_dir="$work/huge" --model.n_layer=200 --model.n_embd=8192 --model.n_head=64
expect_refusal "model too large for the node" "memory: each rank needs" "TiB" "(MemAvailable)" "for 2 ranks" \
  "train.batch_size" "more nodes"
[[ ! -e $work/huge && $((SECONDS - start)) -lt 60 ]] && ok "too large: refused in $((SECONDS - start)) s, nothing written" ||
  bad "too large: took $((SECONDS - start)) s or wrote $work/huge"
ZEROPP_MEMORY_AVAILABLE=100K zeropp --train.out_dir="$work/small"
expect_refusal "node offering 100 KiB" "but this node offers 100.00 KiB (ZEROPP_MEMORY_AVAILABLE) for 2 ranks, 50.00 KiB each"
ZEROPP_MEMORY_AVAILABLE=lots zeropp --train.out_dir="$work/small"
expect_refusal "malformed ZEROPP_MEMORY_AVAILABLE" "ZEROPP_MEMORY_AVAILABLE = 'lots'"
ZEROPP_MEMORY_AVAILABLE=1G zeropp --train.out_dir="$work/fits" --train.steps=1
if [[ $rc -eq 0 ]] && grep -qE '^  memory per rank +: .*activations [0-9.]+ KiB\); node offers 1.00 GiB \(ZEROPP_MEMORY_AVAILABLE\) for 2 ranks' <<< "$out"; then
  ok "the memory line: $(grep 'memory per rank' <<< "$out" | sed 's/^ *//' | cut -c1-150)..."
else bad "memory line missing or run failed (exit $rc): $(grep 'memory per rank' <<< "$out")"; fi

# A real limit: a memory cgroup of 300 MiB around the job (v1, or v2 where the
# test may delegate), for a run that needs ~560 MiB per rank.
cg_rel=$(grep -m1 -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup | cut -d: -f3)
if [[ -n $cg_rel ]]; then cg=/sys/fs/cgroup/memory${cg_rel%/}/zeropp_preflight_$$ limit=memory.limit_in_bytes
else cg=/sys/fs/cgroup$(grep -m1 '^0::' /proc/self/cgroup | cut -d: -f3 | sed 's:/$::')/zeropp_preflight_$$ limit=memory.max; fi
if mkdir "$cg" 2> /dev/null && echo $((300 << 20)) > "$cg/$limit" 2> /dev/null &&
  bash -c 'echo $$ > "$0/cgroup.procs"' "$cg" 2> /dev/null; then  # may a process join it?
  out=$(bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" timeout 120 "$MPIEXEC" -n 2 "$ZEROPP" train \
    "$work/deck.toml" --train.out_dir="$work/cg" --train.batch_size=64 --train.seq_len=256 --model.max_seq_len=256 \
    --model.n_embd=64 --model.n_head=4 --model.n_layer=2 2>&1)
  rc=$?
  expect_refusal "a memory cgroup of 300 MiB" "(cgroup limit) for 2 ranks" "activations for B=64 T=256"
  rmdir "$cg"
else
  rmdir "$cg" 2> /dev/null
  echo "SKIPPED memory cgroup: cannot create a memory cgroup with a limit here"
fi

# 6. An error on one rank is printed by that rank; every rank stops.
# (a) one node offers less (an agreed error: rank 1 reports it).
out=$(timeout 120 "$MPIEXEC" -n 1 env ZEROPP_MEMORY_AVAILABLE=1G "$ZEROPP" train "$work/deck.toml" --train.out_dir="$work/r1" : \
  -n 1 env ZEROPP_MEMORY_AVAILABLE=100K "$ZEROPP" train "$work/deck.toml" --train.out_dir="$work/r1" 2>&1)
rc=$?
expect_refusal "memory short on rank 1 only" "zeropp: error: rank 1: memory:"
# (b) an allocation that fails on rank 1 only (ulimit -v; the preflight is told
#     the node has plenty): rank 1 prints why and the job ends, no hang.
big=(--train.out_dir="$work/r2" --train.batch_size=128 --train.seq_len=256 --model.max_seq_len=256 --model.n_embd=64
     --model.n_head=4 --model.n_layer=2 --train.steps=1)
# A script: mpiexec mangles bash -c '...'. Under AddressSanitizer (scripts/sanitize)
# ulimit -v cannot work (ASan reserves terabytes of shadow address space at start):
# its allocator refuses the large buffers instead, as a failing malloc would (its
# warning about that to stderr, not among scripts/sanitize's reports).
if grep -q libasan <<< "$(ldd "$ZEROPP" 2> /dev/null)"; then
  printf 'export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=64:log_path=stderr"\nexec "$@"\n' \
    > "$work/limited.sh"
else
  # Plus what cuBLAS maps (CUDA builds: over 500 MiB of code, loaded at start).
  cublas_kb=$(ldd "$ZEROPP" | awk '$1 ~ /^libcublas/ {print $3}' | xargs -r du -Lk | awk '{s += $1} END {print s + 0}')
  printf 'ulimit -v %d && exec "$@"\n' $((700000 + cublas_kb)) > "$work/limited.sh"
fi
start=$SECONDS
out=$(ZEROPP_MEMORY_AVAILABLE=1T timeout 120 "$MPIEXEC" -n 1 "$ZEROPP" train "$work/deck.toml" "${big[@]}" : \
  -n 1 bash "$work/limited.sh" "$ZEROPP" train "$work/deck.toml" "${big[@]}" 2>&1)
rc=$?
if [[ $rc -ne 0 && $rc -ne 124 ]] && [[ $(errors) -eq 1 ]] && grep -q '^zeropp: error: rank 1: .*allocate' <<< "$out"; then
  ok "allocation failing on rank 1 only: exit $rc in $((SECONDS - start)) s: $(grep '^zeropp: error:' <<< "$out" | cut -c1-120)"
else bad "allocation failing on rank 1: exit $rc, want one 'zeropp: error: rank 1:' line:"; echo "$out" | grep -v '^ \|^\[\|=\|^$' | head -5; fi

finish
