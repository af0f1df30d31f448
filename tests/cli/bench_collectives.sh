#!/usr/bin/env bash
# `zeropp bench collectives` on a tiny model, 4 ranks as 2 nodes x 2, with the
# inter-node link off and at an emulated 0.01 Gbit/s: a row per collective kind
# for ZeRO-3 and every ZeRO++ variant; qwZ (int8 and fp8) and hpZ send fewer
# inter-node all-gather bytes than ZeRO-3, qwZ fp8 exactly as many as int8; at 0.01 Gbit/s ZeRO-3's all-gathers wait at
# least half the closed form (the two ranks that send across nodes each send
# half the inter-node bytes, one message after the other); a bad list is one
# clear line. About 15 s on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
export OMP_NUM_THREADS=1
log="$work/bench.log"
if ! timeout 120 "$MPIEXEC" -n 4 "$ZEROPP" bench collectives inputs/default.toml "${tiny[@]}" \
  --zero.ranks_per_node=2 --train.out_dir="$work/out" --steps 1 --bandwidths 0,0.01 < /dev/null > "$log" 2>&1; then
  bad "bench collectives failed"
  tail -5 "$log"
fi
# field($variant, $gbps, $kind, $column): columns 7 time ms, 8 intra MB, 9 inter MB
field() { awk -F' *[|] *' -v v="$1" -v g="$2" -v k="$3" -v c="$4" '$3 == v && $4 == g && $6 == k { print $c }' "$log"; }
for v in ZeRO-3 qwZ "qwZ fp8" hpZ qgZ ZeRO++; do
  for g in 0 0.01; do
    if [[ -n $(field "$v" "$g" all-gather 7) ]]; then
      ok "$v at $g Gbit/s: all-gather row"
    else
      bad "$v at $g Gbit/s: no all-gather row"
    fi
  done
done
[[ -n $(field qgZ 0 all-to-all 7) ]] && ok "qgZ: all-to-all row" || bad "qgZ: no all-to-all row"
z3=$(field ZeRO-3 0 all-gather 9)
for v in qwZ "qwZ fp8" hpZ; do
  x=$(field "$v" 0 all-gather 9)
  if [[ -n $x && -n $z3 ]] && awk -v x="$x" -v z="$z3" 'BEGIN { exit !(x < z) }'; then
    ok "$v: inter-node all-gather bytes $x MB < ZeRO-3's $z3 MB"
  else
    bad "$v: inter-node all-gather bytes '$x' not below ZeRO-3's '$z3'"
  fi
done
int8=$(field qwZ 0 all-gather 9) fp8=$(field "qwZ fp8" 0 all-gather 9)
if [[ -n $int8 && $fp8 == "$int8" ]]; then
  ok "qwZ fp8: inter-node all-gather bytes $fp8 MB, as int8's (one byte per element + scales)"
else
  bad "qwZ fp8: inter-node all-gather bytes '$fp8' MB, int8 '$int8' MB"
fi
t=$(field ZeRO-3 0.01 all-gather 7) b=$(field ZeRO-3 0.01 all-gather 9)
if [[ -n $t && -n $b ]] && awk -v t="$t" -v b="$b" 'BEGIN { exit !(t >= 0.5 * (b / 2) * 8e6 / 1e7 * 1e3) }'; then
  ok "ZeRO-3 at 0.01 Gbit/s: all-gather wait $t ms >= half of (inter $b MB / 2 ranks) at 0.01 Gbit/s"
else
  bad "ZeRO-3 at 0.01 Gbit/s: all-gather wait '$t' ms below half the closed form of '$b' MB"
fi
out=$("$MPIEXEC" -n 1 "$ZEROPP" bench collectives inputs/default.toml "${tiny[@]}" --bandwidths 1,-2 2>&1)
rc=$?
if ((rc != 0)) && grep -q -- "--bandwidths: -2" <<< "$out"; then
  ok "a negative bandwidth: one clear line, exit $rc"
else
  bad "a negative bandwidth: rc $rc, '$out'"
fi
finish
