// Data loader: the window formula of io/data/data_loader.hpp, wrap-around, the
// seeded shuffle, errors, and (at 1, 2, 4 ranks) that ranks read disjoint
// consecutive windows. Files hold token i = i mod 65521 so a token's position
// is recoverable from its value whenever N ≤ 65521.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "io/data/data_loader.hpp"
#include "io/data/token_file.hpp"
#include "io/io_test_support.hpp"
#include "src/base/errors.hpp"

using namespace zeropp;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

using zeropp::test::TempDir;

using zeropp::test::error_of;

namespace {

constexpr int kMod = 65521;  // largest prime below 65536

std::string write_counting_file(const std::string& path, int64_t n) {
  std::vector<uint16_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[size_t(i)] = uint16_t(i % kMod);
  write_token_file(path, t);
  return path;
}

// Checks inputs/targets of (step, micro) against the counting file: the
// window is tokens start, start+1, ... taken circularly.
void check_window(const DataLoader& dl, int64_t step, int micro, int64_t start) {
  const int64_t bt = dl.tokens_per_batch(), n = dl.num_tokens();
  std::vector<int32_t> x(static_cast<size_t>(bt)), y(static_cast<size_t>(bt));
  dl.batch(step, micro, x.data(), y.data());
  for (int64_t i = 0; i < bt; ++i) {
    REQUIRE(x[size_t(i)] == int32_t(((start + i) % n) % kMod));
    REQUIRE(y[size_t(i)] == int32_t(((start + i + 1) % n) % kMod));
  }
}

}  // namespace

TEST_CASE("unshuffled windows follow ((s*A + m)*P + r)*B*T mod N", "[io]") {
  TempDir dir("zeropp-loader");
  const std::string path = write_counting_file(dir.file("c.bin"), 1000);
  const int B = 2, T = 8, P = 3, A = 2;
  for (int r = 0; r < P; ++r) {
    DataLoader dl(path, B, T, r, P, A, 65536, false, 0);
    REQUIRE(dl.windows_per_epoch() == 1000 / 16);
    for (int64_t s = 0; s < 30; ++s)
      for (int m = 0; m < A; ++m) {
        const int64_t start = ((s * A + m) * P + r) * B * T % 1000;
        REQUIRE(dl.window_start(s, m) == start);
        check_window(dl, s, m, start);
      }
  }
}

TEST_CASE("targets are the inputs shifted by one", "[io]") {
  TempDir dir("zeropp-loader");
  const std::string path = write_counting_file(dir.file("c.bin"), 500);
  DataLoader dl(path, 4, 16, 0, 1, 1, 65536, true, 7);
  std::vector<int32_t> x(64), y(64);
  for (int64_t s = 0; s < 20; ++s) {
    dl.batch(s, 0, x.data(), y.data());
    for (size_t i = 0; i + 1 < x.size(); ++i) REQUIRE(y[i] == x[i + 1]);
  }
}

