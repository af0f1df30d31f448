// Checkpoints (io/checkpoint/checkpoint.hpp) across saves and crashes: retention of the
// K newest and `latest`, the crash test (ctest ckpt_fault_*: a rank killed in
// the middle of a save), and resume "auto" falling back past damaged files.
#include <hdf5.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint_async.hpp"
#include "io/checkpoint/checkpoint_test_support.hpp"
#include "io/checkpoint/resume_choice.hpp"

using namespace zeropp;
using namespace zeropp::test;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

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
// rename) bitwise, and a further save cleans up and succeeds. "async:<fault>":
// the same with the second save asynchronous.

namespace {
const std::vector<Spec> kFaultSpecs = {{"a", {64, 33}}, {"b", {1000}}, {"c", {7, 9}}, {"d", {3}}};
// ZEROPP_CKPT_FAULT, and whether it starts with "async:" (the save that dies
// is asynchronous, io/checkpoint/checkpoint_async.hpp: the kill comes from its thread or its commit).
std::pair<std::string, bool> fault_setting() {
  const std::string f = env_or("ZEROPP_CKPT_FAULT", "datasets:1:3");
  const bool async = f.rfind("async:", 0) == 0;
  return {async ? f.substr(6) : f, async};
}
}  // namespace

TEST_CASE("checkpoint crash test: save, then die in the middle of the next save", "[.ckpt-fault]") {
  const std::string where = env_or("ZEROPP_CKPT_FAULT_DIR", "");
  const auto [fault, async] = fault_setting();
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
  if (async) {
    AsyncCheckpointWriter writer(MPI_COMM_WORLD);
    writer.start(dir.str(), checkpoint_name(2), w2.groups, sample_meta(2), 1, nullptr);
    writer.finish();
  } else {
    write_checkpoint(MPI_COMM_WORLD, dir.str(), checkpoint_name(2), w2.groups, sample_meta(2), 1);
  }
  clear_checkpoint_fault();
  FAIL("the fault injection did not kill rank " << fault_rank);
}

TEST_CASE("checkpoint crash test: the previous checkpoint is intact and loadable", "[.ckpt-fault-check]") {
  const std::string where = env_or("ZEROPP_CKPT_FAULT_DIR", "");
  const std::string fault = fault_setting().first;
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
