// Checkpoints (io/checkpoint.hpp): bitwise round trips of every dataset over
// odd shapes and splits, resharding on read, corrupted / truncated / foreign
// files, shape errors, retention and `latest`; hidden cases for the crash
// test (ctest runs them through mpiexec), the Python reader and the benchmark.
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/io_test_support.hpp"
#include "io/resume_choice.hpp"
#include "src/base/errors.hpp"

using namespace zeropp;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

using zeropp::test::error_of;

namespace {

int rank_in(MPI_Comm c = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_in(MPI_Comm c = MPI_COMM_WORLD) {
  int p = 1;
  MPI_Comm_size(c, &p);
  return p;
}

// A directory that rank 0 creates (fresh, or the given one emptied) and every
// rank knows; rank 0 removes a fresh one when the test case ends.
struct SharedDir {
  fs::path path;
  bool remove = true;
  explicit SharedDir(const char* fixed = nullptr) {
    char name[1024] = {};
    if (rank_in() == 0) {
      if (fixed) {
        std::error_code ec;
        fs::remove_all(fixed, ec);
        fs::create_directories(fixed, ec);
        std::snprintf(name, sizeof name, "%s", fixed);
      } else {
        std::string tmpl = (fs::temp_directory_path() / "zeropp-ckpt-XXXXXX").string();
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
    if (rank_in() == 0 && remove) fs::remove_all(path, ec);
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
const std::vector<Spec> kSpecs = {
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
const std::vector<std::string> kGroups = {"model", "optimizer/exp_avg", "optimizer/exp_avg_sq"};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Random bit patterns (NaNs with payloads, denormals, -0 included): the round
// trip must be bitwise. Deterministic in (group, tensor, salt) on every rank.
std::vector<float> full_tensor(size_t g, size_t t, int64_t n, uint32_t salt = 0) {
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
bool same_bits(const float* a, const float* b, int64_t n) {
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

Split even_split(int r, int p) {
  return [=](int64_t n, size_t) { return std::pair<int64_t, int64_t>{n * r / p, n * (r + 1) / p}; };
}
// Uneven: the last rank takes half, the others share the rest; rank 0 is empty
// for every other tensor (its part goes to rank 1 or, at P=1, nowhere is empty).
Split skewed_split(int r, int p) {
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
Split random_tiles(int r, int p, uint32_t seed) {
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
Split overlapping(int r, int p) {
  return [=](int64_t n, size_t) {
    return std::pair<int64_t, int64_t>{n * r / (p + 1), std::min(n, n * (r + 2) / (p + 1))};
  };
}
Split everything() {
  return [](int64_t n, size_t) { return std::pair<int64_t, int64_t>{0, n}; };
}
// A part of a partial range: the middle third only (does not cover the tensor).
Split middle_third() {
  return [](int64_t n, size_t) { return std::pair<int64_t, int64_t>{n / 3, 2 * n / 3}; };
}

CheckpointMeta sample_meta(int64_t step) {
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

void check_meta(const CheckpointMeta& a, const CheckpointMeta& b) {
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
bool all_ranks(bool ok, MPI_Comm c = MPI_COMM_WORLD) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c);
  return all == 1;
}

haddr_t dataset_offset(const std::string& file, const std::string& dataset, hsize_t* bytes) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  const haddr_t off = H5Dget_offset(d);
  *bytes = H5Dget_storage_size(d);
  H5Dclose(d);
  H5Fclose(f);
  return off;
}

void flip_byte(const std::string& file, haddr_t offset) {
  const int fd = ::open(file.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char c = 0;
  REQUIRE(::pread(fd, &c, 1, off_t(offset)) == 1);
  c ^= 0x10;
  REQUIRE(::pwrite(fd, &c, 1, off_t(offset)) == 1);
  ::close(fd);
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

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

TEST_CASE("a flipped byte in a dataset is one error naming the dataset; inspect reports it BAD", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const std::string path = dir.file(checkpoint_name(1));
  {
    Shards w(kSpecs, even_split(r, p), true);
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(1), w.groups, sample_meta(1), 0);
  }
  if (r == 0) {
    hsize_t bytes = 0;
    const haddr_t off = dataset_offset(path, "/optimizer/exp_avg/cube", &bytes);
    REQUIRE(off != HADDR_UNDEF);
    REQUIRE(bytes == 3 * 5 * 7 * 4);
    flip_byte(path, off + bytes / 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string want = "checkpoint " + path + ": dataset /optimizer/exp_avg/cube: checksum mismatch";
  SECTION("shards that tile") {
    Shards rd(kSpecs, even_split(r, p), false);
    CHECK_THAT(error_of([&] { read_checkpoint(MPI_COMM_WORLD, path, rd.groups); }), Contains(want));
  }
  SECTION("shards that do not tile: the extra verification read finds it") {
    Shards rd(kSpecs, middle_third(), false);
    CHECK_THAT(error_of([&] { read_checkpoint(MPI_COMM_WORLD, path, rd.groups); }), Contains(want));
  }
  SECTION("inspect") {
    if (r == 0) {
      const CheckpointReport rep = inspect_checkpoint(path);
      CHECK_FALSE(rep.ok);
      int bad = 0;
      for (const DatasetReport& d : rep.datasets) {
        if (!d.checksum_ok) {
          ++bad;
          CHECK(d.path == "/optimizer/exp_avg/cube");
          CHECK_THAT(d.problem, Contains("checksum mismatch"));
        }
      }
      CHECK(bad == 1);
    }
  }
}

TEST_CASE("truncated, foreign and missing files give one clear error on every rank", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const std::string good = dir.file(checkpoint_name(2));
  {
    Shards w(kSpecs, even_split(r, p), true);
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(2), w.groups, sample_meta(2), 0);
  }
  const std::string text = dir.file("notes.h5"), foreign = dir.file("foreign.h5");
  const std::string half = dir.file("half.h5"), head = dir.file("head.h5"), missing = dir.file("missing.h5");
  if (r == 0) {
    std::ofstream(text) << "this is not HDF5\n";
    const hid_t f = H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t g = H5Gcreate2(f, "model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(g);
    H5Fclose(f);
    fs::copy_file(good, half);
    fs::resize_file(half, fs::file_size(good) / 2);
    fs::copy_file(good, head);
    fs::resize_file(head, 3000);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Shards rd(kSpecs, even_split(r, p), false);
  auto err = [&](const std::string& f) {
    return error_of([&] { read_checkpoint(MPI_COMM_WORLD, f, rd.groups); });
  };
  CHECK(err(text) == "checkpoint " + text + ": not an HDF5 file");
  CHECK(err(foreign) == "checkpoint " + foreign +
                            ": not a zeropp checkpoint (root attribute 'format' is not 'zeropp-checkpoint')");
  CHECK(err(half) == "checkpoint " + half + ": HDF5 cannot open it (truncated or corrupted file)");
  CHECK(err(head) == "checkpoint " + head + ": HDF5 cannot open it (truncated or corrupted file)");
  CHECK(err(missing) == "checkpoint " + missing + ": no such file");
  if (r == 0) {
    for (const std::string& f : {text, foreign, half, head, missing})
      CHECK_THAT(error_of([&] { inspect_checkpoint(f); }), Contains("checkpoint " + f + ": "));
    CHECK_THAT(error_of([&] { resolve_checkpoint(missing, dir.str()); }), Contains("no such file"));
  }
  // The good file is still fine.
  read_checkpoint(MPI_COMM_WORLD, good, rd.groups);
  CHECK(all_ranks(rd.matches(kSpecs)));
}

TEST_CASE("missing datasets and wrong shapes are refused naming the dataset", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const std::string path = dir.file(checkpoint_name(4));
  {
    Shards w(kSpecs, even_split(r, p), true);
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(4), w.groups, sample_meta(4), 0);
  }
  std::vector<Spec> specs = kSpecs;
  specs[3].shape = {29, 17};
  Shards transposed(specs, even_split(r, p), false);
  CHECK(error_of([&] { read_checkpoint(MPI_COMM_WORLD, path, transposed.groups); }) ==
        "checkpoint " + path +
            ": dataset /model/h.0.attn.c_attn.weight: expected shape [29, 17], found [17, 29]");
  specs = kSpecs;
  specs[9].shape = {1};
  Shards scalar(specs, even_split(r, p), false);
  CHECK(error_of([&] { read_checkpoint(MPI_COMM_WORLD, path, scalar.groups); }) ==
        "checkpoint " + path + ": dataset /model/scalar: expected shape [1], found []");
  specs = kSpecs;
  specs.push_back({"h.1.mlp.c_fc.weight", {4, 4}});
  Shards extra(specs, even_split(r, p), false);
  CHECK(error_of([&] { read_checkpoint(MPI_COMM_WORLD, path, extra.groups); }) ==
        "checkpoint " + path + ": dataset /model/h.1.mlp.c_fc.weight missing");
}

TEST_CASE("bad arguments to write_checkpoint are errors on every rank and write nothing", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  Shards gap(kSpecs, middle_third(), true);  // ranges do not cover the tensors
  CHECK_THAT(error_of([&] { write_checkpoint(MPI_COMM_WORLD, dir.str(), "step_1.h5", gap.groups, {}, 0); }),
             Contains("/model/wte.weight do not cover its 407 elements exactly once"));
  Shards ok(kSpecs, even_split(r, p), true);
  CHECK_THAT(error_of([&] { write_checkpoint(MPI_COMM_WORLD, dir.str(), "a/b.h5", ok.groups, {}, 0); }),
             Contains("bad file name 'a/b.h5'"));
  ShardGroups bad = ok.groups;
  bad[0].second[0].name = "x/y";
  CHECK_THAT(error_of([&] { write_checkpoint(MPI_COMM_WORLD, dir.str(), "s.h5", bad, {}, 0); }),
             Contains("bad tensor name 'x/y' in group 'model'"));
  bad = ok.groups;
  bad[0].first = "state";
  CHECK_THAT(error_of([&] { write_checkpoint(MPI_COMM_WORLD, dir.str(), "s.h5", bad, {}, 0); }),
             Contains("bad group name 'state'"));
  bad = ok.groups;
  if (r == p - 1) std::swap(bad[0].second[0], bad[0].second[1]);
  if (p > 1) {
    CHECK_THAT(error_of([&] { write_checkpoint(MPI_COMM_WORLD, dir.str(), "s.h5", bad, {}, 0); }),
               Contains("ranks passed different tensor lists"));
  }
  if (r == 0) {
    std::ofstream(dir.file("plainfile")) << "x";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_THAT(
      error_of([&] { write_checkpoint(MPI_COMM_WORLD, dir.file("plainfile"), "s.h5", ok.groups, {}, 0); }),
      Contains("checkpoint directory " + dir.file("plainfile") + ": cannot create"));
  CHECK(fs::directory_iterator(dir.path) != fs::directory_iterator());  // only plainfile
  CHECK(resolve_checkpoint("auto", dir.str()).empty());
}

TEST_CASE("keep K newest by step, `latest` names the newest save, stale temporaries go", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const std::vector<Spec> specs = {{"w", {6, 5}}, {"b", {5}}};
  Shards w(specs, even_split(r, p), true);
  auto latest = [&] {
    std::ifstream in(dir.file("latest"));
    std::string s;
    std::getline(in, s);
    return s;
  };
  auto names = [&] {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir.path)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(resolve_checkpoint("auto", dir.str()).empty());
  CHECK(resolve_checkpoint("auto", dir.file("nonexistent")).empty());
  for (int s = 1; s <= 5; ++s) {
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(s * 10), w.groups, sample_meta(s * 10), 2);
    CHECK(latest() == checkpoint_name(s * 10));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(names() == std::vector<std::string>{"latest", "step_00000040.h5", "step_00000050.h5"});
  CHECK(resolve_checkpoint("auto", dir.str()) == dir.file("step_00000050.h5"));
  CHECK(resolve_checkpoint(dir.str(), "ignored") == dir.file("step_00000050.h5"));
  CHECK(resolve_checkpoint(dir.file("step_00000040.h5"), "") == dir.file("step_00000040.h5"));

  // Leftovers of crashed saves are removed by the next save.
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0) {
    std::ofstream(dir.file(".step_00000060.h5.tmp")) << "half";
    std::ofstream(dir.file("latest.tmp")) << "step_00000060.h5";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // A save of a lower step (resumed from an older checkpoint) is kept and becomes
  // `latest` even with keep 1; the highest step stays too.
  write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(45), w.groups, sample_meta(45), 1);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(names() == std::vector<std::string>{"latest", "step_00000045.h5", "step_00000050.h5"});
  CHECK(latest() == "step_00000045.h5");
  Shards rd(specs, even_split(r, p), false);
  CHECK(read_checkpoint(MPI_COMM_WORLD, resolve_checkpoint("auto", dir.str()), rd.groups).step == 45);
  CHECK(all_ranks(rd.matches(specs)));

  // keep 0 keeps everything; without `latest`, "auto" takes the highest step.
  write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(7), w.groups, sample_meta(7), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(names().size() == 4);
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0) fs::remove(dir.file("latest"));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(resolve_checkpoint("auto", dir.str()) == dir.file("step_00000050.h5"));
}

// ---------------------------------------------------------------------------
// Crash test, run by ctest in two steps: [.ckpt-fault] saves step 1, then dies
// (SIGKILL of one rank at ZEROPP_CKPT_FAULT = "datasets:RANK:N", "rename:RANK",
// "latest:0" or "retention:0") while saving step 2; [.ckpt-fault-check] then
// loads what "auto" finds (step 1, or step 2 where the kill came after its
// rename) bitwise, and a further save cleans up and succeeds.

namespace {
const std::vector<Spec> kFaultSpecs = {{"a", {64, 33}}, {"b", {1000}}, {"c", {7, 9}}, {"d", {3}}};
}

TEST_CASE("checkpoint crash test: save, then die in the middle of the next save", "[.ckpt-fault]") {
  const std::string where = env_or("ZEROPP_CKPT_FAULT_DIR", "");
  const std::string fault = env_or("ZEROPP_CKPT_FAULT", "datasets:1:3");
  REQUIRE(!where.empty());
  SharedDir dir(where.c_str());
  const int r = rank_in(), p = size_in();
  Shards w1(kFaultSpecs, even_split(r, p), true, 1);
  write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(1), w1.groups, sample_meta(1), 1);
  std::string kind = fault.substr(0, fault.find(':'));
  std::string rest = fault.substr(fault.find(':') + 1);
  const int fault_rank = std::stoi(rest);
  if (kind == "datasets")
    set_checkpoint_fault(fault_rank, std::stoi(rest.substr(rest.find(':') + 1)));
  else if (kind == "rename")
    set_checkpoint_fault(fault_rank, CheckpointFault::kBeforeRename);
  else if (kind == "latest")
    set_checkpoint_fault(fault_rank, CheckpointFault::kBeforeLatest);
  else
    set_checkpoint_fault(fault_rank, CheckpointFault::kBeforeRetention);
  Shards w2(kFaultSpecs, even_split(r, p), true, 2);
  write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(2), w2.groups, sample_meta(2), 1);
  clear_checkpoint_fault();
  FAIL("the fault injection did not kill rank " << fault_rank);
}

TEST_CASE("checkpoint crash test: the previous checkpoint is intact and loadable", "[.ckpt-fault-check]") {
  const std::string where = env_or("ZEROPP_CKPT_FAULT_DIR", "");
  const std::string fault = env_or("ZEROPP_CKPT_FAULT", "datasets:1:3");
  REQUIRE(!where.empty());
  const int r = rank_in(), p = size_in();
  const bool renamed = fault.rfind("retention", 0) == 0 || fault.rfind("latest", 0) == 0;
  const std::string found = resolve_checkpoint("auto", where);
  // Killed before `latest` moved: "auto" still finds step 1.
  const int64_t step = fault.rfind("retention", 0) == 0 ? 2 : 1;
  CHECK(found == (fs::path(where) / checkpoint_name(step)).string());
  CHECK(fs::exists(fs::path(where) / checkpoint_name(1)));
  CHECK(fs::exists(fs::path(where) / checkpoint_name(2)) == renamed);
  Shards rd(kFaultSpecs, random_tiles(r, p, 3), false);
  CHECK(read_checkpoint(MPI_COMM_WORLD, found, rd.groups).step == step);
  CHECK(all_ranks(rd.matches(kFaultSpecs, uint32_t(step))));
  if (r == 0) {
    const CheckpointReport rep = inspect_checkpoint(found);
    CHECK(rep.ok);
  }
  // The next save removes the leftovers and keeps one checkpoint.
  Shards w3(kFaultSpecs, even_split(r, p), true, 3);
  write_checkpoint(MPI_COMM_WORLD, where, checkpoint_name(3), w3.groups, sample_meta(3), 1);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(where)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"latest", checkpoint_name(3)});
  Shards rd3(kFaultSpecs, even_split(r, p), false);
  CHECK(read_checkpoint(MPI_COMM_WORLD, resolve_checkpoint("auto", where), rd3.groups).step == 3);
  CHECK(all_ranks(rd3.matches(kFaultSpecs, 3)));
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

TEST_CASE("resume auto falls back to the newest checkpoint that verifies and names the ones it skipped",
          "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  Shards w(kSpecs, even_split(r, p), true);
  for (int s = 1; s <= 3; ++s)
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(s), w.groups, sample_meta(s), 0);
  const ResumeChoice intact = choose_resume_checkpoint(MPI_COMM_WORLD, "auto", dir.str());
  CHECK(intact.path == dir.file(checkpoint_name(3)));
  CHECK(intact.skipped.empty());
  // The newest: one flipped byte; the next: cut in half.
  if (r == 0) {
    hsize_t bytes = 0;
    const haddr_t off = dataset_offset(dir.file(checkpoint_name(3)), "/model/long", &bytes);
    REQUIRE(off != HADDR_UNDEF);
    flip_byte(dir.file(checkpoint_name(3)), off + bytes / 3);
    fs::resize_file(dir.file(checkpoint_name(2)), fs::file_size(dir.file(checkpoint_name(2))) / 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const ResumeChoice c = choose_resume_checkpoint(MPI_COMM_WORLD, "auto", dir.str());
  CHECK(c.path == dir.file(checkpoint_name(1)));
  CHECK(choose_resume_checkpoint(MPI_COMM_WORLD, dir.str(), "ignored").path == c.path);
  if (r == 0) {
    CHECK(c.skipped.size() == 2);  // not REQUIRE: rank 0 alone must not leave the collectives below
    if (c.skipped.size() == 2) {
      CHECK_THAT(c.skipped[0], Contains("step_00000003.h5 (/model/long: checksum mismatch"));
      CHECK_THAT(c.skipped[1], Contains("step_00000002.h5 (checkpoint " + dir.file(checkpoint_name(2))));
    }
  }
  Shards rd(kSpecs, even_split(r, p), false);
  CHECK(read_checkpoint(MPI_COMM_WORLD, c.path, rd.groups).step == 1);
  CHECK(all_ranks(rd.matches(kSpecs)));
  // A file named explicitly is taken as is: read_checkpoint refuses it.
  CHECK(choose_resume_checkpoint(MPI_COMM_WORLD, dir.file(checkpoint_name(3)), "").path ==
        dir.file(checkpoint_name(3)));
  // None verifies: one error on every rank naming each file.
  if (r == 0) fs::resize_file(dir.file(checkpoint_name(1)), 100);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string err = error_of([&] { choose_resume_checkpoint(MPI_COMM_WORLD, "auto", dir.str()); });
  CHECK_THAT(err, Contains("resume: no checkpoint in " + dir.str() + " verifies: step_00000003.h5 ("));
  CHECK_THAT(err, Contains("; step_00000001.h5 ("));
}