TEST_CASE("reading wraps around at the end of the file", "[io]") {
  TempDir dir("zeropp-loader");
  const std::string path = write_counting_file(dir.file("c.bin"), 100);
  DataLoader dl(path, 2, 8, 0, 1, 1, 65536, false, 0);
  // Window 6 starts at 96: inputs 96..99, 0..11; targets 97..99, 0..12.
  REQUIRE(dl.window_start(6, 0) == 96);
  std::vector<int32_t> x(16), y(16);
  dl.batch(6, 0, x.data(), y.data());
  const std::vector<int32_t> want_x{96, 97, 98, 99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  REQUIRE(x == want_x);
  REQUIRE(y[2] == 99);
  REQUIRE(y[3] == 0);
  REQUIRE(y[15] == 12);
  // Window 25 starts at 400 mod 100 = 0: the stream keeps cycling.
  REQUIRE(dl.window_start(25, 0) == 0);
  // A window that starts at the last token.
  DataLoader exact(path, 1, 99, 0, 1, 1, 65536, false, 0);
  std::vector<int32_t> x2(99), y2(99);
  exact.batch(1, 0, x2.data(), y2.data());  // starts at 99
  REQUIRE(x2[0] == 99);
  REQUIRE(y2[0] == 0);
  REQUIRE(x2[98] == 97);
  REQUIRE(y2[98] == 98);
}

TEST_CASE("validation batches: A = 1, no shuffle, batch i starts at (i*P + r)*B*T mod N", "[io]") {
  TempDir dir("zeropp-loader");
  const std::string path = write_counting_file(dir.file("v.bin"), 300);
  const int P = 2;
  for (int r = 0; r < P; ++r) {
    DataLoader val = DataLoader::validation(path, 1, 32, r, P, 256 * 256);
    for (int64_t i = 0; i < 12; ++i) {
      REQUIRE(val.window_start(i, 0) == (i * P + r) * 32 % 300);
      check_window(val, i, 0, (i * P + r) * 32 % 300);
    }
  }
}

TEST_CASE("shuffle_windows is a seeded permutation, pinned across standard libraries", "[io]") {
  for (int64_t W : {1, 2, 10, 1000}) {
    auto p = shuffle_windows(W, 42, 0);
    std::vector<int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> iota(static_cast<size_t>(W));
    std::iota(iota.begin(), iota.end(), 0);
    REQUIRE(sorted == iota);
  }
  REQUIRE(shuffle_windows(1000, 42, 3) == shuffle_windows(1000, 42, 3));
  REQUIRE(shuffle_windows(1000, 42, 3) != shuffle_windows(1000, 42, 4));
  REQUIRE(shuffle_windows(1000, 42, 3) != shuffle_windows(1000, 43, 3));
  // Golden values: the order must not depend on the platform or library.
  const std::vector<int64_t> golden{6, 8, 0, 5, 1, 9, 3, 4, 7, 2};
  REQUIRE(shuffle_windows(10, 1234, 0) == golden);
}

TEST_CASE("shuffled windows: a permutation within each epoch, new order each epoch", "[io]") {
  TempDir dir("zeropp-loader");
  const int64_t n = 50 * 16 + 5;  // W = 50 aligned windows of B*T = 16
  const std::string path = write_counting_file(dir.file("c.bin"), n);
  const int B = 2, T = 8, P = 2, A = 5;
  std::vector<DataLoader> ranks;
  for (int r = 0; r < P; ++r) ranks.emplace_back(path, B, T, r, P, A, 65536, true, 99);
  REQUIRE(ranks[0].windows_per_epoch() == 50);
  // Global window g = (s*A + m)*P + r; one epoch is g = 0..49 = steps 0..4.
  auto epoch_order = [&](int64_t e) {
    std::vector<int64_t> order(50);
    for (int64_t g = e * 50; g < (e + 1) * 50; ++g) {
      const int r = int(g % P), m = int(g / P % A);
      const int64_t s = g / P / A;
      REQUIRE(ranks[size_t(r)].epoch(s, m) == e);
      const int64_t start = ranks[size_t(r)].window_start(s, m);
      REQUIRE(start % 16 == 0);
      REQUIRE(start / 16 == shuffle_windows(50, 99, e)[size_t(g - e * 50)]);
      check_window(ranks[size_t(r)], s, m, start);
      order[size_t(g - e * 50)] = start / 16;
    }
    return order;
  };
  const auto e0 = epoch_order(0), e1 = epoch_order(1), e2 = epoch_order(2);
  for (const auto& o : {e0, e1, e2}) REQUIRE(std::set<int64_t>(o.begin(), o.end()).size() == 50);
  REQUIRE(e0 != e1);
  REQUIRE(e1 != e2);
  std::vector<int64_t> identity(50);
  std::iota(identity.begin(), identity.end(), 0);
  REQUIRE(e0 != identity);

  // Same seed, same order, whatever order batches are asked in (the cache);
  // another seed, another order.
  DataLoader again(path, B, T, 1, P, A, 65536, true, 99);
  DataLoader other(path, B, T, 1, P, A, 65536, true, 100);
  bool differs = false;
  for (int64_t s : {12, 0, 7, 3, 12, 14, 1}) {
    for (int m = 0; m < A; ++m) {
      REQUIRE(again.window_start(s, m) == ranks[1].window_start(s, m));
      differs |= other.window_start(s, m) != again.window_start(s, m);
    }
  }
  REQUIRE(differs);
}

TEST_CASE("data loader errors name the file and the problem", "[io]") {
  TempDir dir("zeropp-loader");
  SECTION("too short for one window") {
    const std::string path = write_counting_file(dir.file("short.bin"), 64);
    CHECK_THAT(error_of([&] { DataLoader dl(path, 4, 16, 0, 1, 1, 65536, false, 0); }),
               Contains(path) && Contains("too short for one window") && Contains("64 tokens") &&
                   Contains("B*T+1 = 65"));
    DataLoader ok(path, 3, 21, 0, 1, 1, 65536, false, 0);  // 63 + 1 fits
    REQUIRE(ok.windows_per_epoch() == 1);
  }
  SECTION("token id outside the vocabulary") {
    const std::string path = write_counting_file(dir.file("vocab.bin"), 1000);
    CHECK_THAT(error_of([&] { DataLoader dl(path, 1, 8, 0, 1, 1, 256, false, 0); }),
               Contains(path) && Contains("token id 256 at position 256"));
  }
  SECTION("bad file") {
    const std::string path = dir.file("nothing.bin");
    CHECK_THAT(error_of([&] { DataLoader dl(path, 1, 8, 0, 1, 1, 256, false, 0); }),
               Contains(path) && Contains("cannot open"));
  }
  SECTION("bad arguments") {
    const std::string path = write_counting_file(dir.file("c.bin"), 1000);
    CHECK_THAT(error_of([&] { DataLoader dl(path, 0, 8, 0, 1, 1, 65536, false, 0); }), Contains(path));
    CHECK_THAT(error_of([&] { DataLoader dl(path, 1, 8, 2, 2, 1, 65536, false, 0); }), Contains("rank 2"));
    DataLoader dl(path, 1, 8, 0, 1, 2, 65536, false, 0);
    std::vector<int32_t> x(8), y(8);
    CHECK_THAT(error_of([&] { dl.batch(0, 2, x.data(), y.data()); }), Contains("micro-batch 2"));
    CHECK_THAT(error_of([&] { dl.batch(-1, 0, x.data(), y.data()); }), Contains("step -1"));
  }
}

TEST_CASE("ranks read disjoint consecutive windows per the formula", "[io-mpi]") {
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);

  // Rank 0 writes the file in a directory whose name it broadcasts.
  char dirname[256] = {};
  if (rank == 0) {
    std::string tmpl = (fs::temp_directory_path() / "zeropp-loader-mpi-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    std::snprintf(dirname, sizeof dirname, "%s", tmpl.c_str());
  }
  MPI_Bcast(dirname, sizeof dirname, MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string path = (fs::path(dirname) / "c.bin").string();
  const int64_t n = 3001;  // not a multiple of B*T: windows straddle the end
  if (rank == 0) write_counting_file(path, n);
  MPI_Barrier(MPI_COMM_WORLD);

  const int B = 3, T = 10, A = 3;
  const int64_t bt = B * T;
  {
    DataLoader dl(path, B, T, rank, P, A, 65536, false, 0);
    std::vector<int32_t> x(static_cast<size_t>(bt)), y(static_cast<size_t>(bt)),
        all_x(static_cast<size_t>(bt * P)), all_y(static_cast<size_t>(bt * P));
    // Enough steps to wrap around the file several times.
    // Mismatches are counted, not REQUIREd, so a failing rank does not leave
    // the others waiting in the next Allgather.
    const int64_t steps = 4 * n / (bt * A * P) + 2;
    int64_t wrong_start = 0, wrong_x = 0, wrong_y = 0;
    for (int64_t s = 0; s < steps; ++s)
      for (int m = 0; m < A; ++m) {
        wrong_start += dl.window_start(s, m) != ((s * A + m) * P + rank) * bt % n;
        dl.batch(s, m, x.data(), y.data());
        MPI_Allgather(x.data(), int(bt), MPI_INT32_T, all_x.data(), int(bt), MPI_INT32_T, MPI_COMM_WORLD);
        MPI_Allgather(y.data(), int(bt), MPI_INT32_T, all_y.data(), int(bt), MPI_INT32_T, MPI_COMM_WORLD);
        // Rank order concatenates to one stretch of P*B*T consecutive tokens
        // (token value = position since n < 65521): disjoint and gap-free.
        const int64_t base = (s * A + m) * P * bt % n;
        for (int64_t i = 0; i < bt * P; ++i) {
          wrong_x += all_x[size_t(i)] != int32_t((base + i) % n);
          wrong_y += all_y[size_t(i)] != int32_t((base + i + 1) % n);
        }
      }
    CHECK(wrong_start == 0);
    CHECK(wrong_x == 0);
    CHECK(wrong_y == 0);
  }
  {
    // Shuffled: over one epoch, the windows of all ranks are each aligned
    // window exactly once.
    DataLoader dl(path, B, T, rank, P, A, 65536, true, 5);
    const int64_t W = dl.windows_per_epoch();
    CHECK(W == n / bt);
    const int64_t per_rank = (W + P - 1) / P;  // g = step-major, rank-minor
    std::vector<int64_t> mine;
    for (int64_t j = 0; j < per_rank; ++j) {
      const int64_t g = j * P + rank;
      const int64_t s = g / P / A;
      const int m = int(g / P % A);
      mine.push_back(g < W ? dl.window_start(s, m) / bt : -1);
    }
    std::vector<int64_t> all(static_cast<size_t>(per_rank * P));
    MPI_Allgather(mine.data(), int(per_rank), MPI_INT64_T, all.data(), int(per_rank), MPI_INT64_T,
                  MPI_COMM_WORLD);
    std::set<int64_t> seen;
    int64_t repeats = 0;
    for (int64_t w : all)
      if (w >= 0) repeats += !seen.insert(w).second;
    CHECK(repeats == 0);
    CHECK(int64_t(seen.size()) == W);
    CHECK(*seen.begin() == 0);
    CHECK(*seen.rbegin() == W - 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(dirname);
}
