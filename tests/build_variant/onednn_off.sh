#!/usr/bin/env bash
# The build without oneDNN (-DZEROPP_WITH_ONEDNN=OFF), configured and built beside
# this one in build-onednn-off/ (kept: reruns are incremental), then held to what the
# README ("Without oneDNN") promises: no object reads a oneDNN header and nothing
# links one; --version says "oneDNN : off"; a small model on the default deck trains
# with the fp32 losses of $ZEROPP with train.batched_gemm = blas, bit for bit; bf16
# and batched_gemm = onednn are refused in one line before anything is written.
# About 6 minutes from an empty build-onednn-off/ on 2 cores, seconds on a rerun.
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}"
needs_corpus
src=$ZEROPP_SOURCE_DIR
off=$src/build-onednn-off
if ! timeout 300 cmake -S "$src" -B "$off" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZEROPP_WITH_ONEDNN=OFF \
  -DZEROPP_ENABLE_CUDA=OFF > "$work/configure.log" 2>&1; then
  bad "cmake -DZEROPP_WITH_ONEDNN=OFF failed"
  tail -20 "$work/configure.log"
  finish
  exit
fi
if ! timeout 1500 ninja -C "$off" zeropp > "$work/build.log" 2>&1; then
  bad "building zeropp without oneDNN failed"
  tail -20 "$work/build.log"
  finish
  exit
fi
ok "configured with -DZEROPP_WITH_ONEDNN=OFF and built $off/bin/zeropp"
bin=$off/bin/zeropp

# ninja's dependency log lists every header each object read.
if grep -qE '(dnnl|oneapi/dnnl)[^ ]*\.h' <<< "$(ninja -C "$off" -t deps)"; then
  bad "an object of the oneDNN-free build reads a oneDNN header"
  ninja -C "$off" -t deps | grep -E 'dnnl' | head -5
else ok "no object reads a oneDNN header (ninja -t deps)"; fi
if grep -q dnnl <<< "$(ldd "$bin")"; then
  bad "the binary links oneDNN: $(ldd "$bin" | grep dnnl)"
else ok "nothing links oneDNN (ldd)"; fi
if grep -qE '^ *oneDNN *: off( |$)' <<< "$("$bin" --version 2>&1)"; then ok "--version says oneDNN : off"
else bad "--version does not say 'oneDNN : off'"; "$bin" --version; fi

# The same fp32 run in both builds: every step's loss and norm equal.
run=("${tiny[@]}" --train.steps=6 --log.every=1)
timeout 300 "$ZEROPP" train inputs/default.toml "${run[@]}" --train.batched_gemm=blas \
  --train.out_dir="$work/with" < /dev/null > "$work/with.log" 2>&1 || bad "training with oneDNN failed"
timeout 300 "$bin" train inputs/default.toml "${run[@]}" --train.out_dir="$work/without" \
  < /dev/null > "$work/without.log" 2>&1 || bad "training without oneDNN failed"
if [[ $(curve "$work/with.log" | wc -l) == 6 && $(curve "$work/with.log") == "$(curve "$work/without.log")" ]]; then
  ok "6 fp32 steps: losses and norms bit for bit those of the oneDNN build with batched_gemm = blas"
else
  bad "the fp32 curves differ or are missing"
  diff <(curve "$work/with.log") <(curve "$work/without.log")
fi

# Each refusal: one line naming the key and the build, a non-zero exit, no run folder.
refused() {  # refused KEY=VALUE PATTERN
  local out=$work/refused-${1%%=*}
  if ! "$bin" train inputs/default.toml "${tiny[@]}" "--$1" --train.out_dir="$out" > "$out.log" 2>&1 &&
    [[ $(grep -c . "$out.log") == 1 ]] && grep -qE "$2" "$out.log" && [[ ! -e $out ]]; then
    ok "$1 refused in one line before anything is written: $(cat "$out.log")"
  else
    bad "$1 not refused in one line, or a run folder was written"
    cat "$out.log"
  fi
}
refused train.precision=bf16 'train\.precision = "bf16": needs oneDNN.*-DZEROPP_WITH_ONEDNN=OFF'
refused train.batched_gemm=onednn 'train\.batched_gemm = "onednn": needs oneDNN'
finish
