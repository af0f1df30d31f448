#!/usr/bin/env bash
# src/models works on buffers that may live on a GPU (kernels/runtime/device_context.hpp):
# it calls kernels, buffer operations and transfers, never Kokkos itself
# (no Kokkos::, KOKKOS_ macros, Buf<T> Views, parallel loops or deep copies);
# lists the lines that do.
set -euo pipefail
cd "${ZEROPP_SOURCE_DIR:?}"
mapfile -t files < <(find src/models -name '*.cpp' -o -name '*.hpp')
if [[ ${#files[@]} -lt 10 ]]; then
  echo "models_no_kokkos: only ${#files[@]} sources found under $PWD/src/models"
  exit 1
fi
if grep -nE 'Kokkos::|KOKKOS_|\bBuf<|\bRange\(|parallel_(for|reduce|scan)|deep_copy|for_(element|column)_chunks' "${files[@]}"; then
  echo "models_no_kokkos: src/models calls Kokkos directly (lines above); use kernels/ entry points," \
    "kernels/ops/buffer_ops.hpp and Buffer<T> (kernels/runtime/device_buffer.hpp)"
  exit 1
fi
echo "models_no_kokkos: ${#files[@]} sources, no Kokkos"
