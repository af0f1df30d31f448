#!/usr/bin/env bash
# Byte-level BPE end to end (about 30 s): `zeropp tokenizer train` on KJV text
# and a UTF-8 test text (accents, emoji, CJK, contractions, odd whitespace,
# literal <|endoftext|>); `prepare-data --tokenizer` on both into small shards,
# compared token for token with an independent pure-Python GPT-2 BPE
# (tests/io/tokenizer/bpe_reference.py) and decoded back byte for byte; the same
# vocabulary as a Hugging Face tokenizer.json gives identical shards;
# malformed vocabulary files give one error line naming the file and leave
# the shards alone; a 16 MB input is tokenized in bounded memory.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
needs_corpus
ref=tests/io/tokenizer/bpe_reference.py
head -c 200000 data/kjv/kjv.txt > "$work/kjv.txt"
text=(--input "$work/kjv.txt" --input tests/io/tokenizer/tokenizer_utf8.txt)

run() { "$MPIEXEC" -n 1 "$ZEROPP" "$@"; }
if run tokenizer train --vocab-size 700 --out "$work/vocab" "$work/kjv.txt" tests/io/tokenizer/tokenizer_utf8.txt; then
  ok "tokenizer train"
else
  bad "tokenizer train"
fi
run prepare-data --tokenizer "$work/vocab" "${text[@]}" --out-dir "$work/shards" --val-tokens 1000 \
  --shard-tokens 20000 || bad "prepare-data --tokenizer"
if /usr/bin/python3 "$ref" compare "$work/vocab" "$work/shards" "$work/kjv.txt" tests/io/tokenizer/tokenizer_utf8.txt; then
  ok "shards == Python reference BPE, decoded byte for byte"
else
  bad "shards == Python reference BPE"
fi
[[ $(ls "$work/shards") == $'train_000000.bin\ntrain_000001.bin\ntrain_000002.bin\ntrain_000003.bin\nval_000000.bin' ]] &&
  ok "shard layout (val 1000 tokens, train in 20000-token shards)" || bad "shard layout: $(ls "$work/shards")"

/usr/bin/python3 "$ref" to-tokenizer-json "$work/vocab" "$work/hf"
/usr/bin/python3 "$ref" to-tokenizer-json "$work/vocab" "$work/hf_strings" strings
for hf in hf hf_strings; do
  run prepare-data --tokenizer "$work/$hf" "${text[@]}" --out-dir "$work/shards_$hf" --val-tokens 1000 \
    --shard-tokens 20000 > /dev/null
  if diff -r "$work/shards" "$work/shards_$hf" > /dev/null; then
    ok "tokenizer.json ($hf) gives the same shards"
  else
    bad "tokenizer.json ($hf) gives different shards"
  fi
done

# Training reads the shards through a glob (train) and a list (val).
if timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${tiny[@]}" --model.vocab_size=700 \
  --train.steps=2 --train.out_dir="$work/run" --data.train="$work/shards/train_*.bin" \
  --data.val="$work/shards/val_000000.bin,$work/shards/train_000003.bin" --train.val_batches=1 \
  > "$work/train.log" 2>&1 && grep -q "^val final" "$work/train.log"; then
  ok "train on data.train = train_*.bin, data.val = a list"
else
  bad "train on the shards:"; tail -5 "$work/train.log"
fi

