// A rank's part of a tensor (TensorShard::data) is engine memory: on the GPU
// in a device run, and behind the poisoned arena in the host tests
// (kernels/runtime/device_memory.hpp). Checkpoint files and the checks on their
// values see it only through these host copies, one chunk of a tensor part at
// a time, so that the host needs a bounded buffer whatever the tensor's size.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp {

// Host copies move in chunks of at most this many floats (fixed: 4 Mi floats,
// 16 MiB). ZEROPP_CKPT_CHUNK (floats, 1 to this) sets a smaller one, for tests.
constexpr int64_t kShardStagingChunk = int64_t(1) << 22;
// Chunks a checkpoint's checksum thread may hold queued (io/checkpoint/checksum_worker.hpp).
constexpr size_t kChecksumQueue = 2;
// A checkpoint's host memory at most: the queued chunks, the one being
// checksummed and the one being written or read.
constexpr int64_t kShardStagingHostBytes = int64_t(kChecksumQueue + 2) * 4 * kShardStagingChunk;

// The chunk in use: kShardStagingChunk or ZEROPP_CKPT_CHUNK; Error naming
// the variable when it is not an integer in [1, kShardStagingChunk].
int64_t shard_staging_chunk();

// Chunk i of a part of n floats in chunks of `chunk`: [begin, end) relative to
// the part's start, empty (begin = end = n) past the last; chunk_count of them.
struct ChunkRange {
  int64_t begin = 0, end = 0;
};
int64_t chunk_count(int64_t n, int64_t chunk);
ChunkRange chunk_range(int64_t n, int64_t chunk, int64_t i);

// Collective over comm: for each part of `groups` in order, the most chunks
// any rank's part has. Collective HDF5 reads and writes go in that many
// rounds on every rank (a rank past its last chunk joins with an empty one).
std::vector<int64_t> chunk_rounds(MPI_Comm comm, const ShardGroups& groups, int64_t chunk);

// Floats [r.begin, r.end) of the shard's part, copied to the host.
std::vector<float> shard_chunk_to_host(const TensorShard& s, ChunkRange r);
// The same floats = host (host.size() == r.end - r.begin).
void shard_chunk_from_host(const std::vector<float>& host, const TensorShard& s, ChunkRange r);

}  // namespace zeropp
