#!/usr/bin/env bash
# `zeropp ckpt import|export` and `train --init-from` (README "Weights in and out"):
# HDF5 -> safetensors -> HDF5 and HDF5 -> llm.c -> HDF5 give bit-identical /model
# tensors; bf16 llm.c files and vocabulary padding round-trip; every malformed
# safetensors / config.json / llm.c file is one clear error that creates nothing
# and leaves an existing file alone; a fine-tuning run from an imported
# checkpoint starts from its exact validation loss and lowers it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
Z=("$ZEROPP")
run() { timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${tiny[@]}" --data.val=data/kjv/val.bin \
  --train.val_batches=2 --log.every=1 "$@"; }
# same_model A B: every /model dataset of A equals B's bit for bit (and the same names)
same_model() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["model"] for p in sys.argv[1:3])
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for k in a:
    x, y = a[k][()], b[k][()]
    assert x.shape == y.shape and np.array_equal(x.view(np.uint32), y.view(np.uint32)), k
PY
}

run --train.steps=4 --checkpoint.every=4 --train.out_dir="$work/run" > "$work/log" 2>&1 || { bad "training run"; cat "$work/log"; }
ck="$work/run/checkpoints/step_00000004.h5"
val0=$(sed -n 's/^val final | step 4 | loss //p' "$work/log")

# Round trips.
mkdir -p "$work/st"
if "${Z[@]}" ckpt export "$ck" "$work/st/model.safetensors" > /dev/null && "${Z[@]}" ckpt import "$work/st" "$work/st.h5" > /dev/null &&
  same_model "$ck" "$work/st.h5" && "${Z[@]}" ckpt verify "$work/st.h5" > /dev/null; then
  ok "HDF5 -> safetensors -> HDF5: bit-identical"
else bad "safetensors round trip"; fi
if "${Z[@]}" ckpt export "$ck" "$work/m.bin" > /dev/null && "${Z[@]}" ckpt import "$work/m.bin" "$work/m.h5" > /dev/null &&
  same_model "$ck" "$work/m.h5"; then
  ok "HDF5 -> llm.c -> HDF5: bit-identical"
else bad "llm.c round trip"; fi
if "${Z[@]}" ckpt export "$ck" "$work/b1.bin" --dtype bf16 > /dev/null && "${Z[@]}" ckpt import "$work/b1.bin" "$work/b.h5" > /dev/null &&
  "${Z[@]}" ckpt export "$work/b.h5" "$work/b2.bin" --dtype bf16 > /dev/null && cmp -s "$work/b1.bin" "$work/b2.bin" &&
  [[ $(stat -c %s "$work/b1.bin") -eq $((1024 + 2 * ($(stat -c %s "$work/m.bin") - 1024) / 4)) ]]; then
  ok "llm.c bf16 -> HDF5 -> llm.c bf16: identical files"
else bad "bf16 round trip"; fi
# Padding: 256 -> 300 rows (zeros added), then back to V=256 in an llm.c file with Vp=384.
if "${Z[@]}" ckpt import "$work/m.bin" "$work/p.h5" --vocab-size 300 > /dev/null &&
  "${Z[@]}" ckpt export "$work/p.h5" "$work/p.bin" --vocab-size 256 > "$work/plog" &&
  grep -q "V 256, Vp 384" "$work/plog" && "${Z[@]}" ckpt import "$work/p.bin" "$work/p2.h5" > /dev/null &&
  same_model "$ck" "$work/p2.h5"; then
  ok "vocabulary padding 256 -> 300 rows -> llm.c V=256 Vp=384 -> 256 rows: identical"
else bad "vocabulary padding"; fi

