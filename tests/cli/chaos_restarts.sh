#!/usr/bin/env bash
# Failures as routine: a full ZeRO++ run (qwZ, hpZ over the node, qgZ with
# error feedback) on 4 ranks as 2 nodes x 2 with asynchronous checkpoints,
# under scripts/supervise, while a random rank is killed (SIGKILL) at random
# moments, ZEROPP_CHAOS_KILLS times (default 3). The run must finish, and its
# final weights, Adam moments and error-feedback buffers must equal bit for
# bit those of an uninterrupted run of the same steps. Every
# ZEROPP_CHAOS_NODE_EVERY-th kill (default 3; 0: none) kills instead both
# ranks of a random emulated node at once, as a lost node would.
# ZEROPP_CHAOS_SEED repeats a sequence of kills (the seed in use is printed).
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
py=/usr/bin/python3
kills=${ZEROPP_CHAOS_KILLS:-3}
node_every=${ZEROPP_CHAOS_NODE_EVERY:-3}
seed=${ZEROPP_CHAOS_SEED:-$((($(date +%s%N) / 1000) % 32768))}
RANDOM=$seed
echo "chaos seed $seed ($kills kills; ZEROPP_CHAOS_NODE_EVERY=$node_every)"
steps=300  # every kill comes within ~20 steps of its attempt's start: the run is still going
run=(--model.n_layer=1 --model.n_embd=32 --model.n_head=2 --model.max_seq_len=32 --train.batch_size=2
     --train.seq_len=32 --train.sample_tokens=0 --data.val= --log.every=1 --train.steps=$steps
     --zero.ranks_per_node=2 --zero.weight_block=32 --zero.gradient_block=32 --zero.quantized_weights=true
     --zero.hpz_partition_size=0 --zero.quantized_gradients=true --zero.gradient_error_feedback=true
     --checkpoint.every=2 --checkpoint.async=true)
launch() {  # launch OUT_DIR: the run's command line
  echo "$MPIEXEC" -n 4 "$ZEROPP" train inputs/default.toml "${run[@]}" --train.out_dir="$1"
}

# The uninterrupted reference.
# shellcheck disable=SC2046
timeout 300 $(launch "$work/ref") > "$work/ref.log" 2>&1 || { bad "reference run"; tail -3 "$work/ref.log"; }

# The same under supervision, with kills: each waits for the attempt running
# to take a random number of steps (1 to 6), then a random moment up to 90 ms
# more (a save, every 2 steps, may be in flight or being committed; an absolute
# wait longer than that let a fast machine finish the run before the last
# kill), and kills a random rank
# (or a node's). The back-off is capped at 1 s: doubled after each of many
# restarts it would outlast the kill loop's wait for the next attempt.
out="$work/chaos"
# shellcheck disable=SC2046
timeout 600 "$ZEROPP_SOURCE_DIR/scripts/supervise" --restarts $((kills + 2)) --backoff 0.2 --max-backoff 1 -- \
  $(launch "$out") > "$work/chaos.log" 2>&1 &
supervisor=$!
ranks_of() { pgrep -f -- "^$ZEROPP train .*--train.out_dir=$out( |\$)"; }
node_of() {  # node_of PID: its emulated node (2 ranks a node, node-major), from the launcher's PMI_RANK
  local r
  r=$(tr '\0' '\n' < "/proc/$1/environ" 2> /dev/null | sed -n 's/^PMI_RANK=//p')
  [[ -n $r ]] && echo $((r / 2))
}
attempts() { grep -c '^supervise: .* attempt ' "$work/chaos.log"; }
killed=0
for ((k = 0; k < kills; ++k)); do
  for _ in $(seq 300); do  # the next attempt has started
    (($(attempts) > killed)) && break
    sleep 0.1
  done
  first=$(grep -n '^supervise: .* attempt ' "$work/chaos.log" | tail -1 | cut -d: -f1)
  want=$((1 + RANDOM % 6))
  for _ in $(seq 600); do
    (($(tail -n +"${first:-1}" "$work/chaos.log" | grep -c '^step ') >= want)) && break
    kill -0 "$supervisor" 2> /dev/null || break
    sleep 0.1
  done
  sleep "0.0$((RANDOM % 10))"
  mapfile -t pids < <(ranks_of)
  ((${#pids[@]})) || break  # the run is over
  victims=("${pids[RANDOM % ${#pids[@]}]}") what="one of ${#pids[@]} rank processes"
  if ((node_every > 0 && (k + 1) % node_every == 0)); then
    node=$((RANDOM % 2)) victims=()
    for p in "${pids[@]}"; do [[ $(node_of "$p") == "$node" ]] && victims+=("$p"); done
    what="the ${#victims[@]} ranks of node $node"
  fi
  if ((${#victims[@]})) && kill -KILL "${victims[@]}" 2> /dev/null; then
    killed=$((killed + 1))
    echo "kill $killed: $what after $want+ steps of attempt $(attempts)"
  fi
done
wait "$supervisor"
rc=$?
restarts=$(grep -c 'restart [0-9]* of' "$work/chaos.log")
if [[ $rc -eq 0 && $killed -eq $kills && $restarts -eq $killed ]]; then
  ok "supervised run finished after $killed kills and $restarts restarts ($(grep -o '^resume: step [0-9]*' \
    "$work/chaos.log" | tr '\n' ' '| sed 's/resume: step/from/g'))"
else
  bad "supervised run: rc=$rc, $killed of $kills kills, $restarts restarts"
  grep -E '^supervise|error' "$work/chaos.log" | tail -8
fi

final=checkpoints/$(printf 'step_%08d.h5' $steps)
if "$py" - "$work/ref/$final" "$out/$final" << 'PY'; then
import h5py, sys, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and not n.startswith("state") else None)
groups = {n.split("/")[0] for n in names}
assert groups == {"model", "optimizer", "error_feedback"}, groups
for n in names:
    assert np.array_equal(a[n][()].view(np.uint32), b[n][()].view(np.uint32)), n
print(len(names), "datasets bitwise equal")
PY
  ok "final weights, Adam moments and error-feedback buffers bit for bit those of the uninterrupted run"
else
  bad "the final checkpoint differs from the uninterrupted run's"
fi
finish
