#!/usr/bin/env bash
# cmake/GitRevision.cmake, which the build runs: the checkout's `git describe`,
# "unknown" for a tarball (no .git) and for a tarball unpacked inside another
# git checkout (whose revision is not ours); an unchanged revision leaves the
# generated file alone. Under a second.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP_SOURCE_DIR:?}"
script=$ZEROPP_SOURCE_DIR/cmake/GitRevision.cmake
revision() {  # revision SRC: what the generated file returns
  cmake -DSRC="$1" -DOUT="$work/out.cpp" -P "$script" || return 1
  sed -nE 's/.*return "([^"]*)";.*/\1/p' "$work/out.cpp"
}

mkdir -p "$work/tarball"
got=$(revision "$work/tarball")
if [[ $got == unknown ]]; then ok "a tree without .git: unknown"; else bad "a tree without .git: '$got'"; fi

if command -v git > /dev/null; then
  git init -q "$work/outer" && mkdir -p "$work/outer/zeropp" &&
    git -C "$work/outer" -c user.name=t -c user.email=t@t commit -q --allow-empty -m x
  got=$(revision "$work/outer/zeropp")
  if [[ $got == unknown ]]; then ok "a tarball inside another checkout: unknown"
  else bad "a tarball inside another checkout: '$got'"; fi
  if git -C "$ZEROPP_SOURCE_DIR" rev-parse --show-toplevel > /dev/null 2>&1; then
    want=$(git -C "$ZEROPP_SOURCE_DIR" describe --always --dirty --abbrev=12)
    got=$(revision "$ZEROPP_SOURCE_DIR")
    if [[ $got == "$want" ]]; then ok "this checkout: $got"; else bad "this checkout: '$got', git says '$want'"; fi
  fi
else
  echo "git not installed: the checkout cases are not run"
fi
revision "$work/tarball" > /dev/null
touch -d '2000-01-01' "$work/out.cpp"
revision "$work/tarball" > /dev/null
if [[ $(stat -c %Y "$work/out.cpp") -lt 1000000000 ]]; then ok "an unchanged revision does not rewrite the file"
else bad "the generated file was rewritten"; fi
finish
