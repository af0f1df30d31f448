// write_checkpoint, its fault injection and the steps it shares with the
// asynchronous writer (io/checkpoint/checkpoint_write_steps.hpp).
#include <hdf5.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>

#include "io/checkpoint/checkpoint.hpp"
#include "io/checkpoint/checkpoint_files.hpp"
#include "io/checkpoint/checkpoint_shards.hpp"
#include "io/checkpoint/checkpoint_write_steps.hpp"
#include "io/checkpoint/checksum_worker.hpp"
#include "io/checkpoint/phase_timer.hpp"
#include "io/checkpoint/shard_staging.hpp"
#include "io/files/disk_space.hpp"
#include "io/hdf5/h5_util.hpp"
#include "src/base/errors.hpp"

namespace zeropp {
namespace fs = std::filesystem;
using namespace ckpt;
using namespace h5;

namespace {

struct FaultSetting {
  int rank = -1;
  CheckpointFault where = CheckpointFault::kNone;
  int after_datasets = 0;
  bool stall = false;
};
FaultSetting g_fault;

// Writes a small 1-D dataset of `n` elements from rank 0 (the other ranks
// take part in the collective write with an empty selection).
void write_state_dataset(hid_t parent, const std::string& name, hid_t file_type, hid_t mem_type,
                         const void* data, int64_t n, const std::vector<uint64_t>& bits, hid_t dxpl,
                         int rank) {
  H5Id space = make_space({n});
  H5Id dcpl(ZCHECK_H5(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
  H5Id d(ZCHECK_H5(
             H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT)),
         H5Dclose);
  uint64_t sum = 0;
  for (size_t i = 0; i < bits.size(); ++i) sum += checksum_element(i, bits[i]);
  write_attr_u64(d.get(), "checksum", sum);
  write_attr_string(d.get(), "checksum_algorithm", kCheckpointChecksumAlgorithm);
  if (n == 0) return;
  const int64_t mine = rank == 0 ? n : 0;
  select_flat_range(space.get(), {n}, 0, mine);
  H5Id mspace = memory_space(mine);
  static const uint64_t dummy = 0;
  ZCHECK_H5(H5Dwrite(d.get(), mem_type, mspace.get(), space.get(), dxpl, mine ? data : &dummy));
}

}  // namespace

void set_checkpoint_fault(int rank, int after_datasets, bool stall) {
  g_fault = {rank, CheckpointFault::kAfterDatasets, after_datasets, stall};
}
void set_checkpoint_fault(int rank, CheckpointFault where) { g_fault = {rank, where, 0}; }
void clear_checkpoint_fault() { g_fault = {}; }

namespace ckpt {

void maybe_fault(int rank, CheckpointFault where, int datasets_written) {
  if (g_fault.where != where || g_fault.rank != rank) return;
  if (where == CheckpointFault::kAfterDatasets && datasets_written != g_fault.after_datasets) return;
  if (g_fault.stall) {
    std::fprintf(stderr, "zeropp: rank %d: checkpoint fault injection: stalled\n", rank);
    std::fflush(stderr);
    for (;;) sleep(60);
  }
  std::fprintf(stderr, "zeropp: rank %d: checkpoint fault injection: SIGKILL\n", rank);
  std::fflush(stderr);
  std::raise(SIGKILL);
}

void check_before_write(MPI_Comm comm, const std::string& dir, const std::string& name,
                        const ShardGroups& groups, const CheckpointMeta& meta, bool in_checkpoint_dir) {
  const int rank = comm_rank(comm);
  const std::string what = "checkpoint " + join(dir, name);
  // 1. Arguments (every rank), then the same tensor list everywhere.
  std::optional<std::string> err;
  if (!valid_component(name) || name[0] == '.' || name == "latest")
    err = "checkpoint: bad file name '" + name + "' (a plain name such as step_00000010.h5)";
  if (!err) err = check_groups(groups, what);
  for (const auto& [k, v] : meta.scalars)
    if (!err && !valid_component(k)) err = what + ": bad state scalar name '" + k + "'";
  for (const auto& [k, v] : meta.words)
    if (!err && !valid_component(k)) err = what + ": bad state word name '" + k + "'";
  agree_on_error(comm, err);
  check_same_on_all_ranks(comm, groups, what);

  // 2. The shards of every tensor must tile it exactly (else parts would be
  //    left unwritten or written twice).
  const std::vector<bool> tiles = ranges_tile(comm, groups);
  {
    size_t k = 0;
    for (const auto& [g, shards] : groups)
      for (const TensorShard& s : shards) {
        if (!tiles[k++] && !err)
          err = what + ": the ranks' ranges of /" + g + "/" + s.name + " do not cover its " +
                std::to_string(numel_of(s.shape)) + " elements exactly once";
      }
  }
  agree_on_error(comm, err);

  // 3. Rank 0 prepares the directory.
  if (rank == 0) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir, ec))
      err = "checkpoint directory " + dir + ": cannot create: " + (ec ? ec.message() : "not a directory");
    else if (::access(dir.c_str(), W_OK | X_OK) != 0)
      err = "checkpoint directory " + dir + ": not writable: " + std::strerror(errno);
    else {
      if (in_checkpoint_dir) remove_stale_temporaries(dir);  // first: they may hold the space needed
      if (const auto full = disk_space_problem(dir, checkpoint_bytes_estimate(groups)))
        err = what + ": " + *full;
    }
  }
  agree_on_error(comm, err);
}

