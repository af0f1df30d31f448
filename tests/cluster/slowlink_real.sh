#!/usr/bin/env bash
# scaling/slowlink.py over real links, so that the real-link table cannot rot:
# ZeRO-3 on a small model at node link rates of 1 and 10 Gbit/s, one run on
# scripts/cluster's two nodes and one emulated run per rate, two steps each; the
# table has a row per rate with all three figures (real, emulated, projected),
# and scaling/project.py validates the real runs alone. Root only, else SKIPPED
# (77). Each run brings its own cluster up and down: never beside another
# cluster test.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../cli/lib.bash"
: "${ZEROPP:?}"
needs_corpus
[[ $(id -u) -eq 0 ]] || {
  echo "SKIPPED: real links need root (scripts/cluster)"
  exit 77
}
export ZEROPP_BUILD_DIR
ZEROPP_BUILD_DIR=$(dirname "$(dirname "$ZEROPP")")
study="$work/study"
if timeout -k 5 300 /usr/bin/python3 scaling/slowlink.py "$study" --links both --layouts 2x2 --gbps 1,10 \
  --variants zero3 --repeats 1 --steps 2 --set=--model.n_embd=64 < /dev/null > "$work/table" 2>&1; then
  ok "slowlink.py --links both ran"
else
  bad "slowlink.py --links both failed"
  tail -5 "$work/table"
fi
# | 2x2 | 1 | real (min-max) | emulated (min-max) +E% | projected +P% |; the 10 Gbit/s
# cell is the projection's reference.
num='[0-9]+ \([0-9]+-[0-9]+\)'
for g in 1 10; do
  proj='[0-9]+ [+-][0-9]+%'
  [[ $g == 10 ]] && proj=ref
  if grep -qE "^\| 2x2 \| $g \| $num \| $num [+-][0-9]+% \| $proj \|$" "$work/table"; then
    ok "table row at $g Gbit/s: real, emulated, projected"
  else
    bad "no full table row at $g Gbit/s"
    cat "$work/table"
  fi
done
if grep -q '"links": "real"' "$study/results.json" && grep -q '"node_gbps": 10' "$study/results.json"; then
  ok "results.json: the real runs say so, with their node rate"
else
  bad "results.json: no real run with its node rate"
fi
if /usr/bin/python3 scaling/project.py validate "$study" --links real > "$work/validate" 2>&1 &&
  [[ $(grep -c '^| 2x2 | ZeRO-3 | 0.5 |' "$work/validate") -eq 1 ]]; then
  ok "project.py validate --links real: the 1 Gbit/s node link as a rank's 0.5"
else
  bad "project.py validate --links real"
  cat "$work/validate"
fi
if ! ip netns list | grep -q '^zpc-'; then
  ok "no namespace left behind"
else
  bad "namespaces left: $(ip netns list | grep '^zpc-' | tr '\n' ' ')"
fi
finish
