// Checkpoints (io/checkpoint/checkpoint.hpp) that must come back as written: hyperslabs
// of flat ranges, the split-independent checksum, bitwise round trips of every
// dataset and the metadata, resharding on read; hidden cases that write files
// for the Python reader (ctest ckpt_py_*) and the bandwidth benchmark.
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint_test_support.hpp"

using namespace zeropp;
using namespace zeropp::test;
namespace fs = std::filesystem;

TEST_CASE("flat ranges become at most 2*rank-1 hyperslabs covering exactly the range", "[ckpt]") {
  const std::vector<std::vector<int64_t>> shapes = {{7}, {3, 5}, {2, 3, 4}, {3, 1, 2, 3}, {1, 1, 6}};
  for (const auto& shape : shapes) {
    const int64_t n = numel(shape);
    std::vector<int64_t> stride(shape.size(), 1);
    for (size_t k = shape.size() - 1; k > 0; --k) stride[k - 1] = stride[k] * shape[k];
    for (int64_t b = 0; b <= n; ++b)
      for (int64_t e = b; e <= n; ++e) {
        const auto slabs = flat_range_hyperslabs(shape, b, e);
        CHECK(slabs.size() <= 2 * shape.size() - 1);
        // Enumerate the slabs in row-major order: they must give b, b+1, ..., e-1.
        std::vector<int64_t> got;
        for (const Hyperslab& h : slabs) {
          std::vector<int64_t> idx(shape.size(), 0);
          while (true) {
            int64_t flat = 0;
            for (size_t k = 0; k < shape.size(); ++k) flat += (h.start[k] + idx[k]) * stride[k];
            got.push_back(flat);
            size_t k = shape.size();
            while (k > 0 && ++idx[k - 1] == h.count[k - 1]) idx[--k] = 0;
            if (k == 0) break;
          }
        }
        std::vector<int64_t> want;
        for (int64_t i = b; i < e; ++i) want.push_back(i);
        CHECK(got == want);
      }
  }
  CHECK(flat_range_hyperslabs({}, 0, 1).size() == 1);
  CHECK(flat_range_hyperslabs({4, 0}, 0, 0).empty());
}

TEST_CASE("checksum does not depend on the split and sees a single bit", "[ckpt]") {
  const std::vector<float> v = full_tensor(0, 0, 1001);
  const uint64_t whole = checksum_part(v.data(), 0, 1001);
  for (int64_t cut : {0, 1, 2, 500, 999, 1001}) {
    CHECK(checksum_part(v.data(), 0, cut) + checksum_part(v.data() + cut, cut, 1001 - cut) == whole);
  }
  std::vector<float> w = v;
  uint32_t bits;
  std::memcpy(&bits, &w[321], 4);
  bits ^= 1u;
  std::memcpy(&w[321], &bits, 4);
  CHECK(checksum_part(w.data(), 0, 1001) != whole);
  std::swap(w[10], w[11]);  // swapping elements is seen too
  std::vector<float> s = v;
  std::swap(s[10], s[11]);
  CHECK(checksum_part(s.data(), 0, 1001) != whole);
  // Pinned values: the C++ and Python implementations and the docs agree.
  CHECK(checksum_element(0, 0) == 0);
  CHECK(checksum_element(1, 0x3F800000u) == 0x7FEFAB40868A16A4ULL);
}

TEST_CASE("checkpoint round trip is bitwise for every dataset and the metadata", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const CheckpointMeta meta = sample_meta(10);
  {
    Shards w(kSpecs, even_split(r, p), true);
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(10), w.groups, meta, 0);
  }
  const std::string path = dir.file("step_00000010.h5");
  CHECK(resolve_checkpoint("auto", dir.str()) == path);
  Shards rd(kSpecs, even_split(r, p), false);
  const CheckpointMeta got = read_checkpoint(MPI_COMM_WORLD, path, rd.groups);
  CHECK(all_ranks(rd.matches(kSpecs)));
  check_meta(got, meta);
  if (r == 0) {
    const CheckpointReport rep = inspect_checkpoint(path);
    CHECK(rep.ok);
    CHECK(rep.format_version == kCheckpointFormatVersion);
    CHECK(rep.bytes == int64_t(fs::file_size(path)));
    CHECK(rep.datasets.size() == kGroups.size() * kSpecs.size() + 5);  // + 3 scalars + 2 words
    CHECK(rep.datasets.front().path == "/state/scalars/lr");           // creation order
    CHECK(rep.datasets.back().path == "/optimizer/exp_avg_sq/long");
    for (const DatasetReport& d : rep.datasets) CHECK(d.checksum_ok);
    check_meta(rep.meta, meta);
  }
}

