#!/usr/bin/env bash
# The batch scripts under a real Slurm across two nodes: scripts/cluster's
# namespaces zpc-n0 and zpc-n1 (1 Gbit/s links), slurmctld in the switch and a
# slurmd on each node (tests/slurm/local-slurm.bash: munged, slurmctld, slurmd
# from Debian, all state in a temporary folder, installed first if missing),
# and checks
#  1. jobs/slurm/train.sbatch on 2 nodes of 2 ranks (srun --mpi=pmi2): zeropp
#     detects the nodes by host name (P=4 X=2 Y=2 (nodes zpc-n0, zpc-n1)); the
#     pre-walltime signal as Slurm delivers it with --signal=B:USR1
#     (scancel --batch --signal=USR1: to the batch shell only) reaches the
#     script's trap, which forwards it to the ranks on both nodes; zeropp saves
#     a checkpoint and exits 3; the script requeues the job; the second run
#     resumes from that checkpoint ("resume: step N") and finishes;
#  2. the same signal sent by Slurm itself: --time=1 --signal=B:USR1@50 (no
#     requeue: ZEROPP_MAX_REQUEUES=0), one node;
#  3. jobs/slurm/train-gpu.sbatch on two stand-in GPUs (--gpus-per-node=2,
#     srun --gpus-per-task=1 --gpu-bind=none --cpu-bind=cores, --train.device=cuda
#     overridden by --train.device=host: the GPUs are not real): the job runs to the end;
#  4. jobs/pbs/train.pbs through Slurm's PBS wrappers (qsub, qstat from
#     slurm-wlm-torque; sbatch reads the #PBS lines): --train.max_runtime
#     computed from the walltime, the stop with a checkpoint, the resubmission
#     (qsub -W depend=afterany:...) and the resumed run to the end. Not
#     covered: a real PBS server, $PBS_NODEFILE, PBS's own qstat output and
#     SIGTERM timing, "#PBS -r y" (sbatch ignores it);
#  5. a node lost: every rank on zpc-n1 killed (kill -9) mid-run ends the
#     2-node job with a non-zero status, the last checkpoint intact; the same
#     script submitted again on the remaining node (-N 1, 2 ranks) resumes from
#     it, resharded from P=4 to P=2, and finishes;
#  6. srun --distribution=cyclic across the two nodes is refused in one line
#     naming srun --distribution=block;
#  7. afterwards no daemon, namespace, link or qdisc is left.
# All jobs are submitted at once and run side by side (each node offers 8
# CPUs, config_overrides). Steps are slowed to >= ~50 ms by an emulated
# 0.01 Gbit/s link between nodes (emulated nodes on one-node jobs), so that
# the timing does not depend on the machine's load. The daemons are stopped by their PIDs whatever happens
# (EXIT trap), and the whole test stays well inside an internal deadline
# (ctest's TIMEOUT is a last resort). Needs root (exit 77, skipped, otherwise).
set -uo pipefail
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIPPED: the Slurm test runs slurmctld and slurmd as root"
  exit 77
fi
if [[ ${ZEROPP_MPI_FLAVOUR:-mpich} != mpich ]]; then
  echo "SKIPPED: the job scripts launch MPICH's way (srun --mpi=pmi2, hydra's -genv); MPI here: $ZEROPP_MPI_FLAVOUR"
  exit 77
fi
unset LD_PRELOAD  # never into the daemons; the job scripts preload for the ranks
export OPENBLAS_NUM_THREADS=1
# shellcheck source=tests/slurm/local-slurm.bash
source "$here/local-slurm.bash"
cd "$ZEROPP_SOURCE_DIR" || exit 1

# Outside the cluster: install (the namespaces reach no network), run this
# script inside it, then check that its teardown left nothing behind.
if [[ -z ${ZEROPP_CLUSTER:-} ]]; then
  slurm_local_install || { echo "FAIL could not install Slurm"; exit 1; }
  [[ -s data/kjv/train.bin ]] || { echo "FAIL data/kjv/train.bin missing: run scripts/prepare-corpus"; exit 1; }
  ZEROPP_SLURM_WORK=$(mktemp -d "${TMPDIR:-/tmp}/zeropp-slurm.XXXXXX")
  export ZEROPP_SLURM_WORK
  scripts/cluster run 2 1 bash "${BASH_SOURCE[0]}"
  rc=$?
  ((rc == 77)) && exit 77
  slurm_local_dir=$ZEROPP_SLURM_WORK
  left=$(slurm_local_leftovers | tr '\n' ' ')
  nets=$(ip netns list | awk '$1 ~ /^zpc-/ {print $1}' | tr '\n' ' ')
  links=$(ip -o link show | awk -F': ' '$2 ~ /^(br0|n[0-9]+)(@|$)/ {print $2}' | tr '\n' ' ')
  rm -rf "$ZEROPP_SLURM_WORK"
  if [[ -n $left$nets$links ]]; then
    echo "FAIL teardown left processes '$left', namespaces '$nets', links '$links'"
    exit 1
  fi
  echo "ok   teardown: no daemon, job process, namespace or link left (qdiscs went with the links)"
  exit "$rc"
