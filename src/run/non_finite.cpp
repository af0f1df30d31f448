#include "src/run/non_finite.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

#include "io/checkpoint/shard_staging.hpp"

namespace zeropp {

namespace {
// "nan" whatever its sign bit (printf may say "-nan"), else %g.
std::string number(double x) {
  if (std::isnan(x)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}
}  // namespace

std::string non_finite_message(int64_t step, double loss, double grad_norm, const std::string& last_saved) {
  return "step " + std::to_string(step) + ": loss is " + number(loss) + " (gradient norm " +
         number(grad_norm) +
         ") - stopping; last good checkpoint: " + (last_saved.empty() ? std::string("none") : last_saved);
}

namespace {
// "/group/name[i]" of the first NaN or inf in n host floats from flat index `first`.
std::optional<std::string> first_in(const float* p, size_t n, const std::string& g, const TensorShard& s,
                                    int64_t first) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return "/" + g + "/" + s.name + "[" + std::to_string(first + int64_t(i)) + "]";
  return std::nullopt;
}
}  // namespace

std::optional<std::string> first_non_finite(const ShardGroups& groups) {
  const int64_t chunk = shard_staging_chunk();
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards)
      for (int64_t c = 0; c < chunk_count(s.end - s.begin, chunk); ++c) {
        const ChunkRange r = chunk_range(s.end - s.begin, chunk, c);
        // engine memory: on the device in a GPU run
        const std::vector<float> part = shard_chunk_to_host(s, r);
        if (auto bad = first_in(part.data(), part.size(), g, s, s.begin + r.begin)) return bad;
      }
  return std::nullopt;
}

std::optional<std::string> first_non_finite_on_host(const ShardGroups& groups) {
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards)
      if (auto bad = first_in(s.data, size_t(s.end - s.begin), g, s, s.begin)) return bad;
  return std::nullopt;
}

}  // namespace zeropp
