// Scaling data: metrics.h5 in the run folder, one row per training step and
// one per validation.
//
// MetricsWriter is collective over an MPI communicator. Every rank calls
// append() once per step with its own StepRecord; the values that differ
// between ranks are gathered to rank 0 (one MPI_Gather of 21 doubles) and
// stored as min/median/max over ranks (bytes also as the sum), the global
// ones (loss, lr, grad norm) once. Rank 0 alone writes the file and keeps it
// closed between flushes, so the file can be read (h5py, h5dump) while the
// run is alive, and after a crash holds every row up to the last flush.
//
// Layout (format "zeropp-metrics", version 2; version 1 numbered steps from 0
// and had no /validation):
//   /        attributes: format, format_version, deck (TOML text), P, X, Y
//            (ranks, ranks per node, nodes), code_version, hosts (unique host
//            names in rank order, one per line), kinds (collective kind
//            names, one per line)
//   /steps   1-D, chunked, extendible dataset of a packed compound type, one
//            row per step (h5py: f["steps"]["loss"], f["steps"][:] gives a
//            numpy structured array). Members, 8 bytes each:
//     step, ranks                     int64: the training step, counted from 1 as
//                                     the log prints it ("step 12/500" after 12
//                                     optimizer steps); P at that step
//     loss, lr, grad_norm             float64: global values (rank 0's record)
//     <field>.{min,median,max}        float64 over ranks, where <field> is
//       tokens_per_s, time_s.step, time_s.compute, time_s.<kind>, time_s.wait,
//       time_s.comm (= the collective kinds + wait)
//     bytes.<kind>.{intra,inter}.{min,median,max,sum}   float64: bytes sent by
//       a rank during the step (exact: integers below 2^53)
//   /validation  1-D, chunked, extendible, packed compound {step int64, loss
//            float64}: the validation loss after `step` training steps (the
//            log's "val step N" and "val final" lines).
//   /rlhf    only in `zeropp rlhf` runs: packed compound RlhfRow {step int64,
//            reward, kl, gather_s, generate_s, train_s, other_s,
//            samples_per_s float64}, one row per iteration.
// <kind> is one of all_gather, reduce_scatter, all_to_all, all_reduce,
// broadcast. The median of an even number of ranks is the mean of the two
// middle values (numpy.median). One dataset keeps a row atomic and a flush
// cheap. Rows that a crash in the middle of a flush left unwritten read
// step = -1 (the fill value, also in /validation); readers drop them.
// scaling/metrics_table.py prints tables from one or many such files.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace zeropp {

// Collective kinds, in the order of src/comm/communicator.hpp's Kind (io does not
// depend on the communication layer; the caller converts ByteCounters).
constexpr int kMetricKinds = 5;
// Their names in /steps member names: "all_gather", "reduce_scatter", ...
extern const std::array<const char*, kMetricKinds> kMetricKindNames;

// Bytes sent within a node (intra) and across nodes (inter).
struct LinkBytes {
  int64_t intra = 0, inter = 0;
};

// One rank's view of one training step.
struct StepRecord {
  int64_t step = 0;
  // Global values, identical on every rank (rank 0's are stored).
  double loss = 0, lr = 0, grad_norm = 0;
  // This rank's values, stored as min/median/max over ranks.
  double tokens_per_s = 0;  // tokens of the whole step (all ranks) / this rank's step time
  double time_step_s = 0;   // wall time of the step on this rank
  double time_compute_s = 0;
  std::array<double, kMetricKinds> time_collective_s{};  // per collective kind
  double time_wait_s = 0;
  std::array<LinkBytes, kMetricKinds> bytes{};  // sent by this rank, per collective kind
  // The fraction of this rank's time in collectives that computation hid
  // (ByteCounters::hidden_fraction in src/comm/communicator.hpp).
  double comm_hidden_fraction = 0;
};

// Run attributes, written on the root group (rewritten on resume).
struct RunInfo {
  std::string deck;  // the resolved deck as TOML text
  int P = 1, X = 1, Y = 1;
  std::string code_version;
  std::vector<std::string> hosts;  // empty: gathered with MPI_Get_processor_name
};

// A row of /validation.
struct ValidationRow {
  int64_t step;
  double loss;
};

// A row of /rlhf (`zeropp rlhf`, src/rlhf/rlhf.hpp), after iteration `step`:
// the global mean reward and mean per-token KL to the reference, and rank
// 0's time breakdown (seconds) and samples/s.
struct RlhfRow {
  int64_t step;
  double reward, kl, gather_s, generate_s, train_s, other_s, samples_per_s;
};

struct MetricsOptions {
  int flush_every = 1;  // rank 0 writes buffered rows every this many steps (>= 1)
  // false: a new metrics.h5 (an existing one is replaced). true: append to
  // the existing file (created if missing), keeping only the rows (of both
  // tables) with step <= resume_step: the resumed checkpoint was saved after
  // resume_step steps.
  bool resume = false;
  int64_t resume_step = 0;
};

class MetricsWriter {
 public:
  static constexpr const char* kFileName = "metrics.h5";
  static constexpr int kFormatVersion = 3;

  // Collective over comm. `dir` must exist. Throws Error on every rank if
  // the file cannot be created, or (resume) is not a metrics file of this
  // format.
  MetricsWriter(MPI_Comm comm, const std::string& dir, const RunInfo& info, MetricsOptions opts = {});
  // Writes the rows still buffered on rank 0 (local, not collective).
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  // Collective: every rank passes its record of the same step; steps must
  // increase. Rank 0 writes every flush_every appends.
  void append(const StepRecord& rec);
  // Every rank passes the same validation loss after `step` training steps
  // (not collective; steps must increase); written at the next flush.
  void append_validation(int64_t step, double loss);
  // The same for /rlhf (created by the first such row; a resume keeps its rows
  // with step <= resume_step like the other tables).
  void append_rlhf(const RlhfRow& row);
  // Rank 0 writes its buffered rows now; a no-op elsewhere (not collective).
  void flush();

  const std::string& path() const { return path_; }

 private:
  void write_rows();  // rank 0

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::string path_;
  MetricsOptions opts_;
  int64_t last_step_ = 0;
  bool any_step_ = false;
  bool warned_ = false;
  int64_t last_val_step_ = 0;
  bool any_val_ = false;
  std::vector<std::string> fields_;      // members of a /steps row
  std::vector<double> rows_;             // rank 0: buffered rows, 8 bytes per member (int64 ones bit-copied)
  uint64_t rows_in_file_ = 0;            // rank 0: rows of /steps that hold data
  std::vector<ValidationRow> val_rows_;  // rank 0: buffered rows of /validation
  uint64_t val_rows_in_file_ = 0;        // rank 0: rows of /validation that hold data
  std::vector<RlhfRow> rlhf_rows_;       // rank 0: buffered rows of /rlhf
  uint64_t rlhf_rows_in_file_ = 0;       // rank 0: rows of /rlhf that hold data
};

}  // namespace zeropp
