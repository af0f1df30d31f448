# tests/slurm/local-slurm.bash: a private Slurm on this machine, for tests
# (source it; needs root). Everything lives in one temporary folder:
#   slurm_local_install        install slurmctld, slurmd, the client, munge and
#                              the PBS wrappers if missing (apt-get, as root)
#   slurm_local_start DIR      munged (own key and socket), slurmctld, slurmd;
#                              exports SLURM_CONF; waits until the nodes are idle.
#                              One node (zeropp0, 127.0.0.1), or inside
#                              scripts/cluster (ZEROPP_CLUSTER_NODES set) one
#                              slurmd in each node's namespaces and slurmctld
#                              in the switch's (where the caller runs);
#                              ZEROPP_SLURM_CPUS: CPUs each node offers
#                              (default nproc; more lets jobs run at once)
#   slurm_local_stop           cancels every job, stops the daemons by their
#                              PIDs, then ends any process left that carries
#                              this cluster's marker in its environment
# Call slurm_local_stop from an EXIT trap: it is safe to call twice and after a
# failed start.
slurm_local_dir=""
slurm_local_pids=()
slurm_local_packages=(slurm-wlm slurmctld slurmd slurm-client munge slurm-wlm-torque)

slurm_local_log() { echo "local-slurm: $*" >&2; }

