#!/usr/bin/python3
"""Per-kernel breakdown of a one-rank `zeropp bench step` from a perf profile.

Usage:
  perf record -e cpu-clock -F 400 --call-graph dwarf,16384 -o perf.data \
      build/bin/zeropp bench step DECK --steps 3 --data.val=
  perf script -i perf.data | src/bench/profile/step_breakdown.py

Takes the samples whose call stack passes through zeropp::train_step during
the fp32 steps (bench step times fp32 first; they end where the bf16 run's
set-up, Run::Run, or the first gemm_bf16 sample begins; the GEMM mix timed
after each step, GemmMix::seconds, is outside train_step and not counted) and
charges each to the
innermost zeropp function on its stack (a Kokkos kernel's lambda counts as the
kernel that launched it; a kernel body run through kernels/runtime/simd_dispatch.hpp
counts under its own name, e.g. BiasGeluForward; gemm wrappers count as their caller), split into the
BLAS library's time ("BLAS": the leaf is in OpenBLAS, oneDNN or JIT code, or in
libc called from them: OpenBLAS's memset of C for beta = 0) and
the function's own. Prints a markdown table, largest first, in percent of the
fp32 steps' samples.
"""
import collections
import re
import sys

HELPERS = {"gemm", "gemm_strided_batched", "gemm_as", "gemm_on_rounded",
           "parallel_chunks", "softmax_row",
           "layernorm_row", "exp_nonpositive", "tanh_vectorisable", "lane_sum", "simd_dispatch"}
# simd_avx512<K, ...> (and avx2, baseline): a kernel body K run through
# kernels/runtime/simd_dispatch.hpp, often reached by a tail call (no frame of the
# kernel function above it): charged to K.
DISPATCHED = re.compile(r"zeropp::simd_(?:avx512|avx2|baseline)<zeropp::(?:\(anonymous namespace\)::)?(\w+)")
NAME = re.compile(r"zeropp::((?:\(anonymous namespace\)::)?(?:[A-Za-z_]\w*(?:<[^<>]*>)?::)*[A-Za-z_]\w*)")


def samples(lines):
    stack = []
    for line in lines:
        if not line.strip():
            if stack:
                yield stack
            stack = []
        elif line.startswith("\t") or line.startswith(" "):
            stack.append(line.strip())
    if stack:
        yield stack


def charge(stack):
    in_blas = lambda f: any(s in f for s in ("libopenblas", "libdnnl", "[unknown]")) or "[JIT]" in f
    # OpenBLAS clears C for beta = 0 with libc's memset: the library's time too.
    blas = in_blas(stack[0]) or ("libc.so" in stack[0] and len(stack) > 1 and in_blas(stack[1]))
    for frame in stack:
        sym = frame.split(" ", 1)[1] if " " in frame else frame
        d = DISPATCHED.search(sym)
        if d:
            return d.group(1) + (" [BLAS]" if blas else "")
        m = NAME.search(sym)
        if not m:
            continue
        name = re.sub(r"<[^<>]*>", "", m.group(1)).replace("(anonymous namespace)::", "")
        if name.split("::")[-1] in HELPERS:
            continue
        return name + (" [BLAS]" if blas else "")
    return "(outside zeropp)" + (" [BLAS]" if blas else "")


def main():
    counts = collections.Counter()
    total = 0
    for stack in samples(sys.stdin):
        text = "\n".join(stack)
        if "zeropp::gemm_bf16" in text or (total and "zeropp::Run::Run" in text):
            break  # the fp32 steps are over (the bf16 run begins)
        if "zeropp::train_step" not in text:
            continue
        counts[charge(stack)] += 1
        total += 1
    if total == 0:
        sys.exit("step_breakdown: no samples inside zeropp::train_step (record with --call-graph dwarf)")
    blas = sum(c for k, c in counts.items() if k.endswith("[BLAS]"))
    print(f"{total} samples in the fp32 steps; BLAS {100.0 * blas / total:.1f} %\n")
    print("| function | share |\n|---|---:|")
    for k, c in counts.most_common():
        if 100.0 * c / total >= 0.3:
            print(f"| {k} | {100.0 * c / total:.1f} % |")
    rest = sum(c for k, c in counts.items() if 100.0 * c / total < 0.3)
    print(f"| (each below 0.3 %) | {100.0 * rest / total:.1f} % |")


if __name__ == "__main__":
    main()
