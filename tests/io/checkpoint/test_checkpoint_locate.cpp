#include <catch2/catch.hpp>
#include <fstream>

#include "io/checkpoint/checkpoint.hpp"
#include "io/checkpoint/checkpoint_locate.hpp"
#include "tests/io/io_test_support.hpp"

using namespace zeropp;
using zeropp::test::error_of;
using zeropp::test::TempDir;

namespace {
void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  REQUIRE(out.good());
}
}  // namespace

TEST_CASE("locate_checkpoint: run folder, checkpoint folder, latest or file", "[io]") {
  TempDir tmp("zeropp-locate");
  const std::string run = tmp.file("run"), ckpts = run + "/checkpoints";
  std::filesystem::create_directories(ckpts);
  write_file(run + "/config.toml", "");
  const std::string older = ckpts + "/" + checkpoint_name(2), newer = ckpts + "/" + checkpoint_name(10);
  write_file(older, "");
  write_file(newer, "");
  // `latest` wins over the highest step (it names the last complete save).
  write_file(ckpts + "/latest", checkpoint_name(2) + "\n");
  CHECK(locate_checkpoint(run) == older);
  CHECK(locate_checkpoint(ckpts) == older);
  CHECK(locate_checkpoint(ckpts + "/latest") == older);
  CHECK(locate_checkpoint(newer) == newer);
  std::filesystem::remove(ckpts + "/latest");
  CHECK(locate_checkpoint(run) == newer);
  CHECK(locate_checkpoint(run + "/") == newer);

  // A relative `latest` in the current folder.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(ckpts);
  write_file("latest", checkpoint_name(10) + "\n");
  const std::string rel = locate_checkpoint("latest");
  std::filesystem::current_path(cwd);
  CHECK(rel == "./" + checkpoint_name(10));
}

TEST_CASE("locate_checkpoint: one line naming what leads nowhere", "[io]") {
  TempDir tmp("zeropp-locate");
  const std::string empty = tmp.file("empty");
  std::filesystem::create_directories(empty);
  CHECK_THAT(error_of([&] { locate_checkpoint(empty); }),
             Catch::Contains(empty) && Catch::Contains("no checkpoint in"));
  CHECK_THAT(error_of([&] { locate_checkpoint(tmp.file("nope")); }),
             Catch::Contains(tmp.file("nope")) && Catch::Contains("no such checkpoint"));
  // A run folder whose checkpoints went elsewhere (checkpoint.dir), then one without any yet.
  write_file(empty + "/config.toml", "");
  CHECK_THAT(error_of([&] { locate_checkpoint(empty); }), Catch::Contains("checkpoint.dir elsewhere"));
  std::filesystem::create_directories(empty + "/checkpoints");
  CHECK_THAT(error_of([&] { locate_checkpoint(empty); }),
             Catch::Contains(empty + "/checkpoints") && !Catch::Contains("elsewhere"));
}
