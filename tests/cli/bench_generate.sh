#!/usr/bin/env bash
# `zeropp bench generate` on a tiny model, 4 ranks as 2 nodes x 2, links off:
# a row for every weight source; the quantized copies and hpZ + int4 send at
# least 8x fewer inter-node bytes per generated token than ZeRO-3's per-use
# gathers (here on 8 tokens); int4 holds a smaller copy
# than int8; a bad source is one clear line. About 10 s on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
log="$work/bench.log"
args=(inputs/default.toml "${tiny[@]}" --zero.ranks_per_node=2 --train.out_dir="$work/out" --prompt-tokens 4
      --new-tokens 8 --repeats 1 --bandwidths 0)
OMP_NUM_THREADS=1 timeout 120 "$MPIEXEC" -n 4 "$ZEROPP" bench generate "${args[@]}" < /dev/null > "$log" 2>&1 ||
  { bad "bench generate failed"; tail -5 "$log"; }
# field($weights, $column): columns 5 tokens/s, 6 intra B/token, 7 inter B/token, 8 copy MB
field() { awk -F' *[|] *' -v w="$1" -v c="$2" '$3 == w && $4 == 0 { print $c }' "$log"; }
for w in zero3 hpz int8 int4 hpz+int8 hpz+int4; do
  [[ -n $(field "$w" 5) ]] && ok "$w: a row" || bad "$w: no row"
done
z3=$(field zero3 7)
for w in int8 int4 hpz+int4; do
  x=$(field "$w" 7)
  if [[ -n $x && -n $z3 ]] && awk -v x="$x" -v z="$z3" 'BEGIN { exit !(x > 0 && 8 * x <= z) }'; then
    ok "$w: inter-node bytes per token $x, at least 8x fewer than ZeRO-3's $z3"
  else
    bad "$w: inter-node bytes per token '$x' not 8x below ZeRO-3's '$z3'"
  fi
done
c8=$(field int8 8) c4=$(field int4 8)
if [[ -n $c8 && -n $c4 ]] && awk -v a="$c4" -v b="$c8" 'BEGIN { exit !(a < b) }'; then
  ok "int4's copy ($c4 MB) is smaller than int8's ($c8 MB)"
else
  bad "int4's copy '$c4' MB not below int8's '$c8' MB"
fi
out=$("$MPIEXEC" -n 1 "$ZEROPP" bench generate inputs/default.toml "${tiny[@]}" --weights hpz,int2 2>&1)
rc=$?
if ((rc != 0)) && grep -q "zero.inference_weights = 'int2'" <<< "$out"; then
  ok "an unknown weight source: one clear line, exit $rc"
else
  bad "an unknown weight source: rc $rc, '$out'"
fi
finish