H5Id create_checkpoint_file(const std::string& tmp_path, const CheckpointMeta& meta, hid_t fapl, hid_t dxpl,
                            int rank) {
  H5Id fcpl(ZCHECK_H5(H5Pcreate(H5P_FILE_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_link_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  H5Id file(ZCHECK_H5(H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl)), H5Fclose);
  const hid_t f = file.get();
  write_attr_string(f, "format", kCheckpointFormatName);
  write_attr_i64(f, "format_version", kCheckpointFormatVersion);
  write_attr_string(f, "deck_toml", meta.deck_toml);
  write_attr_string(f, "zero_toml", meta.zero_toml);
  write_attr_string(f, "code_version", meta.code_version);
  write_attr_i64(f, "world_size", meta.world_size);
  write_attr_i64(f, "ranks_per_node", meta.ranks_per_node);
  write_attr_i64(f, "nodes", meta.nodes);
  write_attr_string(f, "checksum_algorithm", kCheckpointChecksumAlgorithm);

  H5Id state = create_group(f, "state");
  write_attr_i64(state.get(), "step", meta.step);
  write_attr_i64(state.get(), "tokens_seen", meta.tokens_seen);
  write_attr_u64(state.get(), "seed", meta.seed);
  H5Id scalars = create_group(state.get(), "scalars");
  for (const auto& [k, v] : meta.scalars) {
    std::vector<uint64_t> bits(v.size());
    if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * 8);  // null data(): undefined even for 0
    write_state_dataset(scalars.get(), k, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data(), int64_t(v.size()),
                        bits, dxpl, rank);
  }
  H5Id words = create_group(state.get(), "words");
  for (const auto& [k, v] : meta.words)
    write_state_dataset(words.get(), k, H5T_STD_U64LE, H5T_NATIVE_UINT64, v.data(), int64_t(v.size()), v,
                        dxpl, rank);
  return file;
}

H5Id tensor_dataset(hid_t file, const std::string& g, const TensorShard& s) {
  H5Id group;
  {
    std::stringstream ss(g);
    std::string part, sofar;
    hid_t parent = file;
    while (std::getline(ss, part, '/')) {
      sofar += (sofar.empty() ? "" : "/") + part;
      const htri_t exists = ZCHECK_H5(H5Lexists(file, sofar.c_str(), H5P_DEFAULT));
      group = exists ? H5Id(ZCHECK_H5(H5Gopen2(file, sofar.c_str(), H5P_DEFAULT)), H5Gclose)
                     : create_group(parent, part);
      parent = group.get();
    }
  }
  H5Id dcpl(ZCHECK_H5(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS));
  ZCHECK_H5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
  ZCHECK_H5(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY));
  H5Id fspace = make_space(s.shape);
  return H5Id(ZCHECK_H5(H5Dcreate2(group.get(), s.name.c_str(), H5T_IEEE_F32LE, fspace.get(), H5P_DEFAULT,
                                   dcpl.get(), H5P_DEFAULT)),
              H5Dclose);
}

void write_checksums_and_close(H5Id& file, std::vector<H5Id>& datasets, const std::vector<uint64_t>& sums) {
  for (size_t k = 0; k < datasets.size(); ++k) {
    write_attr_u64(datasets[k].get(), "checksum", sums[k]);
    write_attr_string(datasets[k].get(), "checksum_algorithm", kCheckpointChecksumAlgorithm);
    datasets[k].close_checked("H5Dclose(tensor)", __FILE__, __LINE__);
  }
  // The attributes too, then the last metadata at close (fsynced by rank 0 at the commit).
  ZCHECK_H5(H5Fflush(file.get(), H5F_SCOPE_GLOBAL));
  file.close_checked("H5Fclose(checkpoint)", __FILE__, __LINE__);
}

std::optional<std::string> fsync_temporary(const std::string& dir, const std::string& name) {
  const std::string tmp_path = join(dir, tmp_name(name));
  try {
    fsync_path(tmp_path, false);
  } catch (const Error& e) {
    ::unlink(tmp_path.c_str());
    return std::string(e.what());
  }
  return std::nullopt;
}

