#include "io/checkpoint/shard_staging.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "kernels/runtime/device_memory.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

int64_t shard_staging_chunk() {
  const char* env = std::getenv("ZEROPP_CKPT_CHUNK");
  if (!env) return kShardStagingChunk;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  if (end == env || *end != '\0' || v < 1 || v > kShardStagingChunk)
    throw Error("ZEROPP_CKPT_CHUNK='" + std::string(env) + "': must be a number of floats from 1 to " +
                std::to_string(kShardStagingChunk));
  return v;
}

int64_t chunk_count(int64_t n, int64_t chunk) { return (n + chunk - 1) / chunk; }

ChunkRange chunk_range(int64_t n, int64_t chunk, int64_t i) {
  const int64_t b = std::min(n, i * chunk);
  return {b, std::min(n, b + chunk)};
}

std::vector<int64_t> chunk_rounds(MPI_Comm comm, const ShardGroups& groups, int64_t chunk) {
  std::vector<int64_t> rounds;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) rounds.push_back(chunk_count(s.end - s.begin, chunk));
  ZCHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, rounds.data(), int(rounds.size()), MPI_INT64_T, MPI_MAX, comm));
  return rounds;
}

std::vector<float> shard_chunk_to_host(const TensorShard& s, ChunkRange r) {
  std::vector<float> host(static_cast<size_t>(r.end - r.begin));
  if (!host.empty()) copy_to_host(CVec<float>(s.data + r.begin, int64_t(host.size())), host.data());
  return host;
}

void shard_chunk_from_host(const std::vector<float>& host, const TensorShard& s, ChunkRange r) {
  if (int64_t(host.size()) != r.end - r.begin || r.end > s.end - s.begin)
    fatal("shard_chunk_from_host", __FILE__, __LINE__,
          s.name + ": " + std::to_string(host.size()) + " floats for [" + std::to_string(r.begin) + ", " +
              std::to_string(r.end) + ") of a part of " + std::to_string(s.end - s.begin));
  if (!host.empty()) copy_to_device(host.data(), Vec<float>(s.data + r.begin, int64_t(host.size())));
}

}  // namespace zeropp
