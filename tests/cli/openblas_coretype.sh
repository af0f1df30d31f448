#!/usr/bin/env bash
# scripts/openblas-coretype on made-up CPUs and libraries: kernels chosen by
# feature flags (never the model number), only for the OpenBLAS versions that
# need it, and a value the user set kept. Under a second.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP_SOURCE_DIR:?}"
unset OPENBLAS_CORETYPE  # the test environment may set one
for v in 0.3.20 0.3.21 0.3.27; do
  mkdir -p "$work/$v"
  : > "$work/$v/libopenblasp-r$v.so"
  ln -s "libopenblasp-r$v.so" "$work/$v/libopenblas.so.0"
done
: > "$work/libopenblas.so.0"  # a build without the version in its name
cpu() {  # cpu NAME FLAGS...: a cpuinfo with these flags, the model number of an Emerald Rapids
  printf 'processor\t: 0\nmodel\t\t: 207\nflags\t\t: fpu sse sse2 %s\n\n' "${*:2}" > "$work/$1"
}
cpu spr avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl
cpu knl avx avx2 fma avx512f avx512cd  # AVX-512 without BW/VL/DQ (Knights Landing): not SkylakeX's
cpu hsw avx avx2 fma
cpu nofma avx avx2  # Haswell's kernels need FMA as well
cpu old sse3
check() {  # check WANT CPU LIBRARY [VAR=VALUE]: what the script prints
  local got
  got=$(env ${4:+"$4"} ZEROPP_CPUINFO="$work/$2" bash "$ZEROPP_SOURCE_DIR/scripts/openblas-coretype" "$3")
  if [[ $got == "$1" ]]; then
    echo "ok   cpu $2, $(basename "$(readlink -f "$3")")${4:+, $4}: '${got}'"
    passes=$((passes + 1))
  else
    echo "FAIL cpu $2, $3${4:+, $4}: '$got', expected '$1'"
    fails=$((fails + 1))
  fi
}
check SkylakeX spr "$work/0.3.21/libopenblas.so.0"
check SkylakeX spr "$work/0.3.20/libopenblas.so.0"
check Haswell knl "$work/0.3.21/libopenblas.so.0"
check Haswell hsw "$work/0.3.21/libopenblas.so.0"
check "" old "$work/0.3.21/libopenblas.so.0"
check "" nofma "$work/0.3.21/libopenblas.so.0"
check "" spr "$work/0.3.27/libopenblas.so.0"  # newer: it detects the CPU itself
check "" spr "$work/libopenblas.so.0"         # version unknown: zeropp's start-up warning is the net
check "" spr "$work/missing.so"
check Zen spr "$work/0.3.21/libopenblas.so.0" OPENBLAS_CORETYPE=Zen  # the user's choice stays
finish
