// Non-finite numbers in training: the line that stops a run whose loss or
// gradient norm is NaN/inf, and the check that keeps such weights out of
// checkpoints (so that neither `latest` nor retention ever prefers them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp {

// "step 7: loss is nan (gradient norm inf) - stopping; last good checkpoint: PATH"
// (PATH "none" when nothing was saved or resumed from).
std::string non_finite_message(int64_t step, double loss, double grad_norm, const std::string& last_saved);

// "/group/name[i]" of the first NaN or inf in this rank's shards (i: flat index
// in the tensor), or nothing when all are finite.
std::optional<std::string> first_non_finite(const ShardGroups& groups);
// The same for shards whose data is host memory (a checkpoint's snapshot): no
// device call, so any thread may run it.
std::optional<std::string> first_non_finite_on_host(const ShardGroups& groups);

}  // namespace zeropp
