// Shared by the checkpoint tests (tests/io/test_checkpoint_*.cpp): a directory
// every rank knows, tensors of odd shapes with random bit patterns, per-rank
// shards under several splits, sample metadata and checkpoints, and byte
// surgery on a file.
#pragma once

#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"
#include "io/io_test_support.hpp"

namespace zeropp::test {

inline int rank_in(MPI_Comm c = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
inline int size_in(MPI_Comm c = MPI_COMM_WORLD) {
  int p = 1;
  MPI_Comm_size(c, &p);
  return p;
}

// A directory that rank 0 creates (fresh, or the given one emptied) and every
// rank knows; rank 0 removes a fresh one when the test case ends.
struct SharedDir {
  std::filesystem::path path;
  bool remove = true;
  explicit SharedDir(const char* fixed = nullptr) {
    char name[1024] = {};
    if (rank_in() == 0) {
      if (fixed) {
        std::error_code ec;
        std::filesystem::remove_all(fixed, ec);
        std::filesystem::create_directories(fixed, ec);
        std::snprintf(name, sizeof name, "%s", fixed);
      } else {
        std::string tmpl = (std::filesystem::temp_directory_path() / "zeropp-ckpt-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) != nullptr) std::snprintf(name, sizeof name, "%s", tmpl.c_str());
      }
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    path = name;
    remove = fixed == nullptr;
    REQUIRE(!path.empty());
  }
  ~SharedDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ec;
    if (rank_in() == 0 && remove) std::filesystem::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
  std::string file(const std::string& n) const { return (path / n).string(); }
};

struct Spec {
  std::string name;
  std::vector<int64_t> shape;
};

// Odd shapes: 1-D and 2-D not divisible by the rank count, a 3-D and a 4-D
// tensor, a scalar, an empty tensor, single elements.
inline const std::vector<Spec> kSpecs = {
    {"wte.weight", {37, 11}},
    {"wpe.weight", {5, 3}},
    {"h.0.ln_1.bias", {13}},
    {"h.0.attn.c_attn.weight", {17, 29}},
    {"one", {1}},
    {"row", {1, 7}},
    {"col", {9, 1}},
    {"cube", {3, 5, 7}},
    {"four", {2, 3, 2, 5}},
    {"scalar", {}},
    {"empty", {0}},
    {"empty2d", {4, 0}},
    {"long", {1031}},
};
inline const std::vector<std::string> kGroups = {"model", "optimizer/exp_avg", "optimizer/exp_avg_sq"};

inline int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Random bit patterns (NaNs with payloads, denormals, -0 included): the round
// trip must be bitwise. Deterministic in (group, tensor, salt) on every rank.
inline std::vector<float> full_tensor(size_t g, size_t t, int64_t n, uint32_t salt = 0) {
  std::mt19937 gen(uint32_t(1000 * g + t + 7919 * salt + 1));
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    const uint32_t bits = gen();
    std::memcpy(&x, &bits, 4);
  }
  return v;
}

using Split = std::function<std::pair<int64_t, int64_t>(int64_t n, size_t tensor)>;

// Per-rank buffers for all groups and tensors under one split.
// n floats, bit for bit; memcmp with the null data() of an empty shard would be undefined.
inline bool same_bits(const float* a, const float* b, int64_t n) {
  return n == 0 || std::memcmp(a, b, size_t(n) * 4) == 0;
}

struct Shards {
  std::vector<std::vector<std::vector<float>>> buf;  // [group][tensor]
  ShardGroups groups;
  Shards(const std::vector<Spec>& specs, const Split& split, bool fill, uint32_t salt = 0) {
    buf.resize(kGroups.size());
    for (size_t g = 0; g < kGroups.size(); ++g) {
      std::vector<TensorShard> shards;
      buf[g].resize(specs.size());
      for (size_t t = 0; t < specs.size(); ++t) {
        const int64_t n = numel(specs[t].shape);
        const auto [b, e] = split(n, t);
        if (fill) {
          const std::vector<float> full = full_tensor(g, t, n, salt);
          buf[g][t].assign(full.begin() + b, full.begin() + e);
        } else {
          buf[g][t].assign(size_t(e - b), 0.0f);
        }
        TensorShard s;
        s.name = specs[t].name;
        s.shape = specs[t].shape;
        s.begin = b;
        s.end = e;
        s.data = buf[g][t].data();
        shards.push_back(s);
      }
      groups.emplace_back(kGroups[g], std::move(shards));
    }
  }
  // Whether every shard holds exactly the bits of the full tensors.
  bool matches(const std::vector<Spec>& specs, uint32_t salt = 0) const {
    for (size_t g = 0; g < kGroups.size(); ++g)
      for (size_t t = 0; t < specs.size(); ++t) {
        const TensorShard& s = groups[g].second[t];
        const std::vector<float> full = full_tensor(g, t, numel(specs[t].shape), salt);
        if (!same_bits(full.data() + s.begin, buf[g][t].data(), s.end - s.begin)) return false;
      }
    return true;
  }
};

inline Split even_split(int r, int p) {
  return [=](int64_t n, size_t) { return std::pair<int64_t, int64_t>{n * r / p, n * (r + 1) / p}; };
}
// Uneven: the last rank takes half, the others share the rest; rank 0 is empty
// for every other tensor (its part goes to rank 1 or, at P=1, nowhere is empty).
inline Split skewed_split(int r, int p) {
  return [=](int64_t n, size_t t) {
    if (p == 1) return std::pair<int64_t, int64_t>{0, n};
    const int64_t half = n / 2;
    std::vector<int64_t> cut(size_t(p) + 1);
    for (int i = 0; i <= p - 1; ++i) cut[size_t(i)] = half * i / (p - 1);
    cut[size_t(p)] = n;
    if (t % 2 == 0) cut[1] = 0;
    return std::pair<int64_t, int64_t>{cut[size_t(r)], cut[size_t(r) + 1]};
  };
}
// Tiles at random cut points (the same on every rank).
inline Split random_tiles(int r, int p, uint32_t seed) {
  return [=](int64_t n, size_t t) {
    std::mt19937 gen(seed + uint32_t(t));
    std::vector<int64_t> cut(size_t(p) + 1, 0);
    for (int i = 1; i < p; ++i) cut[size_t(i)] = n ? int64_t(gen() % uint64_t(n + 1)) : 0;
    cut[size_t(p)] = n;
    std::sort(cut.begin(), cut.end());
    return std::pair<int64_t, int64_t>{cut[size_t(r)], cut[size_t(r) + 1]};
  };
}
// "Virtual ranks" of a different count that overlap and do not tile: rank r
// reads virtual ranks r and r+1 of P+1 (the last one of P+1 is read twice at P=1).
inline Split overlapping(int r, int p) {
  return [=](int64_t n, size_t) {
    return std::pair<int64_t, int64_t>{n * r / (p + 1), std::min(n, n * (r + 2) / (p + 1))};
  };
}
inline Split everything() {
  return [](int64_t n, size_t) { return std::pair<int64_t, int64_t>{0, n}; };
}
// A part of a partial range: the middle third only (does not cover the tensor).
inline Split middle_third() {
  return [](int64_t n, size_t) { return std::pair<int64_t, int64_t>{n / 3, 2 * n / 3}; };
}

inline CheckpointMeta sample_meta(int64_t step) {
  CheckpointMeta m;
  m.step = step;
  m.tokens_seen = step * 4096 + (int64_t(1) << 40);
  m.seed = 0xF00DFACE12345678ULL;
  m.deck_toml = "[model]\nn_layer = 2\n# ünïcode\n" + std::string(100000, 'x') + "\n";  // > 64 KiB attribute
  m.zero_toml = "[zero]\nstage = 3\nhpz = 2\n";
  m.code_version = "0.1.0-test";
  m.world_size = size_in();
  m.ranks_per_node = 2;
  m.nodes = (size_in() + 1) / 2;
  m.scalars = {{"lr", {3e-4}}, {"schedule", {0.1, -2.5, 1e300}}, {"nothing", {}}};
  m.words = {{"rng", {0xFFFFFFFFFFFFFFFFULL, 1, 0x8000000000000001ULL}}, {"data.position", {12345}}};
  return m;
}

// Writes kSpecs, evenly split, with sample_meta(step) as checkpoint_name(step)
// in dir; returns its path.
inline std::string write_sample_checkpoint(const SharedDir& dir, int64_t step) {
  Shards w(kSpecs, even_split(rank_in(), size_in()), true);
  write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(step), w.groups, sample_meta(step), 0);
  return dir.file(checkpoint_name(step));
}

inline void check_meta(const CheckpointMeta& a, const CheckpointMeta& b) {
  CHECK(a.step == b.step);
  CHECK(a.tokens_seen == b.tokens_seen);
  CHECK(a.seed == b.seed);
  CHECK(a.deck_toml == b.deck_toml);
  CHECK(a.zero_toml == b.zero_toml);
  CHECK(a.code_version == b.code_version);
  CHECK(a.world_size == b.world_size);
  CHECK(a.ranks_per_node == b.ranks_per_node);
  CHECK(a.nodes == b.nodes);
  CHECK(a.scalars == b.scalars);
  CHECK(a.words == b.words);
}

// All ranks agree that `ok` holds everywhere (a CHECK per rank would not fail the others).
inline bool all_ranks(bool ok, MPI_Comm c = MPI_COMM_WORLD) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c);
  return all == 1;
}

inline haddr_t dataset_offset(const std::string& file, const std::string& dataset, hsize_t* bytes) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  const haddr_t off = H5Dget_offset(d);
  *bytes = H5Dget_storage_size(d);
  H5Dclose(d);
  H5Fclose(f);
  return off;
}

inline void flip_byte(const std::string& file, haddr_t offset) {
  const int fd = ::open(file.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char c = 0;
  REQUIRE(::pread(fd, &c, 1, off_t(offset)) == 1);
  c ^= 0x10;
  REQUIRE(::pwrite(fd, &c, 1, off_t(offset)) == 1);
  ::close(fd);
}

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace zeropp::test
