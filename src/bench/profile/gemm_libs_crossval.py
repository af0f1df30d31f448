#!/usr/bin/python3
"""Per-shape library choice checked out of sample, for src/bench/profile/gemm_libs.c.

gemm_libs prints its own "best library per shape" line, but picks and times
on the same repetitions, which flatters by the noise. This picks each shape's
library on run A's hot CPU ratios and prices the step's mix with run B's
ratios, each shape weighted by OpenBLAS's time for it in B.

  python3 src/bench/profile/gemm_libs_crossval.py tiny_a.md tiny_b.md
"""
import sys

CONTROL = 'libxsmm_sgemm'  # OpenBLAS behind libxsmm's fallback: noise, not a candidate


def load(path):
    """{(op(A), op(B), M, N, K, beta): {library: row}} from gemm_libs's table."""
    shapes = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 12 or not cells[2].isdigit():
            continue
        library = cells[7].split(' (/')[0].strip()
        shapes.setdefault(tuple(cells[:6]), {})[library] = {
            'calls': float(cells[6]),
            'rate': {'hot': float(cells[8]), 'cold': float(cells[10])},
            'ratio': {'hot': float(cells[9].split(',')[0]), 'cold': float(cells[11].split(',')[0])},
        }
    return shapes


def main():
    pick, price = load(sys.argv[1]), load(sys.argv[2])
    choice = {key: min((l for l in libs if l != CONTROL), key=lambda l: libs[l]['ratio']['hot'])
              for key, libs in pick.items()}
    for key, library in choice.items():
        if library != 'OpenBLAS':
            print(' '.join(key), library)
    for kind in ('hot', 'cold'):
        mixed = openblas = 0.0
        for key, libs in price.items():
            m, n, k = (int(x) for x in key[2:5])
            seconds = libs['OpenBLAS']['calls'] * 2.0 * m * n * k / libs['OpenBLAS']['rate'][kind]
            mixed += seconds * libs[choice[key]]['ratio'][kind]
            openblas += seconds
        print(f'{kind}: step mix with the choice from {sys.argv[1]}, priced in {sys.argv[2]}: '
              f'{mixed / openblas:.3f} of OpenBLAS')


if __name__ == '__main__':
    main()
