#!/usr/bin/env bash
# src/zero keeps no direct Kokkos call: the engine's buffers may live
# on the GPU, where only kernels/ entry points, buffer operations
# (kernels/ops/buffer_ops.hpp), explicit transfers and communicator calls may touch
# them. Comments naming Kokkos are fine; `Kokkos::` in code is not.
source "$(dirname "$0")/lib.bash"
cd "${ZEROPP_SOURCE_DIR:?}/src/zero" || exit 1
# Lines whose code (before any // comment) names the Kokkos namespace.
hits=$(grep -n 'Kokkos::' -- *.cpp *.hpp | grep -v '^[^:]*:[0-9]*:[^"]*//.*Kokkos::' || true)
if [[ -z $hits ]]; then
  ok "src/zero: no Kokkos:: in code"
else
  bad "src/zero calls Kokkos directly (use kernels/ops/buffer_ops.hpp):"
  echo "$hits"
fi
finish
