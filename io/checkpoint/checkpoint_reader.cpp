// read_checkpoint (io/checkpoint/checkpoint.hpp).
#include <hdf5.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "io/checkpoint/checkpoint.hpp"
#include "io/checkpoint/checkpoint_checksum.hpp"
#include "io/checkpoint/checkpoint_isolated.hpp"
#include "io/checkpoint/checkpoint_metadata.hpp"
#include "io/checkpoint/checkpoint_scan.hpp"
#include "io/checkpoint/checkpoint_shards.hpp"
#include "io/checkpoint/checksum_worker.hpp"
#include "io/checkpoint/phase_timer.hpp"
#include "io/checkpoint/shard_staging.hpp"
#include "io/hdf5/h5_util.hpp"
#include "src/base/errors.hpp"

namespace zeropp {
using namespace ckpt;
using namespace h5;

namespace {

// Rank 0 checks the file alone, in a child process (no collective HDF5 call
// sees a bad file, and a crash inside HDF5 is an error), and broadcasts what it found.
Scan scan_on_rank0(MPI_Comm comm, const std::string& path, const std::string& where) {
  std::optional<std::string> err;
  std::string packed;
  if (comm_rank(comm) == 0) {
    try {
      IsolatedScan r = scan_file_isolated(path, false);
      if (!r.error.empty()) err = std::move(r.error);
      packed = std::move(r.packed);
    } catch (const Error& e) {
      err = e.what();
    }
  }
  agree_on_error(comm, err);
  bcast_string(comm, packed);
  return unpack_scan(packed, where);
}

// The stored checksum of every expected dataset, in the groups' order, after
// checking that each is there with its shape, dtype and a checksum attribute.
std::vector<uint64_t> stored_checksums(const Scan& scan, const ShardGroups& groups,
                                       const std::string& where) {
  std::unordered_map<std::string, const ScannedDataset*> by_path;
  for (const ScannedDataset& d : scan.datasets) by_path[d.report.path] = &d;
  std::vector<uint64_t> stored;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) {
      const std::string p = "/" + g + "/" + s.name;
      const auto found = by_path.find(p);
      if (found == by_path.end()) {
        const bool weights_only =
            g != "model" &&
            std::none_of(scan.datasets.begin(), scan.datasets.end(),
                         [&](const ScannedDataset& d) { return d.report.path.rfind("/" + g + "/", 0) == 0; });
        if (weights_only)  // what `ckpt import` writes: no optimizer state to resume
          throw Error(where + ": holds no /" + g +
                      " (a weights-only checkpoint, as `zeropp ckpt import` writes): start a new run from it "
                      "with --init-from");
        throw Error(where + ": dataset " + p + " missing");
      }
      const DatasetReport& r = found->second->report;
      if (r.shape != s.shape)
        throw Error(where + ": dataset " + p + ": expected shape " + shape_str(s.shape) + ", found " +
                    shape_str(r.shape));
      if (!r.problem.empty()) throw Error(where + ": dataset " + p + ": " + r.problem);
      stored.push_back(r.stored_checksum);
    }
  return stored;
}

// One tensor's dataset, open for collective reads of flat ranges.
struct DatasetReader {
  H5Id d, fspace;
  const TensorShard& s;
  hid_t dxpl;
  DatasetReader(hid_t file, const std::string& p, const TensorShard& shard, hid_t transfer)
      : d(ZCHECK_H5(H5Dopen2(file, p.c_str(), H5P_DEFAULT)), H5Dclose),
        fspace(ZCHECK_H5(H5Dget_space(d.get())), H5Sclose),
        s(shard),
        dxpl(transfer) {}
  // Elements [b, e) of the flattened tensor into dst; every rank calls it, e == b included.
  void read(int64_t b, int64_t e, float* dst) {
    if (numel_of(s.shape) == 0) return;
    select_flat_range(fspace.get(), s.shape, b, e);
    H5Id mspace = memory_space(e - b);
    static float dummy;
    ZCHECK_H5(H5Dread(d.get(), H5T_NATIVE_FLOAT, mspace.get(), fspace.get(), dxpl, e > b ? dst : &dummy));
  }
};

// Throws naming the first dataset whose checksum over the data read differs from the stored one.
void verify_checksums(const std::vector<uint64_t>& sums, const std::vector<uint64_t>& stored,
                      const ShardGroups& groups, const std::string& where) {
  size_t k = 0;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) {
      if (sums[k] != stored[k])
        throw Error(where + ": dataset /" + g + "/" + s.name + ": checksum mismatch (stored " +
                    hex64(stored[k]) + ", computed " + hex64(sums[k]) + "): the file is corrupted");
      ++k;
    }
}

}  // namespace

CheckpointMeta read_checkpoint(MPI_Comm comm, const std::string& path, const ShardGroups& groups) {
  QuietHdf5 quiet;
  const int rank = comm_rank(comm), size = comm_size(comm);
  PhaseTimer timer("checkpoint read", rank);
  const std::string where = "checkpoint " + path;
  agree_on_error(comm, check_groups(groups, where));
  check_same_on_all_ranks(comm, groups, where);
  const Scan scan = scan_on_rank0(comm, path, where);
  timer.mark("scan");
  const std::vector<uint64_t> stored = stored_checksums(scan, groups, where);
  const std::vector<bool> tiles = ranges_tile(comm, groups);

  // Collective reads of every rank's ranges; checksums over the data read
  // where the ranges tile the tensor, else over an even partition read again.
  H5Id fapl = parallel_fapl(comm);
  H5Id file(ZCHECK_H5(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get())), H5Fclose);
  H5Id dxpl = transfer_plist();
  std::vector<uint64_t> sums(stored.size(), 0);
  ChecksumWorker summer(sums, kChecksumQueue);
  const int64_t chunk = shard_staging_chunk();
  const std::vector<int64_t> rounds = chunk_rounds(comm, groups, chunk);
  size_t k = 0;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) {
      DatasetReader reader(file.get(), "/" + g + "/" + s.name, s, dxpl.get());
      // Into host memory a chunk at a time, then to the engine's (kernels/runtime/device_memory.hpp).
      for (int64_t i = 0; i < rounds[k]; ++i) {
        const ChunkRange r = chunk_range(s.end - s.begin, chunk, i);
        std::vector<float> mine(static_cast<size_t>(r.end - r.begin));
        reader.read(s.begin + r.begin, s.begin + r.end, mine.data());
        shard_chunk_from_host(mine, s, r);
        if (tiles[k]) summer.add(k, s.begin + r.begin, std::move(mine));
      }
      if (!tiles[k]) {
        const int64_t numel = numel_of(s.shape), b = numel * rank / size, e = numel * (rank + 1) / size;
        std::vector<float> part(static_cast<size_t>(e - b));
        reader.read(b, e, part.data());
        summer.add(k, b, std::move(part));
      }
      ++k;
    }
  file.close_checked("H5Fclose(checkpoint)", __FILE__, __LINE__);
  timer.mark("datasets");
  summer.finish();
  timer.mark("checksums");
  ZCHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums.data(), int(sums.size()), MPI_UINT64_T, MPI_SUM, comm));
  verify_checksums(sums, stored, groups, where);
  return scan.meta;
}

}  // namespace zeropp
