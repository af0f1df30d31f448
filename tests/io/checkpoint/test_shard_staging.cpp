// Host copies of a tensor part in chunks (io/checkpoint/shard_staging.hpp): the chunk
// arithmetic, the copies both ways, ZEROPP_CKPT_CHUNK. The checkpoints written
// and read in chunks of 7 floats: ctest ckpt_chunked_np2 ([ckpt] on 2 ranks).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "io/checkpoint/shard_staging.hpp"
#include "kernels/runtime/device_buffer.hpp"
#include "src/base/errors.hpp"

using namespace zeropp;

TEST_CASE("chunks of a part: count, ranges covering it once, empty past the last", "[io]") {
  CHECK(chunk_count(0, 4) == 0);
  CHECK(chunk_count(1, 4) == 1);
  CHECK(chunk_count(8, 4) == 2);
  CHECK(chunk_count(9, 4) == 3);
  for (int64_t n : {1, 7, 8, 9, 100})
    for (int64_t chunk : {1, 3, 4, 7, 1000}) {
      int64_t next = 0;
      for (int64_t i = 0; i < chunk_count(n, chunk); ++i) {
        const ChunkRange r = chunk_range(n, chunk, i);
        CHECK(r.begin == next);
        CHECK(r.end > r.begin);
        CHECK(r.end - r.begin <= chunk);
        next = r.end;
      }
      CHECK(next == n);
      const ChunkRange past = chunk_range(n, chunk, chunk_count(n, chunk) + 2);
      CHECK(past.begin == n);
      CHECK(past.end == n);
    }
}

TEST_CASE("a part copied to the host and back chunk by chunk", "[io]") {
  const int64_t n = 23, chunk = 5;
  Buffer<float> engine("part", n), back("part back", n);
  std::vector<float> want(n);
  std::iota(want.begin(), want.end(), 1.0f);
  copy_to_device(want.data(), engine.view());
  TensorShard s{"w", {n + 10}, 10, 10 + n, engine.data()}, t = s;
  t.data = back.data();
  std::vector<float> got;
  for (int64_t i = 0; i < chunk_count(n, chunk); ++i) {
    const std::vector<float> part = shard_chunk_to_host(s, chunk_range(n, chunk, i));
    got.insert(got.end(), part.begin(), part.end());
    shard_chunk_from_host(part, t, chunk_range(n, chunk, i));
  }
  CHECK(got == want);
  CHECK(to_host(back) == want);
}

TEST_CASE("ZEROPP_CKPT_CHUNK: a smaller chunk for tests, anything else named", "[io]") {
  unsetenv("ZEROPP_CKPT_CHUNK");
  CHECK(shard_staging_chunk() == kShardStagingChunk);
  setenv("ZEROPP_CKPT_CHUNK", "7", 1);
  CHECK(shard_staging_chunk() == 7);
  for (const char* bad : {"0", "-3", "7x", "", "4194305"}) {
    setenv("ZEROPP_CKPT_CHUNK", bad, 1);
    CHECK_THROWS_WITH(shard_staging_chunk(),
                      Catch::StartsWith("ZEROPP_CKPT_CHUNK='" + std::string(bad) + "'"));
  }
  unsetenv("ZEROPP_CKPT_CHUNK");
}
