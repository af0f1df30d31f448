#!/usr/bin/env bash
# The BLAS kernels a bare launch gets: `mpirun zeropp` without OPENBLAS_CORETYPE
# runs non-generic kernels on a CPU with AVX2. Where OpenBLAS does not know the CPU
# (simulated on any CPU by a preloaded openblas_get_corename that answers "Prescott"
# until OPENBLAS_CORETYPE is set, as OpenBLAS 0.3.21 behaves on a Sapphire Rapids),
# zeropp restarts itself with the kernels the CPU's flags call for and says so, with
# the variable unset or empty; a value the user set is kept. 2 ranks, ~5 s.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " ${flags#*:} " == *" $1 "* ]]; }
if ! has avx2 || ! has fma; then
  echo "SKIPPED: this CPU has no AVX2 + FMA: OpenBLAS's generic kernels are the right ones"
  exit 0
fi
want=Haswell
if has avx512f && has avx512cd && has avx512bw && has avx512vl && has avx512dq; then want=SkylakeX; fi
# The simulated unknown CPU.
cat > "$work/unknown_cpu.c" << 'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
char* openblas_get_corename(void) {
  const char* set = getenv("OPENBLAS_CORETYPE");
  if (set != NULL && *set != '\0') return ((char* (*)(void))dlsym(RTLD_NEXT, "openblas_get_corename"))();
  return "Prescott";
}
C
cc -shared -fPIC -o "$work/unknown_cpu.so" "$work/unknown_cpu.c" -ldl || { echo "cannot build the preload"; exit 1; }
unknown=LD_PRELOAD="$work/unknown_cpu.so${LD_PRELOAD:+:$LD_PRELOAD}"
generic='Katmai|Coppermine|Northwood|Prescott|Banias|Core2|Penryn|Dunnington|Nehalem|Atom|Sandybridge|Opteron|Barcelona|Bobcat'
# kernels ENV...: the start-up table's "BLAS kernels" value of a 2-rank, 1-step run.
kernels() {
  env -u OPENBLAS_CORETYPE -u ZEROPP_BLAS_CORETYPE_CHOSEN "$@" timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train \
    inputs/default.toml "${tiny[@]}" --train.steps=1 --train.val_every=0 --train.out_dir="$work/run" --overwrite \
    > "$work/out" 2>&1 || { echo "run failed:"; cat "$work/out"; }
  sed -nE 's/^  BLAS kernels +: (.*)$/\1/p' "$work/out"
}

got=$(kernels)
if [[ -n $got && ! $got =~ ^($generic)( |$) ]] && ! grep -q '^warning: BLAS' "$work/out"; then
  ok "bare launch: '$got', no warning"
else bad "bare launch: '$got' (generic kernels, or none reported)"; grep -E 'BLAS|warning' "$work/out"; fi

for set in unset empty; do
  if [[ $set == unset ]]; then got=$(kernels "$unknown"); else got=$(kernels "$unknown" OPENBLAS_CORETYPE=); fi
  if [[ $got == "$want (OPENBLAS_CORETYPE chosen from the CPU's flags)" ]] && ! grep -q '^warning: BLAS' "$work/out"; then
    ok "a CPU OpenBLAS does not know, OPENBLAS_CORETYPE $set: restarted with '$got'"
  else bad "a CPU OpenBLAS does not know, OPENBLAS_CORETYPE $set: '$got', expected $want chosen by zeropp"
    grep -E 'BLAS|warning' "$work/out"; fi
done

got=$(kernels "$unknown" OPENBLAS_CORETYPE=Prescott)
if [[ $got == Prescott ]] && grep -q "^warning: BLAS runs its generic Prescott kernels .*OPENBLAS_CORETYPE=$want" "$work/out"; then
  ok "the user's OPENBLAS_CORETYPE=Prescott is kept, with the warning"
else bad "OPENBLAS_CORETYPE=Prescott: '$got', or no warning"; grep -E 'BLAS|warning' "$work/out"; fi
finish
