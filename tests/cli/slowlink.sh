#!/usr/bin/env bash
# scaling/slowlink.py's smoke run, so that the slow-link table cannot rot: ZeRO-3 and
# ZeRO++ on a tiny model, 4 ranks as 2 nodes x 2, at emulated 1 and 100 Gbit/s, one run
# each of two steps; the table has both rows; scaling/project.py's closed-form bytes
# equal every run's counters and its validation prints a row per cell. 6-20 s on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
export ZEROPP_BUILD_DIR MPIRUN="$MPIEXEC"
ZEROPP_BUILD_DIR=$(dirname "$(dirname "$ZEROPP")")
study="$work/study"
if timeout 300 /usr/bin/python3 scaling/slowlink.py "$study" --layouts 2x2 --gbps 1,100 --variants zero3,zeropp \
  --repeats 1 --repeats-other 1 --steps 2 --set=--model.n_embd=64 < /dev/null > "$work/table" 2>&1; then
  ok "slowlink.py ran"
else
  bad "slowlink.py failed"
  tail -5 "$work/table"
fi
for g in 1 100; do
  if grep -qE "^\| 2x2 \| $g \| [0-9]+ \([0-9]+-[0-9]+, 1\) \| [0-9.]+ \(" "$work/table"; then
    ok "table row at $g Gbit/s"
  else
    bad "no table row at $g Gbit/s"
  fi
done
if /usr/bin/python3 scaling/project.py bytes "$study" > "$work/bytes" 2>&1; then
  ok "closed-form bytes equal the counters ($(tail -1 "$work/bytes"))"
else
  bad "closed-form bytes differ from the counters"
  cat "$work/bytes"
fi
if /usr/bin/python3 scaling/project.py validate "$study" > "$work/validate" 2>&1 &&
  [[ $(grep -c '^| 2x2 |' "$work/validate") -eq 2 ]]; then
  ok "validation: a row per cell below 100 Gbit/s"
else
  bad "validation"
  cat "$work/validate"
fi
# A study without runs is one clear line.
mkdir -p "$work/empty"
msg=$(/usr/bin/python3 scaling/project.py validate "$work/empty" 2>&1)
if [[ $? -ne 0 && $(wc -l <<< "$msg") -eq 1 && $msg == *results.json* ]]; then
  ok "missing results.json: one line naming it"
else
  bad "missing results.json: '$msg'"
fi
finish
