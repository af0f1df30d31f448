// Checkpoints (io/checkpoint/checkpoint.hpp) that must be refused with one clear line on
// every rank: a flipped byte, truncated, foreign and missing files, missing
// datasets and wrong shapes, bad arguments to write_checkpoint, damaged packed scans.
#include <hdf5.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "io/checkpoint/checkpoint_metadata.hpp"
#include "io/checkpoint/checkpoint_test_support.hpp"

using namespace zeropp;
using namespace zeropp::test;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

TEST_CASE("a flipped byte in a dataset is one error naming the dataset; inspect reports it BAD", "[ckpt]") {
  SharedDir dir;
  const int r = rank_in(), p = size_in();
  const std::string path = write_sample_checkpoint(dir, 1);
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
  const std::string good = write_sample_checkpoint(dir, 2);
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
  const std::string path = write_sample_checkpoint(dir, 4);
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

TEST_CASE("packed scans that end early, run on or hold impossible values are one error", "[ckpt]") {
  ckpt::Scan s;
  s.meta.deck_toml = "[model]\n";
  s.datasets.resize(2);
  const std::string bytes = ckpt::pack_scan(s);
  CHECK(ckpt::pack_scan(ckpt::unpack_scan(bytes, "F")) == bytes);
  const auto error = [](const std::string& b) { return error_of([&] { ckpt::unpack_scan(b, "F"); }); };
  CHECK_THAT(error(bytes.substr(0, bytes.size() - 1)), Contains("F: checkpoint metadata ends early"));
  CHECK_THAT(error(bytes + "x"), Contains("F: checkpoint metadata has 1 bytes after its end"));
  std::string huge = bytes;  // deck_toml's length, after step, tokens_seen and seed
  for (int i = 0; i < 8; ++i) huge[24 + i] = '\x7f';
  CHECK_THAT(error(huge), Contains("ends early"));
  std::string wide = bytes;  // world_size, after the three strings
  const size_t at = 24 + 8 + s.meta.deck_toml.size() + 8 + 8;
  wide[at + 4] = '\x01';
  CHECK_THAT(error(wide), Contains("world_size = 4294967297 is not an int"));
}
