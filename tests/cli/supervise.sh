#!/usr/bin/env bash
# scripts/supervise's restart rules on a stand-in launch (no MPI): the back-off
# doubles up to --max-backoff while attempts fail fast, starts again from
# --backoff after an attempt that ran --healthy seconds, the restarts end at
# --restarts with the launch's status, a restart resumes (--overwrite and
# --resume dropped, --resume auto added), status 3 is not restarted, and a bad
# option is one line with status 2. Each attempt of the stand-in sleeps the
# seconds its line of $work/plan says, then exits with status 1.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
sup=$root/scripts/supervise
launch=$work/launch
cat > "$launch" << 'EOS'
#!/usr/bin/env bash
n=$(($(cat "$WORK/count" 2> /dev/null || echo 0) + 1))
echo "$n" > "$WORK/count"
echo "args: $*" >> "$WORK/args"
sleep "$(sed -n "${n}p" "$WORK/plan")"
exit "${STATUS:-1}"
EOS
chmod +x "$launch"
export WORK=$work
printf '0\n0\n0\n0\n1.2\n0\n' > "$work/plan"
"$sup" --restarts 5 --backoff 0.1 --max-backoff 0.4 --healthy 1 -- "$launch" --overwrite --resume 7 x \
  2> "$work/log"
rc=$?
delays=$(grep -o 'in [0-9.]* s, resuming' "$work/log" | awk '{printf "%s ", $2}')
if [[ $rc -eq 1 && $delays == "0.1 0.2 0.4 0.4 0.1 " ]]; then
  ok "back-off doubles to its cap, starts again after a healthy attempt: $delays"
else
  bad "status $rc, back-offs '$delays'"
  cat "$work/log"
fi
if grep -q 'giving up after 5 restarts' "$work/log" && [[ $(wc -l < "$work/args") -eq 6 ]]; then
  ok "gives up after --restarts 5 (6 attempts)"
else
  bad "attempts: $(wc -l < "$work/args")"
fi
if [[ $(sed -n 1p "$work/args") == "args: --overwrite --resume 7 x" &&
  $(sed -n 2p "$work/args") == "args: x --resume auto" ]]; then
  ok "the first attempt as given, a restart resumes"
else
  bad "arguments: $(head -2 "$work/args" | tr '\n' '|')"
fi
rm -f "$work/count" "$work/args"
STATUS=3 "$sup" --restarts 5 -- "$launch" 2> "$work/log3"
rc=$?
if [[ $rc -eq 3 && $(wc -l < "$work/args") -eq 1 ]]; then
  ok "status 3 (stopped after a checkpoint): not restarted"
else
  bad "status 3: exit $rc, $(wc -l < "$work/args") attempts"
fi
msg=$("$sup" --healthy soon -- true 2>&1)
rc=$?
if [[ $rc -eq 2 && $(grep -c . <<< "$msg") -eq 1 && $msg == *"--healthy 'soon'"* ]]; then
  ok "bad option: one line naming it, status 2"
else
  bad "bad option: status $rc, '$msg'"
fi
finish
