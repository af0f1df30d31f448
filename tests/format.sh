#!/usr/bin/env bash
# Every tracked C/C++/CUDA file is as clang-format (the repository's
# .clang-format) writes it; lists the files that are not.
set -euo pipefail
cd "${ZEROPP_SOURCE_DIR:?}"
if ! command -v clang-format > /dev/null; then
  echo "SKIPPED: clang-format is not installed (scripts/setup installs it)"
  exit 77
fi
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run --Werror "$f" > /dev/null 2>&1; then
    echo "not clang-formatted: $f (run: clang-format -i $f)"
    bad=$((bad + 1))
  fi
done < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' 2> /dev/null || find src io kernels tests bench tools -name '*.[ch]pp' -o -name '*.cu' -o -name '*.cuh')
echo "$bad files not clang-formatted"
[[ $bad -eq 0 ]]
