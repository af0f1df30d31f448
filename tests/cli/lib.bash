# Shared by the end-to-end scripts in this folder (sourced; ctest registers
# only *.sh): strict mode, a work folder removed at exit, the ok/bad counters
# and the closing line ctest's log shows, the default-corpus check, a log's training curve and the
# arguments of a model small enough for seconds-long multi-rank runs.
set -uo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0 passes=0
ok() { echo "ok   $1"; passes=$((passes + 1)); }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
# "N passed, N failed"; the status says whether every check passed.
finish() {
  echo "$passes passed, $fails failed"
  ((fails == 0))
}
# Runs from the source tree (decks name data files relative to it) and needs
# the default corpus that scripts/prepare-corpus writes.
needs_corpus() {
  cd "${ZEROPP_SOURCE_DIR:?}" || exit 1
  [[ -s data/kjv/train.bin ]] || {
    echo "data/kjv/train.bin missing: run scripts/prepare-corpus"
    exit 1
  }
}
# curve LOG: each step line's loss, learning rate and gradient norm (the training curve)
curve() { grep -oE '^step [0-9]+/[0-9]+ \| loss [0-9.]+ \| lr [^|]*\| norm [0-9.]+' "$1"; }
tiny=(--model.n_layer=2 --model.n_embd=64 --train.batch_size=4 --train.seq_len=64 --model.max_seq_len=64
      --train.sample_tokens=0 --data.val=)
# one_layer_deck FILE TRAIN VAL STEPS [LINE...]: a deck of a one-layer model
# (vocab 256, 32 tokens) over the token files TRAIN and VAL ("" for none),
# with LINEs added to its [train] table.
one_layer_deck() {
  local file=$1 train=$2 val=$3 steps=$4
  shift 4
  {
    printf '[model]\nvocab_size = 256\nmax_seq_len = 32\nn_layer = 1\nn_head = 2\nn_embd = 16\n'
    printf '[train]\nbatch_size = 2\nseq_len = 32\nsteps = %s\nsample_tokens = 0\n' "$steps"
    for line in "$@"; do printf '%s\n' "$line"; done
    printf '[data]\ntrain = "%s"\nval = "%s"\n' "$train" "$val"
  } > "$file"
}
# train_ckpt STEPS ARGS...: the tiny model on 2 ranks for STEPS steps into $out
# (set by the caller), a checkpoint every 2 steps, the output in $work/log.
train_ckpt() {
  local steps=$1
  shift
  timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${tiny[@]}" \
    --log.every=1 --train.steps="$steps" --checkpoint.every=2 --train.out_dir="$out" "$@" > "$work/log" 2>&1
}
