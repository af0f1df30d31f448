// Asynchronous saves (io/checkpoint/checkpoint_async.hpp): the file is byte for byte the
// tensors write_checkpoint writes, from the state at start() whatever the
// caller does with its buffers afterwards; a refusal or a second start are
// handled; `latest` moves only at the commit.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "io/checkpoint/checkpoint_async.hpp"
#include "io/checkpoint/checkpoint_test_support.hpp"

using namespace zeropp;
using namespace zeropp::test;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

std::string latest_in(const SharedDir& dir) {
  std::ifstream in(dir.file("latest"));
  std::string s;
  std::getline(in, s);
  return s;
}

// Every tensor's elements from both files, read with another split, are the same bits.
bool same_tensors(const std::string& a, const std::string& b) {
  const int r = rank_in(), p = size_in();
  Shards ra(kSpecs, random_tiles(r, p, 11), false), rb(kSpecs, random_tiles(r, p, 11), false);
  read_checkpoint(MPI_COMM_WORLD, a, ra.groups);
  read_checkpoint(MPI_COMM_WORLD, b, rb.groups);
  bool same = true;
  for (size_t g = 0; g < ra.buf.size(); ++g)
    for (size_t t = 0; t < ra.buf[g].size(); ++t)
      same = same && ra.buf[g][t].size() == rb.buf[g][t].size() &&
             same_bits(ra.buf[g][t].data(), rb.buf[g][t].data(), int64_t(ra.buf[g][t].size()));
  return all_ranks(same);
}

}  // namespace

TEST_CASE("asynchronous save: the synchronous save's tensors and metadata, from the state at start",
          "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const CheckpointMeta meta = sample_meta(20);
  Shards w(kSpecs, skewed_split(r, p), true, 4);
  write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(10), w.groups, sample_meta(10), 0);

  AsyncCheckpointWriter writer(MPI_COMM_WORLD);
  writer.start(dir.str(), checkpoint_name(20), w.groups, meta, 0, nullptr);
  CHECK(writer.in_flight());
  // The caller's next steps change its buffers: the save holds the state at start.
  for (auto& group : w.buf)
    for (auto& tensor : group)
      for (float& x : tensor) x = -1.0f;
  CHECK(latest_in(dir) == checkpoint_name(10));  // `latest` moves at the commit only
  writer.finish();
  CHECK(!writer.in_flight());
  CHECK(latest_in(dir) == checkpoint_name(20));

  Shards rd(kSpecs, even_split(r, p), false);
  check_meta(read_checkpoint(MPI_COMM_WORLD, dir.file(checkpoint_name(20)), rd.groups), meta);
  CHECK(all_ranks(rd.matches(kSpecs, 4)));
  CHECK(same_tensors(dir.file(checkpoint_name(10)), dir.file(checkpoint_name(20))));
  if (r == 0) {
    const CheckpointReport rep = inspect_checkpoint(dir.file(checkpoint_name(20)));
    CHECK(rep.ok);
    CHECK(rep.datasets.size() == kGroups.size() * kSpecs.size() + 5);
    CHECK(rep.datasets.back().path == "/optimizer/exp_avg_sq/long");  // creation order as write_checkpoint's
  }

  // The snapshot's buffers are kept for the next save (same sizes: no new allocation).
  int64_t mine = 0;
  for (const auto& group : w.buf)
    for (const auto& tensor : group) mine += int64_t(tensor.size() * 4);
  CHECK(writer.snapshot_bytes() == mine);
  Shards w2(kSpecs, skewed_split(r, p), true, 6);
  writer.start(dir.str(), checkpoint_name(30), w2.groups, sample_meta(30), 2, nullptr);
  while (!writer.advance()) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // as the loop polls
  CHECK(!writer.in_flight());
  writer.finish();  // nothing left to do
  Shards rd2(kSpecs, random_tiles(r, p, 5), false);
  CHECK(read_checkpoint(MPI_COMM_WORLD, resolve_checkpoint("auto", dir.str()), rd2.groups).step == 30);
  CHECK(all_ranks(rd2.matches(kSpecs, 6)));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(!fs::exists(dir.file(checkpoint_name(10))));  // retention: keep 2
}

TEST_CASE("asynchronous save refused on one rank: one error everywhere, nothing left, `latest` unchanged",
          "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  Shards w(kSpecs, even_split(r, p), true);
  write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(1), w.groups, sample_meta(1), 0);
  AsyncCheckpointWriter writer(MPI_COMM_WORLD);
  const int refusing = p - 1;
  writer.start(dir.str(), checkpoint_name(2), w.groups, sample_meta(2), 0,
               [&](const ShardGroups& snapshot) -> std::optional<std::string> {
                 if (r != refusing) return std::nullopt;
                 return "refused " + snapshot.front().first;
               });
  CHECK_THROWS_WITH(writer.finish(), Contains("refused model"));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(latest_in(dir) == checkpoint_name(1));
  CHECK(!fs::exists(dir.file(checkpoint_name(2))));
  CHECK(!fs::exists(dir.file("." + checkpoint_name(2) + ".tmp")));
  // Bad arguments are refused at start, before anything is written.
  CHECK_THROWS_WITH(writer.start(dir.str(), "latest", w.groups, sample_meta(3), 0, nullptr),
                    Contains("bad file name 'latest'"));
  CHECK(!writer.in_flight());
}