# expect_error NAME WANT TOKENIZER-DIR: one error line containing WANT, non-zero
# exit, the shards of the first run untouched.
sums=$(md5sum "$work"/shards/*)
expect_error() {
  local err rc
  err=$(run prepare-data --tokenizer "$3" "${text[@]}" --out-dir "$work/shards" --val-tokens 1000 \
    --shard-tokens 20000 2>&1 > /dev/null)
  rc=$?
  if [[ $rc -ne 0 && $(grep -c '^zeropp: error:' <<< "$err") -eq 1 ]] && grep -qF -- "$2" <<< "$err" &&
    [[ $(md5sum "$work"/shards/*) == "$sums" && ! -e $(echo "$work"/shards/.prepare*) ]]; then
    ok "$1: $err"
  else
    bad "$1 (status $rc): $err"
  fi
}
broken() {  # broken NAME: a copy of the vocabulary folder to spoil
  rm -rf "$work/$1"
  cp -r "$work/vocab" "$work/$1"
  echo "$work/$1"
}
d=$(broken truncated_json) && head -c 500 "$work/vocab/encoder.json" > "$d/encoder.json"
expect_error "truncated encoder.json" "$d/encoder.json: not valid JSON" "$d"
d=$(broken json_array) && echo '[1, 2]' > "$d/encoder.json"
expect_error "encoder.json not an object" "$d/encoder.json: must be a JSON object" "$d"
d=$(broken no_eot) && sed -i 's/"<|endoftext|>":[0-9]*,\?//' "$d/encoder.json"
expect_error "encoder.json without <|endoftext|>" "$d/encoder.json: no token <|endoftext|>" "$d"
d=$(broken bad_merge) && sed -i '5s/.*/th e x/' "$d/vocab.bpe"
expect_error "vocab.bpe line with three parts" "$d/vocab.bpe line 5: \"th e x\" is not two tokens" "$d"
d=$(broken unknown_merge) && sed -i '7s/.*/qqq zzz/' "$d/vocab.bpe"
expect_error "vocab.bpe merge of unknown tokens" "$d/vocab.bpe line 7: \"qqq\" is not in the vocabulary" "$d"
d=$(broken no_bpe) && rm "$d/vocab.bpe"
expect_error "vocab.bpe missing" "$d/vocab.bpe: missing" "$d"
mkdir -p "$work/hf_bad" && echo '{"model": {"type": "WordPiece"}}' > "$work/hf_bad/tokenizer.json"
expect_error "tokenizer.json of another model" "$work/hf_bad/tokenizer.json: model.type is \"WordPiece\"" "$work/hf_bad"
mkdir -p "$work/hf_pair" && sed 's/\[\("[^"]*"\), \("[^"]*"\)\]/[\1]/' "$work/hf/tokenizer.json" > "$work/hf_pair/tokenizer.json"
expect_error "tokenizer.json merge with one part" "$work/hf_pair/tokenizer.json model.merges[0]" "$work/hf_pair"
expect_error "tokenizer folder missing" "tokenizer $work/none: is not a folder" "$work/none"
printf 'valid text\n\xff\xfe broken\n' > "$work/binary.txt"
err=$(run prepare-data --tokenizer "$work/vocab" --input "$work/binary.txt" --out-dir "$work/shards" 2>&1 > /dev/null)
grep -qF "input $work/binary.txt: not UTF-8 text (invalid byte 0xFF at offset 11)" <<< "$err" &&
  [[ $(md5sum "$work"/shards/*) == "$sums" ]] && ok "non-UTF-8 input: $err" || bad "non-UTF-8 input: $err"
run prepare-data --tokenizer "$work/vocab" --input "$work/binary.txt" --out-dir "$work/new/out" 2> /dev/null
[[ ! -e $work/new ]] && ok "a failed run leaves no new output folder" || bad "a failed run left $work/new"

# Bounded memory: 16 MB of text must not raise the peak RSS by more than 12 MB
# over a 200 kB run (reading the whole file would add 16 MB, its tokens 4x more).
for i in 1 2 3 4; do cat data/kjv/kjv.txt; done > "$work/big.txt"
# Under AddressSanitizer freed memory waits in a quarantine (256 MB) and counts in
# the RSS: it is turned off for these runs (the option means nothing otherwise).
rss() {
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
    /usr/bin/time -f %M -o "$work/rss" "$ZEROPP" prepare-data --tokenizer "$work/vocab" --input "$1" \
    --out-dir "$work/rss_out" --val-tokens 1000 --shard-tokens 1000000 > /dev/null
  cat "$work/rss"
}
small=$(rss "$work/kjv.txt") big=$(rss "$work/big.txt")
if ((big - small < 12 * 1024)); then
  ok "bounded memory: peak RSS $small kB (200 kB input), $big kB (16 MB input)"
else
  bad "memory grows with the input: peak RSS $small kB (200 kB input), $big kB (16 MB input)"
fi
finish