TEST_CASE("checkpoint written with one split reads back with another", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const std::string path = dir.file(checkpoint_name(3));
  {
    Shards w(kSpecs, skewed_split(r, p), true, 5);
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(3), w.groups, sample_meta(3), 0);
  }
  SECTION("random tiles") {
    Shards rd(kSpecs, random_tiles(r, p, 99), false);
    read_checkpoint(MPI_COMM_WORLD, path, rd.groups);
    CHECK(all_ranks(rd.matches(kSpecs, 5)));
  }
  SECTION("overlapping ranges of P+1 virtual ranks") {
    Shards rd(kSpecs, overlapping(r, p), false);
    read_checkpoint(MPI_COMM_WORLD, path, rd.groups);
    CHECK(all_ranks(rd.matches(kSpecs, 5)));
  }
  SECTION("a part of every tensor only") {
    Shards rd(kSpecs, middle_third(), false);
    read_checkpoint(MPI_COMM_WORLD, path, rd.groups);
    CHECK(all_ranks(rd.matches(kSpecs, 5)));
  }
  SECTION("every rank everything through MPI_COMM_SELF") {
    Shards rd(kSpecs, everything(), false);
    const CheckpointMeta got = read_checkpoint(MPI_COMM_SELF, path, rd.groups);
    CHECK(all_ranks(rd.matches(kSpecs, 5)));
    check_meta(got, sample_meta(3));
  }
  SECTION("the model group alone, with rank 0 holding everything") {
    const Split split = [r](int64_t n, size_t) { return std::pair<int64_t, int64_t>{0, r == 0 ? n : 0}; };
    Shards rd(kSpecs, split, false);
    rd.groups.resize(1);
    read_checkpoint(MPI_COMM_WORLD, path, rd.groups);
    bool ok = true;
    for (size_t t = 0; t < kSpecs.size(); ++t) {
      const auto full = full_tensor(0, t, numel(kSpecs[t].shape), 5);
      const auto& s = rd.groups[0].second[t];
      ok = ok && same_bits(full.data() + s.begin, s.data, s.end - s.begin);
    }
    CHECK(all_ranks(ok));
  }
}

// ---------------------------------------------------------------------------
// For scaling/read_checkpoint.py (ctest ckpt_py_*): a good checkpoint under
// $ZEROPP_CKPT_PY_DIR/good and a copy with one flipped byte, bad.h5.

TEST_CASE("checkpoint files for the Python reader", "[.ckpt-py]") {
  const std::string where = env_or("ZEROPP_CKPT_PY_DIR", "");
  REQUIRE(!where.empty());
  SharedDir dir(where.c_str());
  const int r = rank_in(), p = size_in();
  Shards w(kSpecs, even_split(r, p), true);
  CheckpointMeta meta = sample_meta(7);
  meta.deck_toml = "[model]\nn_layer = 2\n";
  write_checkpoint(MPI_COMM_WORLD, dir.file("good"), checkpoint_name(7), w.groups, meta, 0);
  if (r == 0) {
    const std::string good = dir.file("good/" + checkpoint_name(7)), bad = dir.file("bad.h5");
    fs::copy_file(good, bad);
    hsize_t bytes = 0;
    const haddr_t off = dataset_offset(bad, "/model/wte.weight", &bytes);
    flip_byte(bad, off + 5);
  }
}

// ---------------------------------------------------------------------------
// Benchmark (docs/performance.md): ~200 MB of GPT-2-like tensors in three
// groups, evenly split; raw write+fsync of the same bytes by rank 0 in the
// same directory, alternated with checkpoint writes and reads.
// ZEROPP_CKPT_BENCH_DIR (default: the temp dir), ZEROPP_CKPT_BENCH_REPS (6, the
// first a warm-up left out of the medians).

