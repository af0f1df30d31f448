#!/usr/bin/env bash
# scripts/gpu-check-train rehearsed on the host, no GPU needed: the host
# figures recorded as scripts/gpu-bundle records them, then gct_check with its
# "device" runs on the host too (GCT_DEVICE=host), on a model shrunk by
# GCT_EXTRA: every row must pass (the same bytes, 0 % loss difference, rates
# against a stand-in cuBLAS figure); host figures changed on purpose must fail
# them, missing ones give SKIPPED. (The rest of scripts/gpu-check --bundle:
# tests/cli/gpu_check_bundle.sh.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
source scripts/gpu-check-train
GCT_MPIEXEC=("$MPIEXEC") GCT_ZEROPP="$ZEROPP" GCT_CWD="$ZEROPP_SOURCE_DIR"
GCT_EXTRA=(--model.vocab_size=256 --model.max_seq_len=32 --model.n_layer=1 --model.n_head=2 --model.n_embd=32
  --train.seq_len=32 --train.batch_size=2 --train.steps=3)
mkdir -p "$work/host" "$work/dev" "$work/bad" "$work/dev2"

if gct_record "$work/host"; then ok "gct_record: the host figures of ${gct_names[*]}"; else bad "gct_record failed"; fi
for f in small.loss zero3.loss zeropp.loss; do
  [[ $(wc -l < "$work/host/$f") == 3 ]] && ok "$f: 3 steps" || bad "$f: $(cat "$work/host/$f")"
done
grep -q '^all ranks | all-gather intra [0-9]* inter [1-9][0-9]* | reduce-scatter' "$work/host/zero3.bytes" &&
  ok "zero3.bytes: inter-node bytes of each kind" || bad "zero3.bytes: $(cat "$work/host/zero3.bytes")"
cmp -s "$work/host/zero3.bytes" "$work/host/zeropp.bytes" && bad "ZeRO-3 and ZeRO++ send the same bytes" ||
  ok "ZeRO++ sends other bytes than ZeRO-3"

# tools/gpu_check's rates as its table prints them, low enough for the host to beat.
printf '| cuBLAS bf16 %s forward GEMMs (rows) | 0.0000001 | 0.0000001 |\n' small.toml gpt2-124m.toml > "$work/rates"
GCT_DEVICE=host gct_check "$work/host" "$work/dev" "$work/rates" > "$work/rows"
rc=$?
cat "$work/rows"
((rc == 0)) && ok "gct_check: status 0" || bad "gct_check: status $rc"
[[ $(grep -c '|pass|' "$work/rows") == 7 ]] && ok "7 rows pass" || bad "not 7 rows pass"
grep -q '^2|small.toml, 1 rank, 100 steps bf16 vs host fp32 (10-step means within 2%)|pass|largest difference 0.00% (steps -) over 3 steps in windows of 10' \
  "$work/rows" && ok "part 2: the same curve" || bad "part 2's row"
for deck in small.toml gpt2-124m.toml; do
  grep -q "^2|$deck training TFLOP/s / cuBLAS bf16 on its GEMM shapes (goal >= 0.5)|pass|[0-9]* tok/s, [0-9.]* TFLOP/s (steady state), [0-9.]* of cuBLAS" \
    "$work/rows" && ok "part 2: $deck against cuBLAS" || bad "part 2's rate row of $deck"
done
gct_rate "$work/dev" small small.toml /nonexistent | grep -q '^2|small.toml training.*|FAIL|.*no cuBLAS rate' &&
  ok "no cuBLAS rate: FAIL" || bad "no cuBLAS rate did not fail"

# Changed on purpose: small 5 % higher, zero3 one byte more and a step less, zeropp gone.
awk '{ printf "%s %.4f\n", $1, $2 * 1.05 }' "$work/host/small.loss" > "$work/bad/small.loss"
sed 's/inter \([0-9]*\) | reduce/inter 1\1 | reduce/' "$work/host/zero3.bytes" > "$work/bad/zero3.bytes"
head -2 "$work/host/zero3.loss" > "$work/bad/zero3.loss"
GCT_DEVICE=host gct_check "$work/bad" "$work/dev2" > "$work/rows2"
cat "$work/rows2"
grep -q '^2|.*|FAIL|largest difference 4.76% (steps 1-3)' "$work/rows2" && ok "part 2 fails 5 % off" || bad "part 2 passed 5 % off"
grep -q '^3|.*ZeRO-3: bytes = host backend.s|FAIL|host: ' "$work/rows2" && ok "part 3 fails on other bytes" ||
  bad "part 3 passed other bytes"
grep -q '^3|.*ZeRO-3: loss.*|FAIL|steps differ: host 2, this run 3' "$work/rows2" && ok "part 3 fails on missing steps" ||
  bad "part 3 passed missing steps"
grep -q '^3|.*full ZeRO++: bytes[^|]*|SKIPPED|no host figures' "$work/rows2" && ok "no host figures: SKIPPED" ||
  bad "no host figures did not say SKIPPED"

finish