std::optional<std::string> rename_into_place(const std::string& dir, const std::string& name, int keep,
                                             bool in_checkpoint_dir, PhaseTimer& timer) {
  const std::string final_path = join(dir, name), tmp_path = join(dir, tmp_name(name));
  try {
    if (std::rename(tmp_path.c_str(), final_path.c_str()) != 0)
      throw Error(final_path + ": cannot rename " + tmp_path + " into place: " + std::strerror(errno));
    fsync_path(dir, true);
    timer.mark("rename");
    if (in_checkpoint_dir) {
      maybe_fault(0, CheckpointFault::kBeforeLatest);
      write_latest(dir, name);
      timer.mark("latest");
      maybe_fault(0, CheckpointFault::kBeforeRetention);
      apply_retention(dir, keep, name);
      timer.mark("retention");
    }
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

void commit_checkpoint(MPI_Comm comm, const std::string& dir, const std::string& name, int keep,
                       bool in_checkpoint_dir, PhaseTimer& timer) {
  const int rank = comm_rank(comm);
  std::optional<std::string> err;
  if (rank == 0) err = fsync_temporary(dir, name);
  // Agreed before the rename: a rank that died since the close stops it.
  agree_on_error(comm, err);
  timer.mark("fsync");
  if (rank == 0) err = rename_into_place(dir, name, keep, in_checkpoint_dir, timer);
  agree_on_error(comm, err);
}

}  // namespace ckpt

namespace {

// write_checkpoint, and with `in_checkpoint_dir` false write_checkpoint_file:
// the same file, but no stale temporaries removed, no `latest`, no retention.
void write_file(MPI_Comm comm, const std::string& dir, const std::string& name, const ShardGroups& groups,
                const CheckpointMeta& meta, int keep, bool in_checkpoint_dir) {
  QuietHdf5 quiet;
  const int rank = comm_rank(comm);
  PhaseTimer timer("checkpoint write", rank);
  check_before_write(comm, dir, name, groups, meta, in_checkpoint_dir);
  timer.mark("checks");

  // Checksums: each rank over its part (the host copies of the chunks each
  // dataset is written from, io/checkpoint/shard_staging.hpp), on a helper thread while
  // this one writes the data and waits for the disk; summed over the ranks
  // and written as attributes afterwards.
  size_t n_tensors = 0;
  for (const auto& gs : groups) n_tensors += gs.second.size();
  std::vector<uint64_t> sums(n_tensors, 0);
  ChecksumWorker summer(sums, kChecksumQueue);
  const int64_t chunk = shard_staging_chunk();
  const std::vector<int64_t> rounds = chunk_rounds(comm, groups, chunk);

  // The file, collectively.
  H5Id dxpl = transfer_plist();
  H5Id fapl = parallel_fapl(comm);
  H5Id file = create_checkpoint_file(join(dir, tmp_name(name)), meta, fapl.get(), dxpl.get(), rank);
  int written = 0;
  maybe_fault(rank, CheckpointFault::kAfterDatasets, written);
  std::vector<H5Id> datasets;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) {
      H5Id d = tensor_dataset(file.get(), g, s);
      H5Id fspace(ZCHECK_H5(H5Dget_space(d.get())), H5Sclose);
      const size_t k = datasets.size();
      if (numel_of(s.shape) > 0)
        for (int64_t i = 0; i < rounds[k]; ++i) {
          const ChunkRange r = chunk_range(s.end - s.begin, chunk, i);
          std::vector<float> part = shard_chunk_to_host(s, r);
          select_flat_range(fspace.get(), s.shape, s.begin + r.begin, s.begin + r.end);
          H5Id mspace = memory_space(r.end - r.begin);
          static const float dummy = 0;
          ZCHECK_H5(H5Dwrite(d.get(), H5T_NATIVE_FLOAT, mspace.get(), fspace.get(), dxpl.get(),
                             part.empty() ? &dummy : part.data()));
          summer.add(k, s.begin + r.begin, std::move(part));
        }
      datasets.push_back(std::move(d));
      maybe_fault(rank, CheckpointFault::kAfterDatasets, ++written);
    }
  timer.mark("datasets");
  // Every rank's data to stable storage (MPI_File_sync on every rank).
  ZCHECK_H5(H5Fflush(file.get(), H5F_SCOPE_GLOBAL));
  timer.mark("flush");
  summer.finish();
  ZCHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums.data(), int(sums.size()), MPI_UINT64_T, MPI_SUM, comm));
  timer.mark("checksums");
  write_checksums_and_close(file, datasets, sums);
  timer.mark("attributes+close");
  maybe_fault(rank, CheckpointFault::kBeforeRename);
  commit_checkpoint(comm, dir, name, keep, in_checkpoint_dir, timer);
}

}  // namespace

void write_checkpoint(MPI_Comm comm, const std::string& dir, const std::string& name,
                      const ShardGroups& groups, const CheckpointMeta& meta, int keep) {
  write_file(comm, dir, name, groups, meta, keep, true);
}

void write_checkpoint_file(MPI_Comm comm, const std::string& path, const ShardGroups& groups,
                           const CheckpointMeta& meta) {
  const fs::path p(path);
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  write_file(comm, dir, p.filename().string(), groups, meta, 0, false);
}

}  // namespace zeropp
