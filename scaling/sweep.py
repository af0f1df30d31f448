#!/usr/bin/python3
"""Weak- and strong-scaling studies of zeropp: generate, run or submit, record.

  scaling/sweep.py STUDY_DIR [options]            run (or submit) a study
  scaling/sweep.py STUDY_DIR --dry-run ...        print the commands only

A study is the product of layouts (nodes x ranks per node), ZeRO variants and
emulated inter-node link bandwidths, in weak scaling (every rank keeps the
same micro-batch B and accumulation A: the global batch grows with P) and/or
strong scaling (the global batch G stays fixed: A = G / (B * P)).

Each distinct run gets its own train.out_dir, STUDY_DIR/runs/<id>/, holding
what zeropp writes (config.toml, metrics.h5), the run's output (run.log) and
run.json (its parameters, command, status, exit code, wall time).
STUDY_DIR/manifest.json lists the study's parameters, its points (kind,
variant, bandwidth, layout -> run id) and every run with its status; it is
rewritten after every run, so an interrupted sweep leaves a readable study,
and running the same command again skips the runs already done.
scaling/analyze.py reads the study folder.

Runs that would be identical are run once and shared: the last layout of a
weak study is also the strong study's when G = B * A * max(P); and a layout
of one node never crosses a node boundary, so the link bandwidth cannot
change it (--no-share turns the second kind of sharing off).

Modes (default: --slurm if sbatch is on PATH, --pbs if qsub is, else --local):
  --local    one run after another with mpirun (LD_PRELOAD of the yield
             library and OPENBLAS_NUM_THREADS=1, as ranks may outnumber
             cores); a failed or timed-out run is recorded and the sweep
             goes on.
  --slurm    one job per run, submitted with sbatch: jobs/slurm/train.sbatch
             (requeue and resume on the pre-walltime signal; the run's exit
             status is its log's "zeropp exited with status N" line), or, where
             the checkout has no such script or with --generate-script, a
             minimal one written to STUDY_DIR/runs/<id>/job.sbatch that records
             its status in run.json.
  --pbs      a minimal generated PBS script per run, submitted with qsub.
  --dry-run  print the commands (and write nothing).

Variants: zero3 (plain ZeRO-3), qwz (quantized weights), hpz (secondary
weight partition inside the node), qgz (quantized gradients), zeropp (all
three), and any defined with --define NAME='--zero.key=value ...'. Examples:

  scaling/sweep.py runs/study --local --layouts 1x1,2x1,2x2 \\
      --variants zero3,zeropp --gbps 0,0.1 --kinds weak,strong --steps 20
  scaling/sweep.py runs/big --slurm --nodes 1,2,4,8 --ranks-per-node 4 \\
      --sbatch-arg=--time=00:30:00 --sbatch-arg=--partition=gpu

Standard library only.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VARIANTS = {
    "zero3": [],
    "qwz": ["--zero.quantized_weights=true"],
    "hpz": ["--zero.hpz_partition_size=0"],
    "qgz": ["--zero.quantized_gradients=true"],
    "zeropp": ["--zero.quantized_weights=true", "--zero.hpz_partition_size=0", "--zero.quantized_gradients=true"],
}

# Every run: no validation, no sample, no final checkpoint (a study measures steps).
QUIET = ["--train.val_every=0", "--data.val=", "--train.sample_tokens=0", "--checkpoint.at_end=false"]

MANIFEST = "manifest.json"
FORMAT = "zeropp-scaling-study"


def die(msg):
    sys.exit(f"sweep: error: {msg}")


def fmt_gbps(g):
    return "inf" if g == 0 else f"{g:g}"


def parse_list(text, conv, what):
    try:
        out = [conv(x) for x in text.split(",") if x.strip()]
    except ValueError:
        die(f"{what}: cannot read '{text}'")
    if not out:
        die(f"{what}: empty")
    return out


def parse_layouts(args):
    """[(nodes, ranks per node)] sorted by P."""
    if args.layouts:
        out = []
        for item in args.layouts.split(","):
            try:
                y, x = (int(v) for v in item.lower().split("x"))
            except ValueError:
                die(f"--layouts: '{item}' is not NODESxRANKS_PER_NODE")
            out.append((y, x))
    else:
        out = [(y, args.ranks_per_node) for y in parse_list(args.nodes, int, "--nodes")]
    if any(y < 1 or x < 1 for y, x in out):
        die("layouts need at least one node of one rank")
    return sorted(set(out), key=lambda yx: (yx[0] * yx[1], yx[0]))


def design(args):
    """The study's points and the distinct runs they need."""
    layouts = parse_layouts(args)
    variants = parse_list(args.variants, str, "--variants")
    for v in variants:
        if v not in VARIANTS:
            die(f"--variants: unknown '{v}' (known: {', '.join(VARIANTS)})")
    gbps = parse_list(args.gbps, float, "--gbps")
    if any(g < 0 for g in gbps):
        die("--gbps: bandwidths are >= 0 (0: unlimited)")
    kinds = parse_list(args.kinds, str, "--kinds")
    for k in kinds:
        if k not in ("weak", "strong"):
            die(f"--kinds: unknown '{k}' (weak, strong)")
    B, A = args.batch_size, args.grad_accum
    pmax = max(y * x for y, x in layouts)
    G = args.global_batch or B * A * pmax
    runs, points = {}, []
    for kind in kinds:
        for y, x in layouts:
            P = y * x
            if kind == "weak":
                a = A
            else:
                if G % (B * P):
                    die(f"strong scaling: global batch {G} is not a multiple of B*P = {B}*{P}; "
                        f"choose --global-batch or --batch-size so that it is")
                a = G // (B * P)
            for v in variants:
                for g in gbps:
                    g_run = 0.0 if (y == 1 and args.share) else g
                    rid = f"{v}-bw{fmt_gbps(g_run)}-P{P}X{x}-B{B}A{a}"
                    runs.setdefault(rid, {
                        "id": rid, "dir": os.path.join("runs", rid), "variant": v, "gbps": g_run,
                        "P": P, "X": x, "Y": y, "batch_size": B, "grad_accum": a, "status": "pending",
                    })
                    points.append({"kind": kind, "variant": v, "gbps": g, "P": P, "X": x, "Y": y, "run": rid})
    return layouts, variants, gbps, kinds, G, points, runs


