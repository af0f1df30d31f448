// Room on disk for a checkpoint (io/files/disk_space.hpp): the size estimate against
// a file write_checkpoint really wrote, and the refusal line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"
#include "io/files/disk_space.hpp"
#include "io/io_test_support.hpp"

using namespace zeropp;

TEST_CASE("the checkpoint size estimate covers the file written, with little to spare", "[io]") {
  zeropp::test::TempDir dir("zeropp-disk");
  std::vector<std::vector<float>> data = {std::vector<float>(100000, 1.0f), std::vector<float>(3 * 700, 2.0f),
                                          std::vector<float>(1, 3.0f)};
  const ShardGroups groups = {{"model",
                               {{"a", {100000}, 0, 100000, data[0].data()},
                                {"b", {3, 700}, 0, 2100, data[1].data()},
                                {"c", {}, 0, 1, data[2].data()}}}};
  CheckpointMeta meta;
  meta.deck_toml = std::string(5000, 'x');  // a deck of realistic length
  write_checkpoint(MPI_COMM_SELF, dir.path.string(), checkpoint_name(1), groups, meta, 0);
  const auto written = int64_t(std::filesystem::file_size(dir.file(checkpoint_name(1))));
  const int64_t estimate = checkpoint_bytes_estimate(groups);
  CHECK(estimate >= written);
  CHECK(estimate <= written + 128 * 1024);
  CHECK(estimate - 4 * (100000 + 2100 + 1) == 64 * 1024 + 3 * 2048);
}

TEST_CASE("a checkpoint that does not fit is one line naming the directory", "[io]") {
  CHECK_FALSE(disk_space_problem("/d", 1000, 1000));
  CHECK(disk_space_problem("/d", 3 * 1048576 / 2, 1048576).value() ==
        "no space left on device (needs 1.5 MiB, 1.0 MiB free in /d)");
  CHECK(disk_space_problem("/nonexistent/dir", 1)
            .value()
            .rfind("cannot tell the free space in /nonexistent/dir: ", 0) == 0);
  zeropp::test::TempDir dir("zeropp-disk");
  CHECK_FALSE(disk_space_problem(dir.path.string(), 1));
  CHECK(disk_space_problem(dir.path.string(), int64_t(1) << 62));
}
