#!/usr/bin/env bash
# scripts/gpu-check --bundle's machinery without a GPU (scripts/gpu-check-lib):
# Catch2 names escaped so that each selects exactly its case (',' is OR in a
# test spec), a case judged by its own output ("No tests ran" with exit 0 is a
# FAIL), the staging transport's filter without the hidden watchdog case, the
# deadline and each step's limit, rows as they finish, part 2's windowed loss
# comparison; a bundle of fakes printing a GPU machine's tables, read into rows;
# then a stand-in bundle of this build's programs: every row it cannot run here
# SKIPPED or NOT RUN, none passed, the table printed last and kept with the logs
# in GPU_CHECK_OUT, exit 2.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
cd "$ZEROPP_SOURCE_DIR" || exit 1
source scripts/gpu-check-lib
source scripts/gpu-check-train
bin=$(dirname "$ZEROPP")

# Every kernel test whose name holds a test-spec character selects itself alone.
names="$work/names"
"$bin/zeropp_kernels_tests" --list-test-names-only | grep -E '[],[]' > "$names"
[[ -s $names ]] && ok "$(wc -l < "$names") kernel test names with ',' or brackets" || bad "no names to escape"
while read -r name; do
  got="$("$bin/zeropp_kernels_tests" --list-test-names-only "$(gcl_catch_filter "$name")" | grep -v '^$')"
  [[ $got == "$name" ]] || bad "filter of '$name' selects: ${got:-nothing}"
done < "$names"
ok "each escaped name selects exactly its case"
first="$(grep -m1 , "$names")"
"$bin/zeropp_kernels_tests" "$first" > "$work/raw" 2>&1
rc=$?
[[ $(gcl_case_result "$work/raw" $rc) == FAIL* ]] && ok "the unescaped '$first': FAIL ($(gcl_case_result "$work/raw" $rc))" ||
  bad "the unescaped '$first': $(gcl_case_result "$work/raw" $rc)"
"$bin/zeropp_kernels_tests" "$(gcl_catch_filter "$first")" > "$work/esc" 2>&1
rc=$?
[[ $(gcl_case_result "$work/esc" $rc) == pass\|* ]] && ok "escaped, it passes: $(gcl_case_result "$work/esc" $rc)" ||
  bad "escaped: $(gcl_case_result "$work/esc" $rc)"

# A run is judged by what it printed.
judge() {  # expected rc ranks text
  printf '%b\n' "$4" > "$work/log"
  local got
  got="$(gcl_case_result "$work/log" "$2" "$3")"
  [[ ${got%%|*} == "$1" ]] && ok "$1: rc $2 '${4:0:40}'" || bad "expected $1, got $got for rc $2 '$4'"
}
judge FAIL 0 "" "No tests ran\n"
judge pass 0 "" "===\nAll tests passed (3 assertions in 1 test case)"
judge FAIL 0 "" "All tests passed (3 assertions in 2 test cases)"
judge FAIL 0 "" "nothing"
judge SKIPPED 0 "" "SKIPPED: no CUDA device\nAll tests passed (1 assertion in 1 test case)"
judge FAIL 1 "" "SKIPPED: x\nfailed at a.cpp:3"
judge FAIL 124 "" ""
judge "NOT RUN" 125 "" ""
judge pass 0 4 "$(printf 'All tests passed (9 assertions in 7 test cases)\\n%.0s' 1 2 3 4)"
judge FAIL 0 4 "$(printf 'All tests passed (9 assertions in 7 test cases)\\n%.0s' 1 2 3)"

# The staging transport's filter: the collective cases, not the watchdog.
if [[ -x $bin/zeropp_comm_nccl_tests ]]; then
  staged="$("$bin/zeropp_comm_nccl_tests" --list-test-names-only "$gcl_staged_filter" | grep -v '^$')"
  [[ -n $staged && $staged != *watchdog* ]] && ok "$gcl_staged_filter: $(wc -l <<< "$staged") cases, no watchdog" ||
    bad "$gcl_staged_filter selects: $staged"
  grep -qF "\"$gcl_staged_filter\"" tests/CMakeLists.txt && ok "ctest's comm_staging_cuda_np* use it too" ||
    bad "tests/CMakeLists.txt selects the staging cases otherwise"
  bare="$("$bin/zeropp_comm_nccl_tests" --list-test-names-only "*StagedCudaBackend")"
  [[ $bare == *watchdog* ]] && ok "a name filter alone selects the hidden watchdog case" ||
    bad "the bare name filter lost the watchdog case"
else
  echo "SKIPPED: the staging transport's filter (this build has no CUDA)"
fi