def zeropp_args(args, run, out_dir):
    """zeropp's arguments after the executable."""
    if run.get("links") == "real":
        # scripts/cluster's nodes: zeropp finds them from host names, the kernel shapes the links.
        layout = ["--comm.internode_gbps=0"]
    else:
        layout = [f"--zero.ranks_per_node={run['X']}", f"--comm.internode_gbps={run['gbps']:g}"]
    cmd = ["train", args.deck] + layout + [
           f"--train.batch_size={run['batch_size']}", f"--train.grad_accum={run['grad_accum']}",
           f"--train.steps={args.steps}", f"--log.every={args.log_every}", f"--train.out_dir={out_dir}"]
    return cmd + QUIET + VARIANTS[run["variant"]] + args.extra


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def now():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


# ---- local --------------------------------------------------------------------

def run_local(args, study, run, zeropp, log):
    out_dir = os.path.join(study, run["dir"])
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ)
    yield_lib = os.path.join(args.build_dir, "lib", "libzeropp_yield.so")
    if os.path.isfile(yield_lib):
        env["LD_PRELOAD"] = yield_lib + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    # OpenBLAS 0.3.21 runs generic kernels on recent Intel CPUs unless told (README.md).
    coretype = subprocess.run(["bash", os.path.join(ROOT, "scripts", "openblas-coretype")],
                              capture_output=True, text=True, check=True).stdout.strip()
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    # A run that failed, or is asked again (--rerun), starts over in its folder.
    if run.get("links") == "real":
        # One cluster per run, its links shaped to the node rate: up, the job on every node, down.
        cluster = os.path.join(ROOT, "scripts", "cluster")
        launcher = [cluster, "run", str(run["P"] // run["X"]), f"{run['node_gbps']:g}", cluster, "mpiexec",
                    str(run["X"])]
    else:
        launcher = [args.mpirun, "-n", str(run["P"])]
    cmd = launcher + [zeropp] + zeropp_args(args, run, out_dir) + ["--overwrite"]
    run.update(command=cmd, started=now(), status="running", rc=None, wall_s=None)
    write_json(os.path.join(out_dir, "run.json"), run)
    t0 = time.monotonic()
    with open(os.path.join(out_dir, "run.log"), "w") as lf:
        lf.write("$ " + shlex.join(cmd) + "\n")
        lf.flush()
        try:
            p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=lf, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        except OSError as e:
            run.update(status="failed", rc=None, error=str(e))
        else:
            try:
                rc = p.wait(timeout=args.run_timeout or None)
                run.update(status="ok" if rc == 0 else "failed", rc=rc)
                if rc != 0 and run.get("links") == "real" and finished_before_finalize(
                        os.path.join(out_dir, "run.log")):
                    run.update(status="ok", after_last_step=f"exit {rc} from the launcher after the last step")
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 15)  # the launcher and its ranks: the session we started
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 9)
                    p.wait()
                run.update(status="timeout", rc=p.returncode)
            except KeyboardInterrupt:
                os.killpg(p.pid, 15)
                p.wait()
                run.update(status="interrupted", rc=p.returncode)
                raise
            finally:
                run["wall_s"] = round(time.monotonic() - t0, 2)
                write_json(os.path.join(out_dir, "run.json"), run)
    run["wall_s"] = round(time.monotonic() - t0, 2)
    write_json(os.path.join(out_dir, "run.json"), run)
    if run["status"] != "ok":
        tail = ""
        try:
            with open(os.path.join(out_dir, "run.log")) as lf:
                tail = "".join(lf.readlines()[-3:]).rstrip()
        except OSError:
            pass
        log(f"  {run['status']} (exit {run['rc']}): {tail}")



