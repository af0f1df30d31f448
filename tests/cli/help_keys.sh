#!/usr/bin/env bash
# The key table's outputs: README.md's key table is what `zeropp help keys
# --markdown` prints (else: regenerate with scripts/readme-keys), and `zeropp
# train --help` lists every key with its type, default and meaning but not the
# test-only ones.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}"

if out=$(ZEROPP="$ZEROPP" bash "$ZEROPP_SOURCE_DIR/scripts/readme-keys" --check 2>&1); then
  ok "README key table: $out"
else
  bad "README key table: $out"
fi

help=$("$ZEROPP" train --help 2>&1)
want='  zero.weight_bits = 8  (integer, 8 or 4)'
if grep -qxF -- "$want" <<< "$help" && grep -qF -- "qwZ width" <<< "$help"; then
  ok "train --help lists zero.weight_bits with type, default, allowed values and meaning"
else
  bad "train --help lacks '$want'"
fi
if grep -q 'fault_' <<< "$help"; then bad "train --help shows test-only keys"; else ok "train --help hides test-only keys"; fi
[[ $("$ZEROPP" help keys) == "$(sed -n '/^Deck keys/,$p' <<< "$help")" ]] &&
  ok "help keys prints train --help's key list" || bad "help keys differs from train --help's key list"
finish
