#include "io/shard_staging.hpp"

#include <string>

#include "kernels/device_memory.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

std::vector<float> shard_to_host(const TensorShard& s) {
  std::vector<float> host(static_cast<size_t>(s.end - s.begin));
  if (!host.empty()) copy_to_host(CVec<float>(s.data, int64_t(host.size())), host.data());
  return host;
}

void shard_from_host(const std::vector<float>& host, const TensorShard& s) {
  if (int64_t(host.size()) != s.end - s.begin)
    fatal("shard_from_host", __FILE__, __LINE__,
          s.name + ": " + std::to_string(host.size()) + " floats for a part of " +
              std::to_string(s.end - s.begin));
  if (!host.empty()) copy_to_device(host.data(), Vec<float>(s.data, int64_t(host.size())));
}

}  // namespace zeropp