def finished_before_finalize(log_path):
    """True when a run's log shows its work done (the all-ranks byte line comes from
    a reduction every rank entered after its last step) and no error of zeropp's but
    the bounded finalize's line. Over scripts/cluster's TCP links MPICH 4.0.2 with
    UCX 1.13 deadlocks in MPI_Finalize in some runs (docs/cluster-guide.md); zeropp
    ends them 20 s later, and hydra may then report 1 or 255 for a run whose
    metrics are complete."""
    try:
        with open(log_path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return False
    done = any(re.match(r"collective bytes \| step \d+ \| all ranks", line) for line in lines)
    errors = [line for line in lines if line.startswith("zeropp:") and "MPI_Finalize did not return" not in line]
    return done and not errors

# ---- batch scripts ------------------------------------------------------------

def job_script(args, study, run, zeropp, scheduler):
    out_dir = os.path.join(study, run["dir"])
    Y, X = run["Y"], run["X"]
    name = f"zpp-{run['id']}"[:64]
    if scheduler == "slurm":
        head = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --nodes={Y}",
                f"#SBATCH --ntasks-per-node={X}", f"#SBATCH --output={out_dir}/run.log"]
        head += [f"#SBATCH {a}" for a in args.sbatch_arg]
        launch = f"srun --mpi=pmi2 {'--overcommit ' if args.overcommit else ''}-n {run['P']}"
    else:
        head = ["#!/bin/bash", f"#PBS -N {name}", f"#PBS -l select={Y}:ncpus={X}:mpiprocs={X}",
                "#PBS -j oe", f"#PBS -o {out_dir}/run.log"]
        head += [f"#PBS {a}" for a in args.qsub_arg]
        launch = f"mpiexec -n {run['P']}"
    cmd = shlex.join(zeropp_args(args, run, out_dir) + ["--overwrite"])  # a resubmission starts over
    rec = shlex.quote(os.path.join(out_dir, "run.json"))
    # The job records its own status in run.json (python3 is on every node we know of;
    # without it the status stays "submitted" and analyze.py still reads metrics.h5).
    body = f"""
# Generated by scaling/sweep.py for run {run['id']} of study {study}.
set -u
cd {shlex.quote(ROOT)}
export OPENBLAS_NUM_THREADS=${{OPENBLAS_NUM_THREADS:-1}} OMP_NUM_THREADS=${{OMP_NUM_THREADS:-1}}
# OpenBLAS 0.3.21 runs generic kernels on recent Intel CPUs unless told (README.md).
coretype=$(bash scripts/openblas-coretype)
if [[ -n $coretype ]]; then export OPENBLAS_CORETYPE=$coretype; fi
# More ranks on a node than it has CPUs: preload the yield library (see README.md).
yield_lib={shlex.quote(os.path.join(args.build_dir, "lib", "libzeropp_yield.so"))}
if [[ -e $yield_lib ]] && (( {X} > $(nproc) )); then export LD_PRELOAD=$yield_lib${{LD_PRELOAD:+:$LD_PRELOAD}}; fi
t0=$(date +%s.%N)
{launch} {shlex.quote(zeropp)} {cmd}
rc=$?
t1=$(date +%s.%N)
python3 - "$rc" "$t0" "$t1" {rec} <<'EOF' || true
import json, sys
rc, t0, t1, path = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
with open(path) as f:
    run = json.load(f)
run.update(status="ok" if rc == 0 else "failed", rc=rc, wall_s=round(t1 - t0, 2))
with open(path + ".tmp", "w") as f:
    json.dump(run, f, indent=1)
import os
os.replace(path + ".tmp", path)
EOF
exit $rc
"""
    return "\n".join(head) + "\n" + body