# Malformed inputs: each one line "zeropp: error: <file>...", exit 1, no output file.
/usr/bin/python3 - "$work" <<'PY'
import json, os, shutil, struct, sys
w = sys.argv[1]
raw = open(f"{w}/st/model.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr, data = json.loads(raw[8:8 + n]), raw[8 + n:]
def st(name, header=None, body=None, text=None, config=None, length=None):
    d = f"{w}/bad_st_{name}"
    os.makedirs(d)
    t = text if text is not None else json.dumps(header if header is not None else hdr).encode()
    with open(f"{d}/model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(t) if length is None else length) + t + (data if body is None else body))
    cfg = json.load(open(f"{w}/st/config.json"))
    cfg.update(config or {})
    json.dump(cfg, open(f"{d}/config.json", "w"))
def edit(fn):
    h = json.loads(json.dumps(hdr))
    fn(h)
    return h
st("length", length=len(json.dumps(hdr)) + len(data) + 1)  # one byte past the end
st("truncated", body=data[:-4])
st("json", text=b'{"wte.weight": {"dtype": "F32",')
st("dtype", edit(lambda h: h["wte.weight"].update(dtype="F33")))
st("shape", edit(lambda h: h["wte.weight"].update(shape=[255, 64])))
st("overlap", edit(lambda h: h["wpe.weight"].update(data_offsets=[0, h["wpe.weight"]["data_offsets"][1] - h["wpe.weight"]["data_offsets"][0]])))
st("duplicate", text=json.dumps(hdr)[:-1].encode() + b', "wte.weight": ' + json.dumps(hdr["wte.weight"]).encode() + b"}")
st("extrakey", edit(lambda h: h["wte.weight"].update(stride=[1])))
st("unknown", edit(lambda h: h.__setitem__("h.0.mlp.gate.weight", h.pop("h.0.ln_1.weight"))))
st("config", config={"n_embd": 128})
st("gelu", config={"activation_function": "relu"})
st("nohead", config={"n_head": None})
m = open(f"{w}/m.bin", "rb").read()
def llmc(name, blob):
    open(f"{w}/bad_{name}.bin", "wb").write(blob)
def hdr_set(i, v):
    b = bytearray(m)
    b[4 * i:4 * i + 4] = struct.pack("<i", v)
    return bytes(b)
llmc("magic", hdr_set(0, 20240327))
llmc("version", hdr_set(1, 4))
llmc("truncated", m[:-8])
llmc("vp", hdr_set(7, 128))
llmc("heads", hdr_set(5, 5))
llmc("short", m[:100])
PY
for f in "$work"/bad_st_* "$work"/bad_*.bin; do
  name=$(basename "$f")
  out=$("${Z[@]}" ckpt import "$f" "$work/out_$name.h5" 2>&1)
  rc=$?
  if [[ $rc -eq 1 && $(wc -l <<< "$out") -eq 1 && $out == "zeropp: error: "*"$f"* && ! -e "$work/out_$name.h5" ]] &&
    ! ls -A "$work" | grep -q "out_$name"; then
    ok "$name: ${out:0:150}"
  else
    bad "$name: rc=$rc, output: $out"
  fi
done
# An existing output is refused and left as it was.
echo "precious" > "$work/existing.h5"
if ! "${Z[@]}" ckpt import "$work/m.bin" "$work/existing.h5" > "$work/elog" 2>&1 && [[ $(cat "$work/existing.h5") == precious ]] &&
  grep -q "existing.h5: exists" "$work/elog"; then
  ok "an existing output is refused and untouched"
else bad "existing output"; cat "$work/elog"; fi

# Fine-tuning: the imported weights give the trained run's validation loss at
# step 0, and 4 more steps lower it.
run --train.steps=0 --train.out_dir="$work/ft0" --init-from "$work/st.h5" > "$work/ft0.log" 2>&1
start=$(sed -n 's/^val final | step 0 | loss //p' "$work/ft0.log")
run --train.steps=4 --train.out_dir="$work/ft" --init-from "$work/st.h5" > "$work/ft.log" 2>&1
end=$(sed -n 's/^val final | step 4 | loss //p' "$work/ft.log")
if [[ -n $val0 && $start == "$val0" ]] && grep -q "^init-from: model weights from $work/st.h5" "$work/ft.log" &&
  grep -q "^step 1/4" "$work/ft.log" && /usr/bin/python3 -c "import sys; sys.exit(not float('$end') < float('$start'))"; then
  ok "fine-tuning from the import: val loss $start (the trained run's $val0) -> $end after 4 steps"
else
  bad "fine-tuning: trained $val0, imported $start, after $end"
  grep -E "error|init" "$work/ft0.log" "$work/ft.log"
fi
out=$(run --train.steps=1 --train.out_dir="$work/ftx" --init-from "$work/st.h5" --model.n_embd=32 2>&1)
if [[ $? -eq 1 ]] && grep -q "refusing to init from a different model" <<< "$out"; then
  ok "--init-from a different model shape is refused"
else bad "init-from shape check: $out"; fi
out=$(run --train.steps=1 --train.out_dir="$work/ftr" --resume "$work/st.h5" 2>&1)
if [[ $? -eq 1 ]] && grep -q "a weights-only checkpoint.*start a new run from it with --init-from" <<< "$out"; then
  ok "--resume from an import says to use --init-from"
else bad "resume from an import: $out"; fi
finish