TEST_CASE("checkpoint write/read bandwidth against raw write+fsync", "[.ckpt-bench]") {
  const std::string base = env_or("ZEROPP_CKPT_BENCH_DIR", fs::temp_directory_path().string());
  const int reps = std::stoi(env_or("ZEROPP_CKPT_BENCH_REPS", "6"));
  const std::string where = (fs::path(base) / "zeropp-ckpt-bench").string();
  SharedDir dir(where.c_str());
  dir.remove = true;
  const int r = rank_in(), p = size_in();
  std::vector<Spec> specs = {{"wte.weight", {4096, 768}}, {"wpe.weight", {1024, 768}}};
  for (int l = 0; l < 2; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    specs.push_back({h + "ln_1.weight", {768}});
    specs.push_back({h + "attn.c_attn.weight", {768, 2304}});
    specs.push_back({h + "attn.c_attn.bias", {2304}});
    specs.push_back({h + "attn.c_proj.weight", {768, 768}});
    specs.push_back({h + "mlp.c_fc.weight", {768, 3072}});
    specs.push_back({h + "mlp.c_fc.bias", {3072}});
    specs.push_back({h + "mlp.c_proj.weight", {3072, 768}});
  }
  int64_t total = 0;
  for (const Spec& s : specs) total += numel(s.shape) * 4 * int64_t(kGroups.size());
  const double mb = double(total) / 1e6;
  Shards w(specs, even_split(r, p), true);
  Shards rd(specs, even_split(r, p), false);
  std::vector<char> block(size_t(8) << 20, 'z');
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  auto evict = [](const std::string& f) {
    const int fd = ::open(f.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fdatasync(fd);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
  };
  std::vector<double> ratios_w, ratios_r, ratios_rw;
  if (r == 0)
    std::printf("ckpt-bench: P=%d, %.1f MB of tensors in %zu datasets, dir %s\n", p, mb,
                specs.size() * kGroups.size(), dir.str().c_str());
  for (int rep = 0; rep < reps; ++rep) {
    // Raw: rank 0 writes the same number of bytes sequentially and fsyncs.
    double raw_w = 0, raw_r = 0;
    if (r == 0) {
      const std::string f = dir.file("raw.bin");
      auto t0 = now();
      const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      for (int64_t done = 0; done < total;) {
        const size_t n = size_t(std::min<int64_t>(total - done, int64_t(block.size())));
        REQUIRE(::write(fd, block.data(), n) == ssize_t(n));
        done += int64_t(n);
      }
      REQUIRE(::fsync(fd) == 0);
      ::close(fd);
      raw_w = mb / secs(t0, now());
      evict(f);
      t0 = now();
      const int rfd = ::open(f.c_str(), O_RDONLY);
      while (::read(rfd, block.data(), block.size()) > 0) {
      }
      ::close(rfd);
      raw_r = mb / secs(t0, now());
      fs::remove(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = now();
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(rep), w.groups, sample_meta(rep), 0);
    const double ck_w = mb / secs(t0, now());
    const std::string path = dir.file(checkpoint_name(rep));
    if (r == 0) evict(path);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    read_checkpoint(MPI_COMM_WORLD, path, rd.groups);
    const double ck_r = mb / secs(t0, now());
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    read_checkpoint(MPI_COMM_WORLD, path, rd.groups);
    const double ck_rw = mb / secs(t0, now());
    CHECK(all_ranks(rd.matches(specs)));
    if (r == 0) {
      const double file_mb = double(fs::file_size(path)) / 1e6;
      // Retention's cost, apart: deleting one old checkpoint of this size.
      t0 = now();
      fs::remove(path);
      const double del = secs(t0, now());
      std::printf(
          "ckpt-bench: rep %d  raw write+fsync %7.1f MB/s  checkpoint write %7.1f MB/s (%.2f of raw)  "
          "raw read (cold) %7.1f MB/s  checkpoint read cold %7.1f MB/s (%.2f of raw read)  warm %7.1f MB/s  "
          "file %.1f MB, deleting it %.3f s\n",
          rep, raw_w, ck_w, ck_w / raw_w, raw_r, ck_r, ck_r / raw_r, ck_rw, file_mb, del);
      if (rep > 0) {  // rep 0 warms up (a fresh VM's first use of memory is slow)
        ratios_w.push_back(ck_w / raw_w);
        ratios_r.push_back(ck_r / raw_r);
        ratios_rw.push_back(ck_r / raw_w);
      }
    }
    std::fflush(stdout);
  }
  if (r == 0 && !ratios_w.empty()) {
    std::sort(ratios_w.begin(), ratios_w.end());
    std::sort(ratios_r.begin(), ratios_r.end());
    std::sort(ratios_rw.begin(), ratios_rw.end());
    std::printf(
        "ckpt-bench: P=%d median over reps 1..%d: checkpoint write %.2f of raw write; checkpoint read (cold) "
        "%.2f of raw write, %.2f of raw read\n",
        p, reps - 1, ratios_w[ratios_w.size() / 2], ratios_rw[ratios_rw.size() / 2],
        ratios_r[ratios_r.size() / 2]);
  }
}