SHARED_SCRIPT = {"slurm": os.path.join("jobs", "slurm", "train.sbatch"), "pbs": os.path.join("jobs", "pbs", "train.pbs")}


def submit(args, study, run, zeropp, scheduler, log):
    """Submits one run: through jobs/slurm/train.sbatch when the checkout has it
    (its interface: `sbatch [options] train.sbatch DECK overrides...`, with
    ZEROPP_ROOT and ZEROPP_BIN in the environment; it adds --resume auto and
    requeues itself on the pre-walltime signal), else through a script generated
    into the run folder that records its exit status in run.json."""
    out_dir = os.path.join(study, run["dir"])
    os.makedirs(out_dir, exist_ok=True)
    shared = os.path.join(ROOT, SHARED_SCRIPT[scheduler])
    env = dict(os.environ, ZEROPP_ROOT=ROOT, ZEROPP_BIN=zeropp)
    name = f"zpp-{run['id']}"[:64]
    if scheduler == "slurm" and os.path.isfile(shared) and not args.generate_script:
        path = shared
        if args.overcommit:
            env["ZEROPP_SRUN_ARGS"] = (env.get("ZEROPP_SRUN_ARGS", "") + " --overcommit").strip()
        cmd = (["sbatch", "--parsable", f"--job-name={name}", f"--nodes={run['Y']}",
                f"--ntasks-per-node={run['X']}", f"--output={out_dir}/run.log"]
               + (["--overcommit"] if args.overcommit else []) + args.sbatch_arg
               + [path] + zeropp_args(args, run, out_dir)[1:])
    else:
        path = os.path.join(out_dir, "job.sbatch" if scheduler == "slurm" else "job.pbs")
        with open(path, "w") as f:
            f.write(job_script(args, study, run, zeropp, scheduler))
        cmd = ["sbatch", "--parsable", path] if scheduler == "slurm" else ["qsub", path]
    run.update(command=cmd, script=path, submitted=now(), status="submitted", rc=None, wall_s=None)
    write_json(os.path.join(out_dir, "run.json"), run)
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        run.update(status="submit-failed", error=(p.stderr or p.stdout).strip())
        log(f"  submit failed: {run['error']}")
    else:
        run["job_id"] = p.stdout.strip().split(";")[0]
        log(f"  job {run['job_id']}")
    write_json(os.path.join(out_dir, "run.json"), run)


