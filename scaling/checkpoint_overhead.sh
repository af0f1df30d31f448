#!/usr/bin/env bash
# scaling/checkpoint_overhead.sh: what checkpoints cost a run of the default
# deck on 4 ranks as 2 nodes x 2: runs without checkpoints, with synchronous
# and with asynchronous ones (checkpoint.every = EVERY), interleaved, ROUNDS
# times. Per run: the wall time of the loop (first to last step line, from
# the log's timestamps), the steady step time zeropp reports, and the time
# training was blocked per save (synchronous: the save's time; asynchronous:
# what the run's last lines report). Prints one row per run and the medians.
# ZEROPP_DECK (default inputs/default.toml) and ZEROPP_ARGS (more options,
# e.g. a smaller batch) choose the run.
#   scaling/checkpoint_overhead.sh [ROUNDS [STEPS [EVERY]]]   (defaults 3 100 10)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ZEROPP_BUILD_DIR:-$root/build}"
rounds=${1:-3} steps=${2:-100} every=${3:-10}
deck=${ZEROPP_DECK:-inputs/default.toml}
read -ra extra <<< "${ZEROPP_ARGS:-}"
cd "$root"
export LD_PRELOAD="$build/lib/libzeropp_yield.so" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # run MODE: prints "MODE loop_s steady_ms blocked_ms_per_save saves"
  local mode=$1 args=()
  case $mode in
    none) args=(--checkpoint.every=0 --checkpoint.at_end=false) ;;
    sync) args=(--checkpoint.every="$every" --checkpoint.at_end=false) ;;
    async) args=(--checkpoint.every="$every" --checkpoint.at_end=false --checkpoint.async=true) ;;
  esac
  rm -rf "$work/run"
  mpiexec -n 4 "$build/bin/zeropp" train "$deck" --zero.ranks_per_node=2 --train.steps="$steps" \
    --train.sample_tokens=0 --train.val_every=0 --log.every=1 --train.out_dir="$work/run" "${extra[@]}" \
    "${args[@]}" 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$work/log"
  /usr/bin/python3 - "$mode" "$work/log" << 'PY'
import re, statistics, sys
mode, lines = sys.argv[1], open(sys.argv[2]).read().splitlines()
steps = [float(l.split()[0]) for l in lines if re.match(r"\S+ step \d+/", l)]
steady = [float(m.group(1)) for l in lines for m in [re.search(r"steady state: ([\d.]+) ms/step", l)] if m]
sync = [float(m.group(1)) * 1e3 for l in lines for m in [re.search(r"saved to \S+ in ([\d.]+) s$", l)] if m]
asyn = [float(m.group(1)) for l in lines for m in [re.search(r"training blocked ([\d.]+) ms per save", l)] if m]
saves = len(sync) or len([l for l in lines if "(asynchronously;" in l])
blocked = statistics.mean(sync) if sync else (asyn[0] if asyn else 0.0)
print(f"{mode} {steps[-1] - steps[0]:.3f} {steady[0]:.1f} {blocked:.1f} {saves}")
PY
}
echo "mode loop_s steady_ms_per_step blocked_ms_per_save saves"
for ((r = 0; r < rounds; ++r)); do
  for mode in none sync async; do run "$mode"; done
done | tee "$work/rows"
/usr/bin/python3 - "$work/rows" "$steps" << 'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
steps = int(sys.argv[2])
med = {m: [statistics.median(float(r[i]) for r in rows if r[0] == m) for i in (1, 2, 3)] for m in ("none", "sync", "async")}
base = med["none"][0]
for m in ("sync", "async"):
    loop, steady, blocked = med[m]
    print(f"{m}: loop {loop:.2f} s vs {base:.2f} s without checkpoints: overhead {100 * (loop - base) / base:+.1f}%;"
          f" blocked {blocked:.1f} ms per save = {100 * blocked / (1e3 * base / (steps - 1)):.1f}% of a step;"
          f" steady step {steady:.1f} ms (none: {med['none'][1]:.1f})")
PY