# The deadline: limits from what is left, a step stopped there, then NOT RUN.
gcl_init "$work/gc" 100
(($(gcl_limit 30) == 30)) && ok "gcl_limit 30 of 100 s: 30" || bad "gcl_limit 30: $(gcl_limit 30)"
(($(gcl_limit 500) <= 90)) && ok "gcl_limit 500 of 100 s: $(gcl_limit 500)" || bad "gcl_limit 500: $(gcl_limit 500)"
gcl_init "$work/gc" 17
t0=$SECONDS
gcl_timed "$work/gc/logs/sleep.log" 60 sleep 30
rc=$?
((rc == 124 && SECONDS - t0 <= 9)) && ok "a 30 s step under a 17 s budget: stopped after $((SECONDS - t0)) s" ||
  bad "the step: status $rc after $((SECONDS - t0)) s"
gcl_timed "$work/gc/logs/late.log" 60 true
rc=$?
((rc == 125)) && ok "the next step: not started (status 125)" || bad "the next step: status $rc"
[[ $(gcl_row 1 "a check" pass "fine") == "| 1 | a check | pass | fine |" ]] && ok "a row is printed as it is made" ||
  bad "gcl_row printed something else"
gcl_row 2 "late" "NOT RUN" "deadline" > /dev/null
gcl_row 1 "early" FAIL "x" > /dev/null
((gcl_failed == 2)) && ok "NOT RUN and FAIL count as failures" || bad "gcl_failed = $gcl_failed"
[[ $(gcl_table | tail -1) == "| 2 | late | NOT RUN | deadline |" ]] && ok "the table: by part" || bad "table: $(gcl_table)"

# Part 2's comparison: 10-step means, so a one-step spike passes, a shifted curve does not.
awk 'BEGIN { for (s = 1; s <= 100; s++) printf "%d %.4f\n", s, 10 - s / 20 }' > "$work/host.loss"
awk '{ printf "%s %.4f\n", $1, $1 == 37 ? $2 * 1.10 : $2 }' "$work/host.loss" > "$work/spike.loss"
awk '{ printf "%s %.4f\n", $1, $2 * 1.03 }' "$work/host.loss" > "$work/shift.loss"
gct_compare "$work/host.loss" "$work/spike.loss" 0.02 > /dev/null && bad "step by step, a 10 % spike passed" ||
  ok "step by step, a 10 % spike fails"
d="$(gct_compare "$work/host.loss" "$work/spike.loss" 0.02 10)" && ok "10-step means: the spike passes ($d)" ||
  bad "10-step means: the spike failed ($d)"
d="$(gct_compare "$work/host.loss" "$work/shift.loss" 0.02 10)" && bad "10-step means: 3 % higher passed ($d)" ||
  ok "10-step means: 3 % higher fails ($d)"

# A bundle of fakes that print what a GPU machine's programs would: the tables
# are read into rows, a case's escaped name passes and an unescaped one does not.
fake="$work/fake"
mkdir -p "$fake/bin"
echo "revision=fake" > "$fake/manifest"
cat > "$fake/run" << 'EOF_RUN'
#!/usr/bin/env bash
bin="$(dirname "$0")/bin"
case $1 in
  --check) echo resolves; exit 0 ;;
  --dir) echo /nonexistent; exit 0 ;;
  mpiexec) n=$3; shift 3; [[ $1 == hostname ]] && exec hostname; for ((r = 0; r < n; r++)); do "$bin/$@"; done; exit 0 ;;
esac
p=$1; shift; exec "$bin/$p" "$@"
EOF_RUN
cat > "$fake/bin/zeropp_gpu_check" << 'EOF_GC'
#!/usr/bin/env bash
[[ ${1:-} == --versions ]] && { echo "gpu-check: versions: CUDA driver 13000, runtime 13000, NCCL 22703, cuBLAS 13.1.0"; exit 0; }
cat << 'EOF_OUT'
gpu-check: device 0: Fake H200 (sm_90, 132 SMs, 139.8 GiB); versions
gpu-check: NOT RUN: ncclAlltoAll (NCCL >= 2.28; the loaded NCCL is 22703)

| check | cases | result | first mismatch |
|---|---|---|---|
| quantize int8 | 12 | pass |  |
| cuBLAS GEMM bf16 | 8 | FAIL | batch 0 C[1,2] = 1, host 2 (tolerance 0.1) (op NN) |

| kernel (n = 2^29 floats, block 256) | MB per call | best GB/s | median GB/s | best / copy |
|---|---|---|---|---|
| device-to-device copy | 4294.9 | 3500.0 | 3400.0 | 1.00 |
| quantize int8 | 2684.4 | 3000.0 | 2900.0 | 0.86 |
| dequant-sum int4 (k 8) | 2684.4 | 2000.0 | 1900.0 | 0.57 (below 0.8) |

| GEMM | best TFLOP/s | median TFLOP/s |
|---|---|---|
| cuBLAS bf16 small.toml forward GEMMs (1024 rows) | 300.0 | 290.0 |
EOF_OUT
exit 1
EOF_GC
cat > "$fake/bin/zeropp_cuda_kernel_tests" << 'EOF_KT'
#!/usr/bin/env bash
[[ $1 == --list-test-names-only ]] && { printf 'a case, with a comma\na case [with brackets]\n'; exit 0; }
case $1 in
  'a case\, with a comma') echo "All tests passed (3 assertions in 1 test case)" ;;
  *) echo "No tests ran" ;;
