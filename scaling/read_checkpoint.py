#!/usr/bin/python3
"""Read a zeropp checkpoint with h5py alone: print its metadata and verify every checksum.

Usage:
  read_checkpoint.py PATH [--deck] [--state] [--quiet]

PATH is a checkpoint file, or a checkpoint directory (then the file named by
its `latest`, else the highest step_<N>.h5 in it). The layout and the checksum
are described in docs/checkpoint-format.md; this script is the reference
reader for it and uses nothing of zeropp.

Exit status: 0 when every dataset's checksum matches, 1 when one does not,
2 when the file is missing, not HDF5 or not a zeropp checkpoint.
"""
import argparse
import os
import re
import sys

import h5py
import numpy as np

FORMAT = "zeropp-checkpoint"
FORMAT_VERSION = 1
ALGORITHM = "sum-mix64-v1"
CHUNK = 1 << 23  # elements per read

G = np.uint64(0x9E3779B97F4A7C15)
C1 = np.uint64(0xBF58476D1CE4E5B9)
C2 = np.uint64(0x94D049BB133111EB)


def mix64_sum(bits, first):
    """Sum mod 2^64 of mix64(i * G ^ bits[k]) for flat indices i = first + k."""
    idx = np.arange(first, first + bits.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (idx * G) ^ bits
        x ^= x >> np.uint64(30)
        x *= C1
        x ^= x >> np.uint64(27)
        x *= C2
        x ^= x >> np.uint64(31)
        return int(x.sum(dtype=np.uint64))


def dataset_checksum(ds):
    """The checksum of a whole dataset, read in row blocks (float32 bits zero-extended, 64-bit types as is)."""
    kind = {4: np.uint32, 8: np.uint64}[ds.dtype.itemsize]
    if ds.shape == ():
        return mix64_sum(np.atleast_1d(ds[()]).view(kind).astype(np.uint64), 0)
    if ds.size == 0:
        return 0
    row = ds.size // ds.shape[0]
    rows = max(1, CHUNK // max(row, 1))
    total = 0
    for r in range(0, ds.shape[0], rows):
        block = np.ascontiguousarray(ds[r : r + rows]).reshape(-1)
        total = (total + mix64_sum(block.view(kind).astype(np.uint64), r * row)) & 0xFFFFFFFFFFFFFFFF
    return total


def resolve(path):
    if not os.path.isdir(path):
        return path
    latest = os.path.join(path, "latest")
    if os.path.isfile(latest):
        with open(latest) as f:
            name = f.readline().strip()
        if name and "/" not in name and os.path.isfile(os.path.join(path, name)):
            return os.path.join(path, name)
    steps = []
    for n in os.listdir(path):
        m = re.fullmatch(r"step_(\d+)\.h5", n)
        if m and os.path.isfile(os.path.join(path, n)):
            steps.append((int(m.group(1)), n))
    if not steps:
        sys.exit(f"read_checkpoint: {path}: no checkpoint in this directory")
    return os.path.join(path, max(steps)[1])


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="checkpoint file or directory")
    ap.add_argument("--deck", action="store_true", help="print the whole deck TOML")
    ap.add_argument("--state", action="store_true", help="print the /state scalars and words")
    ap.add_argument("--quiet", action="store_true", help="print only problems and the summary line")
    args = ap.parse_args()

    path = resolve(args.path)
    if not os.path.isfile(path):
        print(f"read_checkpoint: {path}: no such file", file=sys.stderr)
        return 2
    if not h5py.is_hdf5(path):
        print(f"read_checkpoint: {path}: not an HDF5 file", file=sys.stderr)
        return 2
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        print(f"read_checkpoint: {path}: HDF5 cannot open it (truncated or corrupted file): {e}", file=sys.stderr)
        return 2
    with f:
        a = f.attrs
        if text(a.get("format", "")) != FORMAT:
            print(f"read_checkpoint: {path}: not a zeropp checkpoint", file=sys.stderr)
            return 2
        if int(a["format_version"]) != FORMAT_VERSION:
            print(f"read_checkpoint: {path}: format version {int(a['format_version'])}, "
                  f"this script reads {FORMAT_VERSION}", file=sys.stderr)
            return 2
        st = f["state"].attrs
        say = (lambda *x: None) if args.quiet else print
        say(f"checkpoint   {path} ({os.path.getsize(path) / 1e6:.1f} MB, format {FORMAT} v{FORMAT_VERSION})")
        say(f"step         {int(st['step'])}, tokens seen {int(st['tokens_seen'])}, seed {int(st['seed'])}")
        say(f"saved by     {text(a['code_version'])} on {int(a['world_size'])} ranks "
            f"({int(a['nodes'])} nodes x {int(a['ranks_per_node'])} ranks per node)")
        zero = " ".join(line.strip() for line in text(a["zero_toml"]).splitlines() if line.strip())
        say(f"zero         {zero}")
        deck = text(a["deck_toml"])
        if args.deck:
            say("deck:\n" + deck)
        else:
            say(f"deck         {len(deck.splitlines())} lines of TOML (--deck prints it)")

        datasets = []
        f.visititems(lambda name, obj: datasets.append(name) if isinstance(obj, h5py.Dataset) else None)
        # /state first, then the tensors, each in creation order where HDF5 tracked it.
        order = {}

        def crt_order(group, prefix):
            names = list(group.keys())
            try:
                idx = group.id.links
                names.sort(key=lambda n: idx.get_info(n.encode()).corder)
            except Exception:
                pass
            for n in names:
                full = f"{prefix}{n}"
                order[full] = len(order)
                if isinstance(group[n], h5py.Group):
                    crt_order(group[n], full + "/")

        crt_order(f, "")
        datasets.sort(key=lambda n: order.get(n, len(order)))

        bad = 0
        n_tensors = 0
        tensor_bytes = 0
        say(f"{'dataset':<48} {'shape':<18} {'dtype':<8} checksum")
        for name in datasets:
            ds = f[name]
            is_state = name.startswith("state/")
            if not is_state:
                n_tensors += 1
                tensor_bytes += ds.size * ds.dtype.itemsize
            stored = ds.attrs.get("checksum")
            problem = ""
            if stored is None:
                problem = "no checksum attribute"
            elif text(ds.attrs.get("checksum_algorithm", "")) != ALGORITHM:
                problem = "unknown checksum algorithm"
            elif ds.dtype.itemsize not in (4, 8):
                problem = f"unexpected dtype {ds.dtype}"
            else:
                got = dataset_checksum(ds)
                if got != int(stored):
                    problem = f"BAD (stored 0x{int(stored):016x}, computed 0x{got:016x})"
            shape = "[" + ", ".join(str(d) for d in ds.shape) + "]"
            line = f"/{name:<47} {shape:<18} {str(ds.dtype):<8} {problem or 'OK'}"
            if problem:
                bad += 1
                print(line)
            else:
                say(line)
            if args.state and is_state and not args.quiet:
                print(f"    = {ds[()].tolist()}")
        print(f"{n_tensors} tensors ({tensor_bytes / 1e6:.1f} MB), {len(datasets)} datasets: "
              + ("all checksums OK" if bad == 0 else f"{bad} checksum BAD"))
        return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