fi

work=${ZEROPP_SLURM_WORK:?}
fails=0 passes=0
deadline=$((SECONDS + 240))
ok() { echo "ok   $1"; passes=$((passes + 1)); }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
dump() {
  local f
  echo "---- job logs, scheduler state and daemon logs ($work) ----"
  for f in "$work"/*.out; do
    [[ -e $f ]] || continue
    echo "== $f (steps and the resolved deck left out)"
    grep -v -E '^step [0-9]+/|^[a-z_0-9]+ = |^  |^$' "$f" | tail -n 60
  done
  timeout 10 scontrol show jobs 2> /dev/null | grep -E 'JobId|JobState|Restarts|ExitCode|TimeLimit|Dependency'
  tail -n 25 "$work/log/"*.log 2> /dev/null
}
cleanup() {
  local rc=$?
  ((fails || rc)) && dump
  slurm_local_stop
  if ((fails)); then
    echo "$fails check(s) failed, $passes passed"
    exit 1
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "FAIL interrupted"; exit 1' INT TERM HUP

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s
wait_for() {
  local limit=$1 what=$2 end
  shift 2
  end=$((SECONDS + limit))
  ((end > deadline)) && end=$deadline
  until "$@"; do
    if ((SECONDS >= end)); then
      bad "timed out after ${limit} s waiting for $what"
      return 1
    fi
    sleep 0.2
  done
}
field() { timeout 10 scontrol show job "$1" 2> /dev/null | grep -o -E "(^| )$2=[^ ]*" | head -n 1 | cut -d= -f2-; }
state_is() { [[ $(field "$1" JobState) == "$2" ]]; }
ended() { [[ $(field "$1" JobState) =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]]; }
in_log() { grep -q -E "$2" "$1" 2> /dev/null; }
stop_step() { sed -n -E 's/^stopping at step ([0-9]+) .*/\1/p' "$1" | head -n 1; }
ckpt() { printf '%s/checkpoints/step_%08d.h5' "$1" "$2"; }
verify() { timeout 60 "$ZEROPP" ckpt verify "$1" > "$work/verify.txt" 2>&1; }

# A small model, 0.01 Gbit/s between nodes: on two Slurm nodes (nodes2), or
# on one as 2 emulated nodes of one rank (slow).
nodes2=(--model.n_layer=1 --model.n_embd=32 --model.n_head=2 --model.max_seq_len=32 --train.batch_size=2
        --train.seq_len=32 --train.sample_tokens=0 --data.val= --comm.internode_gbps=0.01)
slow=("${nodes2[@]}" --zero.ranks_per_node=1)
export ZEROPP_BIN=$ZEROPP
[[ -n ${ZEROPP_YIELD_LIB:-} ]] && export ZEROPP_YIELD_LIB

export ZEROPP_SLURM_CPUS=8
slurm_local_start "$work" || { bad "could not start munged/slurmctld/slurmd"; exit 1; }
ok "private Slurm up after ${SECONDS} s (nodes $(sinfo -h -o %N) of $ZEROPP_SLURM_CPUS CPUs each, SLURM_CONF=$SLURM_CONF)"
sub=(sbatch --parsable --ntasks-per-node=2 --overcommit)

# 2 (submitted first: Slurm checks time limits every 30 s after slurmctld starts,
# so the warning comes ~25-30 s into this job, well before its 60-s limit).
timer=$("${sub[@]}" --output="$work/timer-%j.out" --time=1 --signal=B:USR1@50 --export=ALL,ZEROPP_MAX_REQUEUES=0 \
  jobs/slurm/train.sbatch inputs/default.toml "${slow[@]}" --log.every=50 --train.steps=100000 \
  --train.out_dir="$work/timer") || bad "sbatch (timer job) failed"

# 6 (submitted early: it fails at start-up). A cyclic distribution across the nodes.
cyc=$("${sub[@]}" -N 2 --output="$work/cyclic-%j.out" --export=ALL,ZEROPP_SRUN_ARGS=--distribution=cyclic \
  jobs/slurm/train.sbatch inputs/default.toml "${nodes2[@]}" --train.steps=1 --train.out_dir="$work/cyclic") ||
  bad "sbatch (cyclic) failed"

# Every job is submitted now and runs at once (each node offers more CPUs
# than it has: ZEROPP_SLURM_CPUS); the checks below then wait for them in turn.
# 3.
gjob=$("${sub[@]}" --output="$work/gpu-%j.out" --gpus-per-node=2 --cpus-per-task=1 jobs/slurm/train-gpu.sbatch \
  inputs/default.toml "${slow[@]}" --log.every=5 --train.steps=10 --train.out_dir="$work/gpu" --train.device=host) ||
  bad "sbatch (GPU) failed"
# 4: 60-s walltime - 50-s margin => max_runtime ~ 10 s; the resubmission asks
# for 5 minutes (ZEROPP_QSUB_ARGS) so that it finishes. The settings go with
# the job (qsub -V) and no further.
pbs_res=select=1:ncpus=1:mpiprocs=2
export SBATCH_OVERCOMMIT=1 ZEROPP_STOP_MARGIN=50 ZEROPP_DECK=inputs/default.toml
export ZEROPP_ARGS="${slow[*]} --log.every=1 --train.steps=250 --train.out_dir=$work/pbsrun"
export ZEROPP_QSUB_ARGS="-j oe -o $work/pbs-%j.out -l walltime=00:05:00,$pbs_res"
pjob=$(timeout 30 qsub -V -j oe -o "$work/pbs-%j.out" -l "walltime=00:01:00,$pbs_res" jobs/pbs/train.pbs)
unset SBATCH_OVERCOMMIT ZEROPP_STOP_MARGIN ZEROPP_DECK ZEROPP_ARGS ZEROPP_QSUB_ARGS
# 5 (checkpoints every 5 steps; the restart goes to step 40).
lost=(jobs/slurm/train.sbatch inputs/default.toml "${nodes2[@]}" --log.every=1 --train.steps=40 --checkpoint.every=5
      --train.out_dir="$work/lost")
kjob=$("${sub[@]}" -N 2 --output="$work/kill-%j.out" --export=ALL,ZEROPP_MAX_REQUEUES=0 "${lost[@]}") ||
  bad "sbatch (node lost) failed"
klog=$work/kill-$kjob.out
# Its ranks on zpc-n1 (not other jobs' there) die by SIGKILL after its step 8,
# in the background while the checks before 5 wait.
kill_node1() {
  local p victims="" i
  for ((i = 0; i < 900; i++)); do
    in_log "$klog" '^step 8/40 ' && break
    sleep 0.1
  done
  for p in $(ip netns pids zpc-n1); do
    [[ $(cat "/proc/$p/comm" 2> /dev/null) == zeropp ]] && grep -qzxF "SLURM_JOB_ID=$kjob" "/proc/$p/environ" &&
      victims+="$p "
  done
  # shellcheck disable=SC2086 # PIDs are words
  [[ -n $victims ]] && kill -9 $victims
  echo "$victims" > "$work/victims"
}
kill_node1 &
killer=$!

# 1. Two nodes: the layout, the pre-walltime signal, requeue, resume.
job=$("${sub[@]}" -N 2 --output="$work/train-%j.out" jobs/slurm/train.sbatch inputs/default.toml "${nodes2[@]}" \
  --log.every=1 --train.steps=200 --train.out_dir="$work/run") || { bad "sbatch failed"; exit 1; }
log=$work/train-$job.out
if wait_for 60 "job $job to reach step 10" in_log "$log" '^step 10/200 '; then
  row=$(grep -m1 '^  ranks ' "$log")
  if [[ $row == *"P=4 X=2 Y=2 (nodes zpc-n0, zpc-n1)"* ]] && in_log "$log" 'on 2 node\(s\), 4 ranks'; then
    ok "sbatch -N 2 --ntasks-per-node=2: srun --mpi=pmi2 on both nodes, detected by host name: ${row#*: }"
  else bad "sbatch -N 2: layout row '$row'"; fi
  timeout 10 scancel --batch --signal=USR1 "$job" || bad "scancel --batch --signal=USR1 $job failed"
  if wait_for 60 "job $job to checkpoint and requeue itself" in_log "$log" 'requeued|zeropp exited with status [^3]'; then
    n=$(stop_step "$log")
    if in_log "$log" 'SIGUSR1: asking the ranks' && in_log "$log" "^stopping at step $n \(signal\)" &&
      in_log "$log" 'zeropp exited with status 3' && in_log "$log" "job $job requeued"; then
      ok "sbatch: SIGUSR1 to the batch shell reached the trap and the ranks: stopped at step $n with status 3, requeued"
    else bad "sbatch: no signal-triggered stop with status 3 and requeue"; fi
    if [[ -n $n && -s $(ckpt "$work/run" "$n") ]]; then
      ok "sbatch: checkpoint $(basename "$(ckpt "$work/run" "$n")") written"
    else bad "sbatch: no checkpoint for step '$n' in $work/run/checkpoints"; fi
    restarts_is_1() { [[ $(field "$job" Restarts) == 1 ]]; }
    wait_for 20 "job $job to show Restarts=1" restarts_is_1 && ok "sbatch: scontrol shows Restarts=1"
  fi
  if wait_for 120 "the requeued job $job to finish" ended "$job"; then
    if state_is "$job" COMPLETED && [[ $(field "$job" ExitCode) == 0:0 ]] && in_log "$log" 'run 2 on' &&
      in_log "$log" "^resume: step $n from .*step_0*$n\.h5" && in_log "$log" '^step 200/200 ' &&
      in_log "$log" 'zeropp exited with status 0'; then
      first=$(grep -E '^step [0-9]+/200 ' "$log" | sed -n -E "/^step $n\/200 /{n;p}" | head -n 1)
      if [[ $first == "step $((n + 1))/200 "* ]]; then
        ok "sbatch: the second run resumed at step $n (next line: step $((n + 1))) and completed (exit 0:0)"
      else bad "sbatch: after step $n the log shows '${first:-nothing}'"; fi
    else bad "sbatch: the requeued run did not resume from step $n and complete ($(field "$job" JobState) $(field "$job" ExitCode))"; fi
    if verify "$(ckpt "$work/run" "$n")"; then ok "sbatch: zeropp ckpt verify accepts the step-$n checkpoint"
    else bad "sbatch: ckpt verify of step $n"; cat "$work/verify.txt"; fi
  fi
fi

# 2. Slurm's own --signal=B:USR1@50.
if [[ -n $timer ]] && wait_for 90 "timer job $timer to end" ended "$timer"; then
  tlog=$work/timer-$timer.out
  m=$(stop_step "$tlog")
  if in_log "$tlog" 'SIGUSR1: asking the ranks' && [[ -n $m ]] && in_log "$tlog" "^stopping at step $m \(signal\)" &&
    in_log "$tlog" 'not requeued: 0 restarts' && [[ -s $(ckpt "$work/timer" "$m") ]] &&
    [[ $(field "$timer" ExitCode) == 3:0 ]]; then
    ok "sbatch --time=1 --signal=B:USR1@50: Slurm's warning stopped the run at step $m with a checkpoint, status 3, not requeued (ZEROPP_MAX_REQUEUES=0)"
  else bad "sbatch --signal=B:USR1@50: no signal-triggered checkpoint and exit 3 ($(field "$timer" JobState) $(field "$timer" ExitCode))"; fi
fi

# 3. The GPU variant on stand-in GPUs.
if [[ -n $gjob ]] && wait_for 60 "GPU job $gjob to end" ended "$gjob"; then
  glog=$work/gpu-$gjob.out
  if state_is "$gjob" COMPLETED && in_log "$glog" 'srun --mpi=pmi2 .*--cpu-bind=cores --gpus-per-task=1 --gpu-bind=none .* --train.device=cuda ' &&
    in_log "$glog" '^step 10/10 '; then
    ok "train-gpu.sbatch: --gpus-per-node=2, 2 ranks, srun --cpu-bind=cores --gpus-per-task=1 --gpu-bind=none, --train.device=cuda (overridden: host): completed"
  else bad "train-gpu.sbatch did not complete ($(field "$gjob" JobState) $(field "$gjob" ExitCode))"; fi
fi

# 4. PBS through Slurm's qsub.
if [[ $pjob =~ ^[0-9]+$ ]]; then
  # sbatch translates #PBS -l walltime/select but ignores "#PBS -r y" (Slurm 22.05):
  # Requeue is reported, not checked; train.pbs resubmits rather than requeues.
  if [[ $(field "$pjob" TimeLimit) == 00:01:00 && $(field "$pjob" NumTasks) == 2 ]]; then
    ok "qsub: -l walltime/select arrive as TimeLimit=00:01:00, NumTasks=2 (#PBS -r y: Requeue=$(field "$pjob" Requeue))"
  else bad "qsub: TimeLimit=$(field "$pjob" TimeLimit) NumTasks=$(field "$pjob" NumTasks)"; fi
  plog=$work/pbs-$pjob.out
  if wait_for 90 "PBS job $pjob to end" ended "$pjob"; then
    k=$(stop_step "$plog")
    rt=$(sed -n -E 's/.*--train\.max_runtime=([0-9]+).*/\1/p' "$plog" | head -n 1)
    p2=$(sed -n -E 's/.*resubmitted as job ([0-9]+).*/\1/p' "$plog" | head -n 1)
    if [[ -n $rt ]] && ((rt >= 1 && rt <= 10)) && [[ -n $k ]] && in_log "$plog" "^stopping at step $k \(train.max_runtime\)" &&
      in_log "$plog" 'zeropp exited with status 3' && [[ -s $(ckpt "$work/pbsrun" "$k") ]] && [[ -n $p2 ]]; then
      ok "train.pbs: --train.max_runtime=$rt from qstat's walltime; stopped at step $k with a checkpoint; resubmitted as job $p2"
    else bad "train.pbs: no max_runtime stop with checkpoint and resubmission (max_runtime '$rt', step '$k', job '$p2')"; fi
    if [[ -n $p2 ]] && wait_for 120 "resubmitted PBS job $p2 to end" ended "$p2"; then
      plog2=$work/pbs-$p2.out
      if state_is "$p2" COMPLETED && in_log "$plog2" 'resubmission 1' && in_log "$plog2" "^resume: step $k from" &&
        in_log "$plog2" '^step 250/250 ' && in_log "$plog2" 'mpiexec -n 2 '; then
        ok "train.pbs: the resubmitted job (mpiexec inside the allocation) resumed at step $k and completed"
      else bad "train.pbs: the resubmitted job did not resume at step $k and complete ($(field "$p2" JobState))"; fi
    fi
  fi
else bad "qsub failed: $pjob"; fi

# 5. A node lost: the job's ranks on zpc-n1 killed after step 8.
if [[ -n $kjob ]]; then
  wait "$killer"
  victims=$(< "$work/victims")
  [[ -n $victims ]] || bad "node lost: job $kjob had no ranks on zpc-n1 to kill after step 8"
  if wait_for 60 "job $kjob to end after its node-1 ranks were killed" ended "$kjob"; then
    last=$(find "$work/lost/checkpoints" -name 'step_*.h5' 2> /dev/null | sort | tail -n 1)
    ks=$(basename "${last:-x}" .h5)
    ks=$((10#${ks#step_}))
    # srun --kill-on-bad-exit=1 (the job script's) names the node and its tasks, then ends the rest.
    if [[ $(field "$kjob" ExitCode) != 0:0 && -n $last ]] && ((ks >= 5)) && verify "$work/lost" &&
      in_log "$klog" '^srun: error: zpc-n1: tasks 2-3: Killed'; then
      ok "node lost: zpc-n1's ranks killed (PIDs ${victims% }): 'srun: error: zpc-n1: tasks 2-3: Killed'; job $kjob $(field "$kjob" JobState) $(field "$kjob" ExitCode); step-$ks checkpoint verifies"
    else bad "node lost: job $kjob $(field "$kjob" JobState) $(field "$kjob" ExitCode), last checkpoint '$last'"; fi
    rjob=$("${sub[@]}" -N 1 --output="$work/rest-%j.out" "${lost[@]}") || bad "sbatch (restart on one node) failed"
    rlog=$work/rest-$rjob.out
    if [[ -n $rjob ]] && wait_for 90 "restart job $rjob to end" ended "$rjob"; then
      if state_is "$rjob" COMPLETED && in_log "$rlog" '^resume: resharding from P=4 X=2 to P=2' &&
        in_log "$rlog" "^resume: step $ks from .*step_0*$ks\.h5" && in_log "$rlog" '^step 40/40 '; then
        ok "node lost: the restart on one node (2 ranks) resumed at step $ks, resharded from P=4 X=2, and completed"
      else bad "node lost: the restart job $rjob did not resume at step $ks resharded and complete ($(field "$rjob" JobState))"; fi
    fi
  fi
fi

# 6. The cyclic distribution's refusal.
if [[ -n $cyc ]] && wait_for 30 "cyclic job $cyc to end" ended "$cyc"; then
  clog=$work/cyclic-$cyc.out
  msg=$(grep -E '^zeropp: ' "$clog" | grep -v 'MPI_Finalize did not return')
  if [[ $(field "$cyc" ExitCode) != 0:0 && $(grep -c . <<< "$msg") -eq 1 && $msg == *"not placed node-major"*"srun --distribution=block"* ]]; then
    ok "srun --distribution=cyclic on 2 nodes refused in one line: ${msg#zeropp: }"
  else bad "srun --distribution=cyclic: $(field "$cyc" ExitCode), '$msg'"; fi
fi

echo "$passes checks passed, $fails failed, ${SECONDS} s"