slurm_local_install() {
  local missing=() c
  for c in munged mungekey slurmctld slurmd sbatch scontrol scancel squeue sinfo qsub; do
    command -v "$c" > /dev/null || missing+=("$c")
  done
  ((${#missing[@]} == 0)) && return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get > /dev/null; then
    slurm_local_log "missing ${missing[*]}; install ${slurm_local_packages[*]} (as root) first"
    return 1
  fi
  slurm_local_log "installing ${slurm_local_packages[*]}"
  # --no-install-recommends keeps it to ~12 packages; none of them pulls OpenMPI.
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq -o Dpkg::Use-Pty=0 \
    --no-install-recommends "${slurm_local_packages[@]}" > /dev/null ||
    { DEBIAN_FRONTEND=noninteractive timeout 120 apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq -o Dpkg::Use-Pty=0 \
        --no-install-recommends "${slurm_local_packages[@]}" > /dev/null; }
}

# slurm_local_wait_file FILE SECONDS: waits until FILE is non-empty
slurm_local_wait_file() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [[ -s $1 ]] && return 0
    sleep 0.1
  done
  return 1
}

# Two free TCP ports (asked of the kernel, then released).
slurm_local_ports() {
  /usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

slurm_local_start() {
  local dir=$1 here ctld_port slurmd_port state i
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  slurm_local_dir=$dir
  # munged wants its socket folder (and those above) searchable by all, its key private.
  chmod 755 "$dir"
  mkdir -m 755 "$dir/munge"
  mkdir -m 700 "$dir/munge/key"
  mungekey --create --keyfile="$dir/munge/key/munge.key" || return 1
  env ZEROPP_SLURM_LOCAL="$dir" munged --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/key/munge.key" --seed-file="$dir/munge/key/munged.seed" \
    --log-file="$dir/munge/munged.log" --pid-file="$dir/munge/munged.pid" ||
    { slurm_local_log "munged did not start"; cat "$dir/munge/munged.log" >&2; return 1; }
  slurm_local_wait_file "$dir/munge/munged.pid" 10 || { slurm_local_log "munged wrote no PID file"; return 1; }
  slurm_local_pids+=("$(< "$dir/munge/munged.pid")")

  read -r ctld_port slurmd_port < <(slurm_local_ports)
  local nodes=(zeropp0) pairs=() n launch=()
  if [[ -n ${ZEROPP_CLUSTER_NODES:-} ]]; then
    read -r -a nodes <<< "$ZEROPP_CLUSTER_NODES"
    for n in "${nodes[@]}"; do pairs+=("$n=$(getent hosts "$n" | awk '{print $1}')"); done
    # slurmctld, here in the switch, listens at its address under this machine's host name.
    pairs=("$(getent hosts "$ZEROPP_CLUSTER_SWITCH" | awk '{print $1}')" "${pairs[@]}")
  fi
  bash "$here/make-slurm-conf" "$dir" "$ctld_port" "$slurmd_port" "${ZEROPP_SLURM_CPUS:-$(nproc)}" "${pairs[@]}" ||
    return 1
  export SLURM_CONF=$dir/slurm.conf
  # -i: ignore any saved state. Both fork into the background and write PID files.
  env ZEROPP_SLURM_LOCAL="$dir" slurmctld -i -f "$SLURM_CONF" ||
    { slurm_local_log "slurmctld did not start"; cat "$dir/log/slurmctld.log" >&2; return 1; }
  slurm_local_wait_file "$dir/slurmctld.pid" 10 || { slurm_local_log "slurmctld wrote no PID file"; return 1; }
  slurm_local_pids+=("$(< "$dir/slurmctld.pid")")
  for n in "${nodes[@]}"; do
    # A node of scripts/cluster: its own host name, IPC, /dev/shm and network.
    [[ $n == zeropp0 ]] && launch=() || launch=("$here/../../scripts/cluster" -x "$n")
    mkdir -p "$dir/spool/slurmd-$n"
    "${launch[@]}" env ZEROPP_SLURM_LOCAL="$dir" slurmd -f "$SLURM_CONF" -N "$n" ||
      { slurm_local_log "slurmd $n did not start"; cat "$dir/log/slurmd-$n.log" >&2; return 1; }
    slurm_local_wait_file "$dir/slurmd-$n.pid" 10 || { slurm_local_log "slurmd $n wrote no PID file"; return 1; }
    slurm_local_pids+=("$(< "$dir/slurmd-$n.pid")")
  done
  for ((i = 0; i < 300; i++)); do
    state=$(timeout 5 sinfo -h -o %t 2> /dev/null | sort -u | tr '\n' ' ')
    [[ $state == "idle " ]] && return 0
    sleep 0.1
  done
  slurm_local_log "nodes ${nodes[*]} not idle after 30 s (states '$state')"
  tail -n 20 "$dir/log/"*.log >&2
  return 1
}

# PIDs of processes that carry this cluster in their environment: the daemons,
# the slurmstepd's they started, and job processes (submitted with SLURM_CONF).
slurm_local_leftovers() {
  local p a skip=" $BASHPID "
  [[ -n $slurm_local_dir ]] || return 0
  a=$$  # never ourselves or a shell above us (it may have SLURM_CONF set)
  while [[ -n $a && $a != 0 ]]; do
    skip+="$a "
    a=$(awk '/^PPid:/ {print $2}' "/proc/$a/status" 2> /dev/null)
  done
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $skip == *" $p "* ]] && continue
    if grep -qzxF -e "ZEROPP_SLURM_LOCAL=$slurm_local_dir" -e "SLURM_CONF=$slurm_local_dir/slurm.conf" \
      "/proc/$p/environ" 2> /dev/null; then
      echo "$p"
    fi
  done
}

slurm_local_stop() {
  local p i left
  [[ -n $slurm_local_dir ]] || return 0
  if [[ -n ${SLURM_CONF:-} && -e $SLURM_CONF ]] && ((${#slurm_local_pids[@]} >= 2)); then
    timeout 10 scancel --full --signal=KILL --state=RUNNING --user=root > /dev/null 2>&1
    timeout 10 scancel --user=root > /dev/null 2>&1
    for ((i = 0; i < 50; i++)); do  # let slurmd's steps finish while slurmd still runs
      [[ -z $(timeout 5 squeue -h -t RUNNING,COMPLETING -o %i 2> /dev/null) ]] && break
      sleep 0.2
    done
  fi
  # Daemons in reverse order of start: the slurmd's, slurmctld, munged.
  for ((i = ${#slurm_local_pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${slurm_local_pids[i]}" 2> /dev/null
  done
  for ((i = 0; i < 50; i++)); do
    left=0
    for p in "${slurm_local_pids[@]}"; do kill -0 "$p" 2> /dev/null && left=1; done
    ((left)) || break
    sleep 0.2
  done
  for p in "${slurm_local_pids[@]}"; do
    kill -0 "$p" 2> /dev/null && { slurm_local_log "PID $p ignored SIGTERM: SIGKILL"; kill -KILL "$p" 2> /dev/null; }
  done
  # Whatever else is ours (a slurmstepd, a rank of a job): by PID.
  for p in $(slurm_local_leftovers); do
    slurm_local_log "ending leftover PID $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null | cut -c1-80))"
    kill -KILL "$p" 2> /dev/null
  done
  slurm_local_pids=()
  slurm_local_dir=""
}
