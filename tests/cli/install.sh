#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, which is then moved (a copy at
# another path, the first one removed): nothing in it may point into the
# build tree or the checkout (RUNPATH, ldd, the installed text files), and
# from the moved prefix alone zeropp trains a few steps of an installed deck
# on 2 ranks with the installed yield library, the installed prepare-corpus
# sees the working folder's data/kjv/, the installed Slurm script runs it
# again (zeropp found on PATH, the deck under share/zeropp), and
# bin/zeropp-plot draws the run.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
build=$(cd "$(dirname "$ZEROPP")/.." && pwd)
unset LD_PRELOAD  # ctest's preloads the build's yield library; the prefix brings its own
src=$(cd "$ZEROPP_SOURCE_DIR" && pwd)

cmake --install "$build" --prefix "$work/first" > "$work/install.log" 2>&1 || {
  cat "$work/install.log"
  bad "cmake --install"
  finish
  exit
}
cp -a "$work/first" "$work/p" && rm -rf "$work/first"
p=$work/p
for f in bin/zeropp bin/zeropp_ckpt_scan bin/zeropp-plot lib/libzeropp_yield.so share/zeropp/inputs/tiny.toml \
  share/zeropp/jobs/slurm/train.sbatch share/zeropp/jobs/pbs/train.pbs share/zeropp/scaling/plot_run.py \
  share/zeropp/scripts/prepare-corpus share/doc/zeropp/README.md share/doc/zeropp/docs/cluster-guide.md; do
  [[ -e $p/$f ]] && ok "installed $f" || bad "installed $f"
done

# The module files name the prefix given to the install (the first one), and
# every path they set lies in the installed layout.
for mod in "$p"/share/zeropp/modules/lmod/zeropp/*.lua "$p"/share/zeropp/modules/tcl/zeropp/*; do
  [[ -e $mod ]] || { bad "no module file: $mod"; continue; }
  grep -qF "\"$work/first\"" "$mod" && ok "${mod#"$p/"} names the install prefix" || bad "${mod#"$p/"}: no prefix"
  rel=$(sed -nE 's/.*pathJoin\(prefix, "([^"]+)"\).*/\1/p; s/^(prepend-path|setenv) [A-Z_]+ \$prefix\/(\S+)$/\2/p' "$mod")
  [[ -n $rel ]] || bad "${mod#"$p/"} sets no path"
  for r in $rel; do
    [[ -e $p/$r ]] && ok "${mod#"$p/"}: $r installed" || bad "${mod#"$p/"}: $r not installed"
  done
done

runpath=$(readelf -d "$p/bin/zeropp" | grep -E 'RUNPATH|RPATH')
echo "$runpath"
[[ $runpath == *'$ORIGIN/../lib'* ]] && ok "RUNPATH has \$ORIGIN/../lib" || bad "RUNPATH lacks \$ORIGIN/../lib"
[[ $runpath != *"$build"* && $runpath != *"$src"* ]] && ok "RUNPATH names no build or source path" ||
  bad "RUNPATH points into the build or the checkout"
ldd "$p/bin/zeropp" > "$work/ldd"
! grep -q 'not found' "$work/ldd" && ok "ldd: every library found" || bad "ldd: $(grep 'not found' "$work/ldd")"
! grep -qF -e "$build" -e "$src" "$work/ldd" && ok "ldd: no library from the build or the checkout" ||
  bad "ldd: libraries from the build or the checkout"
# Markdown is copied verbatim (it may name any path as an example, /root/zeropp among them).
leaks=$(grep -rlIF --exclude='*.md' -e "$build" -e "$src" "$p/share" || true)
[[ -z $leaks ]] && ok "no installed text file names the build or the checkout" || bad "paths into the tree in: $leaks"

# A working folder with the corpus only, as a user's would be.
mkdir -p "$work/user/data" && ln -s "$src/data/kjv" "$work/user/data/kjv"
cd "$work/user" || exit 1
"$p/share/zeropp/scripts/prepare-corpus" > corpus.log 2>&1 && grep -q 'data/kjv/train.bin' corpus.log &&
  [[ ! -e $p/share/zeropp/data ]] && ok "installed prepare-corpus: data/kjv/ of the working folder" || {
  cat corpus.log
  bad "installed prepare-corpus"
}
small=(--model.n_layer=1 --model.n_embd=32 --model.n_head=2 --train.batch_size=2 --train.seq_len=32
       --model.max_seq_len=32 --train.sample_tokens=0 --data.val= --log.every=1)
LD_PRELOAD="$p/lib/libzeropp_yield.so" "$MPIEXEC" -n 2 "$p/bin/zeropp" train "$p/share/zeropp/inputs/tiny.toml" \
  --train.steps=3 --checkpoint.every=3 --train.out_dir=run "${small[@]}" > log 2>&1
rc=$?
grep -q '^step 3/3' log && ((rc == 0)) && [[ -s run/metrics.h5 ]] && ok "trains 3 steps from the prefix" || {
  tail -5 log
  bad "training from the prefix (status $rc)"
}
# ckpt verify scans the file in bin/zeropp_ckpt_scan, beside the installed binary.
"$p/bin/zeropp" ckpt verify run/checkpoints/step_00000003.h5 > verify.log 2>&1 &&
  ok "installed ckpt verify: $(tail -1 verify.log)" || {
  cat verify.log
  bad "installed ckpt verify"
}

PATH="$p/bin:$PATH" ZEROPP_LAUNCHER=mpirun ZEROPP_YIELD=1 \
  bash "$p/share/zeropp/jobs/slurm/train.sbatch" inputs/tiny.toml --train.steps=2 --train.out_dir=job "${small[@]}" \
  > job.log 2>&1
rc=$?
grep -qF "$p/bin/zeropp train $p/share/zeropp/inputs/tiny.toml" job.log && grep -q '^step 2/2' job.log && ((rc == 0)) &&
  ok "installed train.sbatch: zeropp from PATH, the installed deck" || {
  tail -5 job.log
  bad "installed train.sbatch (status $rc)"
}

# Seven series: the training loss twice and one per other panel (no validation: --data.val=).
"$p/bin/zeropp-plot" run --report plot.json > plot.log 2>&1 && [[ -s run/plot.png ]] &&
  /usr/bin/python3 -c 'import json, sys; r = json.load(open("plot.json"))["run/plot.png"]
sys.exit(sum(len(v["series"]) for v in r.values()) != 7)' && ok "bin/zeropp-plot draws the run's 7 series" || {
  cat plot.log
  bad "bin/zeropp-plot"
}
finish
