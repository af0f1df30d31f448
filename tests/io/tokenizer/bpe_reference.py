#!/usr/bin/env python3
"""GPT-2 byte-level BPE written independently of zeropp, standard library only.

Pre-tokenisation is GPT-2's pattern run by Python's `re`, with \\p{L}, \\p{N}
and \\s spelled out as explicit character classes built from `unicodedata`
(general categories L*, N*) and the White_Space property list. Encoding is
GPT-2's bpe(): merge the lowest-ranked adjacent pair, all its occurrences.

  bpe_reference.py compare VOCAB_DIR SHARD_DIR TEXT...
      shards (val_* then train_*) == encode(TEXT1) + [eot] + encode(TEXT2) ...,
      and decoding them gives the texts back byte for byte
  bpe_reference.py to-tokenizer-json VOCAB_DIR OUT_DIR [strings]
      writes OUT_DIR/tokenizer.json (Hugging Face layout, merges as [a, b]
      pairs, or as "a b" strings)
"""
import glob
import json
import os
import re
import struct
import sys
import unicodedata

WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
               (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]
EOT = "<|endoftext|>"


def char_class(ranges):
    return "".join(re.escape(chr(a)) if a == b else re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in ranges)


def category_ranges(first_letter):
    ranges, start = [], None
    for c in range(0x110000):
        inside = unicodedata.category(chr(c))[0] == first_letter
        if inside and start is None:
            start = c
        elif not inside and start is not None:
            ranges.append((start, c - 1))
            start = None
    return ranges


L, N, S = char_class(category_ranges("L")), char_class(category_ranges("N")), char_class(WHITE_SPACE)
PATTERN = re.compile(rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


class Bpe:
    def __init__(self, vocab_dir):
        with open(os.path.join(vocab_dir, "encoder.json"), encoding="utf-8") as f:
            self.encoder = json.load(f)
        with open(os.path.join(vocab_dir, "vocab.bpe"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        self.merges = [tuple(l.split(" ")) for l in lines[1:] if l]
        self.ranks = {m: i for i, m in enumerate(self.merges)}
        self.b2u = bytes_to_unicode()
        self.u2b = {v: k for k, v in self.b2u.items()}
        self.decoder = {v: k for k, v in self.encoder.items()}

    def bpe(self, token):
        word = list(token)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = out
        return word

    def encode(self, text):
        ids = []
        for k, part in enumerate(text.split(EOT)):
            if k:
                ids.append(self.encoder[EOT])
            for piece in PATTERN.findall(part):
                token = "".join(self.b2u[b] for b in piece.encode("utf-8"))
                ids += [self.encoder[t] for t in self.bpe(token)]
        return ids

    def decode(self, ids):
        return bytes(self.u2b[c] for i in ids for c in self.decoder[i]) if ids else b""


def read_shard(path):
    with open(path, "rb") as f:
        header = struct.unpack("<256i", f.read(1024))
        assert header[0] == 20240520 and header[1] == 1, path
        body = f.read()
    assert len(body) == 2 * header[2], path
    return list(struct.unpack(f"<{header[2]}H", body))


def compare(vocab_dir, shard_dir, texts):
    bpe = Bpe(vocab_dir)
    got = []
    for split in ("val", "train"):
        for path in sorted(glob.glob(os.path.join(shard_dir, f"{split}_*.bin"))):
            got += read_shard(path)
    raw = [open(t, "rb").read() for t in texts]
    want = []
    for k, r in enumerate(raw):
        if k:
            want.append(bpe.encoder[EOT])
        want += bpe.encode(r.decode("utf-8"))
    if got != want:
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        print(f"FAILED: zeropp's shards and the reference differ at token {first} of {len(got)} / {len(want)}: "
              f"{got[first:first + 8]} vs {want[first:first + 8]}")
        return 1
    eot_bytes = EOT.encode()
    if bpe.decode(got) != eot_bytes.join(raw):
        print("FAILED: decoding the shards does not give the texts back")
        return 1
    print(f"reference BPE: {len(got)} tokens identical, decoded byte for byte; OK")
    return 0


def to_tokenizer_json(vocab_dir, out_dir, strings):
    bpe = Bpe(vocab_dir)
    doc = {"version": "1.0", "added_tokens": [{"id": bpe.encoder[EOT], "content": EOT, "special": True}],
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
           "model": {"type": "BPE", "vocab": {k: v for k, v in bpe.encoder.items() if k != EOT},
                     "merges": [" ".join(m) if strings else list(m) for m in bpe.merges]}}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[4:]))
    sys.exit(to_tokenizer_json(sys.argv[2], sys.argv[3], sys.argv[4:] == ["strings"]))