# ---- main ---------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", help="study folder (created; runs/<id>/ and manifest.json inside)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--local", dest="mode", action="store_const", const="local")
    mode.add_argument("--slurm", dest="mode", action="store_const", const="slurm")
    mode.add_argument("--pbs", dest="mode", action="store_const", const="pbs")
    mode.add_argument("--dry-run", dest="mode", action="store_const", const="dry-run")
    ap.add_argument("--deck", default="inputs/default.toml", help="deck, relative to the repository root")
    ap.add_argument("--kinds", default="weak,strong", help="weak, strong or both (default both)")
    ap.add_argument("--nodes", default="1,2", help="node counts (default 1,2), with --ranks-per-node")
    ap.add_argument("--ranks-per-node", type=int, default=2, help="X: ranks per (emulated) node (default 2)")
    ap.add_argument("--layouts", help="instead of --nodes: NODESxRANKS_PER_NODE list, e.g. 1x1,2x1,2x2")
    ap.add_argument("--variants", default="zero3,zeropp", help=f"from {','.join(VARIANTS)} (default zero3,zeropp)")
    ap.add_argument("--define", action="append", default=[], metavar="NAME=OVERRIDES",
                    help="a further variant, e.g. --define 'qwz4=--zero.quantized_weights=true "
                         "--zero.weight_bits=4' (repeatable; then name it in --variants)")
    ap.add_argument("--gbps", default="0", help="emulated inter-node Gbit/s per rank, 0 = unlimited (default 0)")
    ap.add_argument("--steps", type=int, default=20, help="optimizer steps per run (default 20)")
    ap.add_argument("--batch-size", type=int, default=8, help="B: sequences per micro-batch per rank (default 8)")
    ap.add_argument("--grad-accum", type=int, default=1, help="A of weak scaling (default 1)")
    ap.add_argument("--global-batch", type=int, default=0,
                    help="G of strong scaling in sequences (default B*A*max P)")
    ap.add_argument("--log-every", type=int, default=1, help="log.every of the runs (default 1)")
    ap.add_argument("--set", dest="extra", action="append", default=[], metavar="--KEY=VALUE",
                    help="a further zeropp override for every run (repeatable), e.g. --set=--model.n_layer=2")
    ap.add_argument("--no-share", dest="share", action="store_false",
                    help="run one-node layouts at every bandwidth instead of once")
    ap.add_argument("--run-timeout", type=float, default=900, help="local: seconds before a run is killed (0: none)")
    ap.add_argument("--rerun", action="store_true", help="run again the runs that already finished ok")
    ap.add_argument("--mpirun", default=os.environ.get("MPIRUN", "mpirun"), help="local launcher (default mpirun)")
    ap.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                    help="a further #SBATCH line, e.g. --sbatch-arg=--time=00:20:00 (repeatable)")
    ap.add_argument("--qsub-arg", action="append", default=[], metavar="ARG",
                    help="a further #PBS line, e.g. --qsub-arg='-l walltime=00:20:00' (repeatable)")
    ap.add_argument("--generate-script", action="store_true",
                    help="slurm: write a minimal job script per run even when jobs/slurm/train.sbatch exists")
    ap.add_argument("--overcommit", action="store_true", help="slurm: srun --overcommit (more ranks than CPUs)")
    args = ap.parse_args()
    for d in args.define:
        name, eq, ovr = d.partition("=")
        if not eq or not name or not all(o.startswith("--") for o in shlex.split(ovr)):
            die(f"--define: '{d}' is not NAME=--section.key=value ...")
        VARIANTS[name] = shlex.split(ovr)
    for e in args.extra:
        if not e.startswith("--"):
            die(f"--set: '{e}' is not a --section.key=value override")
    if args.steps < 1 or args.batch_size < 1 or args.grad_accum < 1:
        die("--steps, --batch-size and --grad-accum must be positive")

    build = os.environ.get("ZEROPP_BUILD_DIR", "build")
    args.build_dir = build if os.path.isabs(build) else os.path.join(ROOT, build)
    zeropp = os.path.join(args.build_dir, "bin", "zeropp")
    if not args.mode:
        args.mode = "slurm" if shutil.which("sbatch") else "pbs" if shutil.which("qsub") else "local"
    if args.mode != "dry-run" and not os.path.isfile(zeropp):
        die(f"{zeropp}: not built (set ZEROPP_BUILD_DIR, or build: cmake -S . -B build -G Ninja && ninja -C build)")
    if not os.path.isfile(os.path.join(ROOT, args.deck)) and not os.path.isfile(args.deck):
        die(f"{args.deck}: no such deck")

    study = os.path.abspath(args.study)
    layouts, variants, gbps, kinds, G, points, runs = design(args)
    log = lambda s: print(s, flush=True)  # noqa: E731

    if args.mode == "dry-run":
        env = f"LD_PRELOAD={shlex.quote(os.path.join(args.build_dir, 'lib', 'libzeropp_yield.so'))} OPENBLAS_NUM_THREADS=1"
        print(f"# {len(runs)} runs for {len(points)} points; cd {shlex.quote(ROOT)}")
        for run in runs.values():
            out_dir = os.path.join(study, run["dir"])
            print(env, shlex.join([args.mpirun, "-n", str(run["P"]), zeropp] + zeropp_args(args, run, out_dir)))
        return 0

    os.makedirs(os.path.join(study, "runs"), exist_ok=True)
    mpath = os.path.join(study, MANIFEST)
    old = read_json(mpath) or {}
    old_runs = old.get("runs", {})
    manifest = {
        "format": FORMAT, "format_version": 1, "created": old.get("created", now()), "updated": now(),
        "mode": args.mode, "root": ROOT, "zeropp": zeropp, "deck": args.deck, "steps": args.steps,
        "batch_size": args.batch_size, "grad_accum": args.grad_accum, "global_batch": G,
        "kinds": kinds, "layouts": [[y, x] for y, x in layouts], "variants": variants, "gbps": gbps,
        "extra": args.extra, "command": shlex.join([sys.argv[0]] + sys.argv[1:]),
        "points": points, "runs": runs,
    }
    # Points of earlier sweeps into the same folder stay (a study can grow).
    seen = {(p["kind"], p["variant"], p["gbps"], p["P"], p["X"]) for p in points}
    manifest["points"] += [p for p in old.get("points", []) if (p["kind"], p["variant"], p["gbps"], p["P"], p["X"]) not in seen]
    for rid, r in old_runs.items():
        if rid not in runs:
            runs[rid] = r
    write_json(mpath, manifest)

    wanted = {p["run"] for p in points}
    todo = []
    for rid, run in runs.items():
        rec = read_json(os.path.join(study, run["dir"], "run.json"))
        if rec:
            run.update({k: v for k, v in rec.items() if k not in ("id", "dir")})
        if rid in wanted and (args.rerun or run.get("status") != "ok"):
            todo.append(run)
    log(f"sweep: {len(points)} points, {len(runs)} runs, {len(todo)} to do ({args.mode}) in {study}")
    failed = 0
    t_start = time.monotonic()
    for i, run in enumerate(todo):
        log(f"[{i + 1}/{len(todo)}] {run['id']} (P={run['P']} X={run['X']} Y={run['Y']}, "
            f"{run['variant']}, {fmt_gbps(run['gbps'])} Gbit/s, B={run['batch_size']} A={run['grad_accum']})")
        try:
            if args.mode == "local":
                run_local(args, study, run, zeropp, log)
            else:
                submit(args, study, run, zeropp, args.mode, log)
        finally:
            manifest["updated"] = now()
            write_json(mpath, manifest)
        if run["status"] not in ("ok", "submitted"):
            failed += 1
    log(f"sweep: done in {time.monotonic() - t_start:.0f} s, {failed} of {len(todo)} runs failed; "
        f"manifest {mpath}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