esac
EOF_KT
printf '#!/usr/bin/env bash\necho "All tests passed (40 assertions in 10 test cases)"\n' > "$fake/bin/zeropp_comm_nccl_tests"
printf '#!/usr/bin/env bash\necho "  train.steps  integer"\n' > "$fake/bin/zeropp"
chmod +x "$fake/run" "$fake"/bin/*
GPU_CHECK_OUT="$work/fake-out" timeout 120 bash scripts/gpu-check --bundle "$fake" > "$work/fake.out" 2>&1
rc=$?
((rc == 1)) && ok "a bundle with failures: exit 1" || bad "a bundle with failures: exit $rc"
row_is() {  # part check result
  grep -qF "| $1 | $2 | $3 |" "$work/fake-out/table.md" && ok "row: $2: $3" || bad "no row '$2: $3'"
}
row_is 1 "quantize int8 (12 cases)" pass
row_is 1 "cuBLAS GEMM bf16 (8 cases)" FAIL
row_is 1 "ncclAlltoAll (NCCL >= 2.28; the loaded NCCL is 22703)" "NOT RUN"
row_is 1 "a case, with a comma" pass
row_is 1 "a case [with brackets]" FAIL
row_is 3 "collectives, 4 ranks on one GPU, comm.device_staging: results and bytes = MPI's" pass
row_is 3 "collectives on NCCL, 1 rank: results and bytes = MPI's" pass
row_is 4 "device-to-device copy" info
row_is 4 "quantize int8" pass
row_is 4 "dequant-sum int4 (k 8)" FAIL
row_is 2 "cuBLAS bf16 small.toml forward GEMMs (1024 rows)" info
[[ $(grep -c '| NOT BUILT |' "$work/fake-out/table.md") == 7 ]] && ok "7 rows NOT BUILT" || bad "not 7 rows NOT BUILT"
grep -q '^=== .*/logs/gpu_check.log' "$work/fake-out/failures.log" && ok "tools/gpu_check's output kept with the failures" ||
  bad "tools/gpu_check's output is not in failures.log"

# A stand-in bundle whose programs are this build's, on a machine without a GPU.
if [[ ! -x $bin/zeropp_gpu_check ]]; then
  echo "SKIPPED: the stand-in run (this build has no CUDA)"
elif nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIPPED: the stand-in run (this machine has a GPU)"
else
  mkdir -p "$work/bundle"
  echo "revision=test" > "$work/bundle/manifest"
  # As a bundle's launcher: the programs on PATH, so that mpiexec finds them.
  printf '#!/usr/bin/env bash\nexport PATH=%q:$PATH\ncase $1 in --check) echo resolves; exit 0 ;; --dir) echo %q; exit 0 ;; mpiexec) shift; exec %q "$@" ;; esac\np=$1; shift; exec "$p" "$@"\n' \
    "$bin" "$ZEROPP_SOURCE_DIR" "$MPIEXEC" > "$work/bundle/run"
  chmod +x "$work/bundle/run"
  GPU_CHECK_OUT="$work/out" timeout 300 bash scripts/gpu-check --bundle "$work/bundle" > "$work/check.out" 2>&1
  rc=$?
  grep -E '^\| [0-9]' "$work/out/table.md" | sort -s -t'|' -k2,2n | sed 's/^/    /'
  tail -1 "$work/check.out"
  ((rc == 2)) && ok "gpu-check --bundle without a GPU: exit 2" || bad "gpu-check --bundle without a GPU: exit $rc"
  rows="$(grep -E '^\| [1-4] ' "$work/out/table.md")"
  (($(wc -l <<< "$rows") >= 30)) && ok "$(wc -l <<< "$rows") rows of parts 1 to 4" || bad "only $(wc -l <<< "$rows") rows"
  others="$(awk -F' [|] ' '$3 != "SKIPPED" && $3 != "NOT RUN"' <<< "$rows")"
  [[ -z $others ]] && ok "every row of parts 1 to 4 SKIPPED or NOT RUN" || bad "rows neither skipped nor not run: $others"
  grep -q '^| 0 | mpiexec -n 1 hostname | pass |' "$work/out/table.md" && ok "preflight: mpiexec" || bad "preflight: no mpiexec row"
  grep -q '^| 0 | versions: driver, runtime, NCCL, cuBLAS | info | CUDA driver' "$work/out/table.md" &&
    ok "preflight: versions" || bad "preflight: no versions row"
  tail -4 "$work/check.out" | grep -q '^| [34] ' && ok "the table is printed last" || bad "the table is not last"
  ls "$work/out/logs/case-1.log" "$work/out/logs/comm-staged.log" > /dev/null && ok "logs in GPU_CHECK_OUT" ||
    bad "no logs in GPU_CHECK_OUT"
fi
finish
