#!/usr/bin/env bash
# scaling/recovery.sh: training under failures, measured as torchft reports
# it. The default deck on 4 ranks as 2 nodes x 2, asynchronous checkpoints
# every EVERY steps, under scripts/supervise (a constant 0.5 s back-off),
# while a random rank is killed (SIGKILL) every F seconds, for each F given.
# The steps of each run are chosen for about FAILURES kills, from the steady
# step time of a first, uninterrupted run.
#
# Per F: training efficiency (steps x steady step time / wall time of the
# supervised run; the steady step time is the median of that run's own step
# lines, the first step of each attempt left out, so that it is measured under
# the load the run itself saw: this machine's load drifts between runs), the
# steps lost per failure (the last step logged before a
# kill minus the step resumed from), and the restart time from the kill to
# the first resumed step, in parts: detection (kill to the next attempt,
# with the back-off), start-up (attempt to the resolved configuration: MPI,
# devices, model, data), load (to the "resume: step" line: the choice of
# `--resume auto`, which verifies the newest checkpoint, and the reads,
# ZEROPP_CKPT_TIMING) and the first step (its gathers included).
#   scaling/recovery.sh [FAILURES [EVERY [F...]]]   (defaults 4 10 30 60 120)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ZEROPP_BUILD_DIR:-$root/build}"
failures=${1:-4} every=${2:-10}
shift $(($# < 2 ? $# : 2))
periods=("$@")
((${#periods[@]})) || periods=(30 60 120)
cd "$root"
export LD_PRELOAD="$build/lib/libzeropp_yield.so" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 ZEROPP_CKPT_TIMING=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
stamp() { "$py" -u -c 'import sys, time
for line in sys.stdin: print(f"{time.time():.3f} {line}", end="", flush=True)'; }
launch() {  # launch OUT_DIR STEPS: the run's command line, into cmd
  cmd=(mpiexec -n 4 "$build/bin/zeropp" train inputs/default.toml --zero.ranks_per_node=2 --train.steps="$2" \
    --train.sample_tokens=0 --train.val_every=0 --log.every=1 --checkpoint.every="$every" \
    --checkpoint.async=true --train.out_dir="$1")
}

# The steady step time, uninterrupted: only to size the runs.
launch "$work/calibrate" 30
"${cmd[@]}" > "$work/calibrate.log" 2>&1
step_ms=$(sed -n 's/.*steady state: \([0-9.]*\) ms\/step.*/\1/p' "$work/calibrate.log" | head -1)
echo "steady step ${step_ms} ms (30 steps, uninterrupted); load: $(uptime | sed 's/.*load average: //')"

for f in "${periods[@]}"; do
  steps=$("$py" -c "print(max(2 * $every, round($failures * $f / ($step_ms / 1e3))))")
  out="$work/run_$f"
  launch "$out" "$steps"
  "$root/scripts/supervise" --restarts $((4 * failures)) --backoff 0.5 --max-backoff 0.5 -- "${cmd[@]}" 2>&1 |
    stamp > "$work/run_$f.log" &
  supervisor=$!
  while kill -0 "$supervisor" 2> /dev/null; do
    sleep "$f" &
    wait $! || true
    mapfile -t pids < <(pgrep -f -- "^$build/bin/zeropp train .*--train.out_dir=$out( |\$)")
    ((${#pids[@]})) || continue
    kill -KILL "${pids[RANDOM % ${#pids[@]}]}" 2> /dev/null && echo "$(date +%s.%N) kill" >> "$work/kills_$f"
  done
  wait "$supervisor" || true
  "$py" - "$f" "$steps" "$work/run_$f.log" "$work/kills_$f" << 'PY'
import re, statistics, sys
f, steps = int(sys.argv[1]), int(sys.argv[2])
lines = [l.split(" ", 1) for l in open(sys.argv[3]).read().splitlines() if " " in l]
try:
    kills = [float(l.split()[0]) for l in open(sys.argv[4])]
except FileNotFoundError:
    kills = []
segments = []  # one per attempt: its lines
for t, text in lines:
    if re.match(r"supervise: \S+ attempt ", text):
        segments.append([])
    if segments:
        segments[-1].append((float(t), text))
done = any("exit status 0: done" in text for _, text in lines)
wall = float(lines[-1][0]) - segments[0][0][0]
lost, parts = [], []
for prev, seg in zip(segments, segments[1:]):
    last = [int(m.group(1)) for _, x in prev for m in [re.match(r"step (\d+)/", x)] if m]
    t0 = seg[0][0]
    kill = max([k for k in kills if k < t0], default=t0)
    cfg = next((t for t, x in seg if x.startswith("resolved configuration")), None)
    res = next(((t, int(m.group(1))) for t, x in seg for m in [re.match(r"resume: step (\d+) from", x)] if m), None)
    if cfg is None or res is None:  # killed again before it resumed
        continue
    first = next((t for t, x in seg if t > res[0] and re.match(r"step \d+/", x)), None)
    reads = sum(float(m.group(1)) for t, x in seg if cfg <= t <= res[0]
                for m in [re.search(r"checkpoint read:.*total ([\d.]+) s", x)] if m)
    if last:
        lost.append(last[-1] - res[1])
    if first is not None:
        load = res[0] - cfg
        parts.append((t0 - kill, cfg - t0, load - reads, reads, first - res[0], first - kill))
# Each attempt's steps after its first (which gathers everything from cold).
step_ms = statistics.median(float(m.group(1)) for seg in segments
                            for _, x in [l for l in seg if re.match(r"step \d+/", l[1])][1:]
                            for m in [re.search(r"\| ([\d.]+) ms \|", x)] if m)
eff = steps * step_ms / 1e3 / wall
mean = lambda i: statistics.mean(p[i] for p in parts) if parts else float("nan")
print(f"| {f} s | {len(segments) - 1} | {steps} | {step_ms:.0f} | {wall:.0f} s | {100 * eff:.1f}% | "
      f"{statistics.mean(lost) if lost else float('nan'):.1f} | {mean(5):.2f} s | {mean(0):.2f} | {mean(1):.2f} | "
      f"{mean(2):.2f} | {mean(3):.3f} | {mean(4):.2f} |" + ("" if done else " (did not finish)"))
PY
done | {
  echo "| F | failures | steps | step ms | wall | efficiency | steps lost per failure | restart (kill to first step) |" \
    "detection + back-off s | start-up s | choice of auto (verify) s | reads s | first step s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  cat
}
echo "load after: $(uptime | sed 's/.*load average: //')"
