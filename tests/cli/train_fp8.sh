#!/usr/bin/env bash
# qwZ with fp8 (e4m3) weight gathers end to end: the tiny model, 4 ranks as 2
# nodes x 2, 4 steps with zero.weight_format = "fp8" and with int8: the start-up
# table names the format, every step's loss is finite, and every step's
# cross-node bytes (xnode) equal int8's (one byte per element plus the same
# scales). A deck asking for fp8 at 4 bits is refused in one line naming both
# keys, before its run folder is made. About 15 s on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
export OMP_NUM_THREADS=1
run() {  # run NAME ARGS...: 4 steps into $work/NAME, the output in $work/NAME.log
  local name=$1
  shift
  timeout 300 "$MPIEXEC" -n 4 "$ZEROPP" train inputs/default.toml "${tiny[@]}" --zero.ranks_per_node=2 \
    --zero.quantized_weights=true --train.steps=4 --log.every=1 --train.out_dir="$work/$name" "$@" \
    < /dev/null > "$work/$name.log" 2>&1
}
# field LOG NAME: the value after NAME on each step line ("loss 2.3 |", "xnode 7.58 MB").
field() { sed -n "s/^step [0-9]*\/4 .* $2 \([^ ]*\) .*/\1/p" "$1"; }
run fp8 --zero.weight_format=fp8 || { bad "fp8 run failed"; tail -5 "$work/fp8.log"; }
run int8 || { bad "int8 run failed"; tail -5 "$work/int8.log"; }
grep -q "qwZ fp8 e4m3 block 256" "$work/fp8.log" && ok "start-up table: qwZ fp8 e4m3 block 256" ||
  bad "start-up table does not name fp8"
losses=$(field "$work/fp8.log" loss)
if [[ $(wc -l <<< "$losses") -eq 4 ]] && awk '{ if (!($1 + 0 == $1 && $1 > 0 && $1 < 10)) exit 1 }' <<< "$losses"; then
  ok "fp8: 4 finite losses ($(tr '\n' ' ' <<< "$losses"))"
else
  bad "fp8: losses '$losses'"
fi
xf=$(field "$work/fp8.log" xnode) xi=$(field "$work/int8.log" xnode)
if [[ -n $xf && $(wc -l <<< "$xf") -eq 4 && $xf == "$xi" ]]; then
  ok "fp8: xnode per step as int8's ($(tr '\n' ' ' <<< "$xf")MB)"
else
  bad "fp8: xnode '$xf' vs int8 '$xi'"
fi
out=$("$MPIEXEC" -n 1 "$ZEROPP" train inputs/default.toml "${tiny[@]}" --zero.weight_format=fp8 \
  --zero.weight_bits=4 --train.out_dir="$work/refused" 2>&1)
rc=$?
if ((rc != 0)) && [[ $(wc -l <<< "$out") -eq 1 ]] && grep -q "zero.weight_format.*zero.weight_bits" <<< "$out" &&
  [[ ! -e $work/refused ]]; then
  ok "fp8 with weight_bits 4: one line naming both keys, exit $rc, no run folder ($out)"
else
  bad "fp8 with weight_bits 4: rc $rc, '$out'"
fi
finish
