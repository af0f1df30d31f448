// metrics.h5 writer; see metrics.hpp for the layout.
//
// Rank 0 writes with the sec2 (POSIX) driver of the parallel HDF5 library,
// not through MPI-IO: a row is ~600 bytes, already gathered to rank 0 by one
// MPI_Gather, and a collective open/extend/write/close per step would make
// every rank wait on file-system metadata operations for data none of them
// holds. One compound dataset (not one dataset per field) keeps a flush to a
// handful of system calls: ~0.2 ms against ~3.5 ms for 85 datasets.
//
// Readers while the run is alive: the file is open only during a flush (open,
// extend, write, close), and the writer opens it with HDF5's file locking
// disabled (H5Pset_file_locking, HDF5 >= 1.10.7), so a reader that holds the
// file open (h5py, with its default locking) never makes a flush fail. A
// reader that opens the file in the middle of a flush may see an error:
// retry. With an older HDF5 a reader holding the file open makes the flush
// wait for the next one (a warning); readers can set
// HDF5_USE_FILE_LOCKING=FALSE to take no lock.
#include "io/files/metrics.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "io/hdf5/h5_util.hpp"
#include "io/hdf5/hdf5_lock.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

const std::array<const char*, kMetricKinds> kMetricKindNames = {"all_gather", "reduce_scatter", "all_to_all",
                                                                "all_reduce", "broadcast"};

namespace {

constexpr const char* kFormat = "zeropp-metrics";
constexpr hsize_t kChunkRows = 64;  // ~38 KiB chunks

// Closes an HDF5 handle on every path out of a scope.
struct H5Handle {
  hid_t id = -1;
  herr_t (*close)(hid_t) = nullptr;
  H5Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  H5Handle(H5Handle&& o) noexcept : id(std::exchange(o.id, -1)), close(o.close) {}
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle& operator=(H5Handle&&) = delete;
  ~H5Handle() {
    if (id >= 0) close(id);
  }
  operator hid_t() const { return id; }
};

// Per-rank values, in the order pack() writes them after the step.
struct RankField {
  std::string name;
  bool bytes;  // also stored as the sum over ranks
};

std::vector<RankField> rank_fields() {
  std::vector<RankField> f = {{"tokens_per_s", false}, {"time_s.step", false}, {"time_s.compute", false}};
  for (const char* k : kMetricKindNames) f.push_back({std::string("time_s.") + k, false});
  f.push_back({"time_s.wait", false});
  f.push_back({"time_s.comm", false});
  for (const char* k : kMetricKindNames) {
    f.push_back({std::string("bytes.") + k + ".intra", true});
    f.push_back({std::string("bytes.") + k + ".inter", true});
  }
  f.push_back({"comm_hidden_fraction", false});
  return f;
}

// The compound row's members, in order: 8 bytes each; the first two int64.
constexpr int kIntFields = 2;  // step, ranks
std::vector<std::string> row_fields() {
  std::vector<std::string> names = {"step", "ranks", "loss", "lr", "grad_norm"};
  for (const RankField& f : rank_fields()) {
    for (const char* s : {".min", ".median", ".max"}) names.push_back(f.name + s);
    if (f.bytes) names.push_back(f.name + ".sum");
  }
  return names;
}

// The row type: packed, 8 bytes per member; `file` picks little-endian file
// types, otherwise native memory types.
H5Handle row_type(const std::vector<std::string>& names, bool file) {
  H5Handle t(ZCHECK_H5(H5Tcreate(H5T_COMPOUND, names.size() * 8)), H5Tclose);
  for (size_t i = 0; i < names.size(); ++i) {
    const hid_t member = i < kIntFields ? (file ? H5T_STD_I64LE : H5T_NATIVE_INT64)
                                        : (file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE);
    ZCHECK_H5(H5Tinsert(t, names[i].c_str(), i * 8, member));
  }
  return t;
}

std::vector<double> pack(const StepRecord& r) {
  std::vector<double> v = {double(r.step), r.tokens_per_s, r.time_step_s, r.time_compute_s};
  double comm = r.time_wait_s;
  for (double t : r.time_collective_s) {
    v.push_back(t);
    comm += t;
  }
  v.push_back(r.time_wait_s);
  v.push_back(comm);
  for (const LinkBytes& b : r.bytes) {
    v.push_back(double(b.intra));
    v.push_back(double(b.inter));
  }
  v.push_back(r.comm_hidden_fraction);
  return v;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

H5Handle file_access() {
  H5Handle fapl(ZCHECK_H5(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  ZCHECK_H5(H5Pset_fapl_sec2(fapl));
#if H5_VERSION_GE(1, 10, 7)
  ZCHECK_H5(H5Pset_file_locking(fapl, false, true));
#endif
  return fapl;
}

// Opens an existing file read-write, or -1 (HDF5's error stack not printed).
hid_t try_open(const std::string& path) {
  H5Handle fapl = file_access();
  hid_t f = -1;
  H5E_BEGIN_TRY { f = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl); }
  H5E_END_TRY;
  return f;
}

// Reopened files rewrite their run attributes: drop the old one before h5_util creates it anew.
void drop_attr(hid_t loc, const char* name) {
  if (ZCHECK_H5(H5Aexists(loc, name)) > 0) ZCHECK_H5(H5Adelete(loc, name));
}

hsize_t length_of(hid_t dset) {
  H5Handle space(ZCHECK_H5(H5Dget_space(dset)), H5Sclose);
  if (ZCHECK_H5(H5Sget_simple_extent_ndims(space)) != 1) return 0;
  hsize_t n = 0;
  ZCHECK_H5(H5Sget_simple_extent_dims(space, &n, nullptr));
  return n;
}

// The /validation row type; `file` as in row_type.
H5Handle val_type(bool file) {
  H5Handle t(ZCHECK_H5(H5Tcreate(H5T_COMPOUND, sizeof(ValidationRow))), H5Tclose);
  ZCHECK_H5(H5Tinsert(t, "step", HOFFSET(ValidationRow, step), file ? H5T_STD_I64LE : H5T_NATIVE_INT64));
  ZCHECK_H5(H5Tinsert(t, "loss", HOFFSET(ValidationRow, loss), file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE));
  return t;
}

// The /rlhf row type; `file` as in row_type.
H5Handle rlhf_type(bool file) {
  H5Handle t(ZCHECK_H5(H5Tcreate(H5T_COMPOUND, sizeof(RlhfRow))), H5Tclose);
  ZCHECK_H5(H5Tinsert(t, "step", HOFFSET(RlhfRow, step), file ? H5T_STD_I64LE : H5T_NATIVE_INT64));
  const std::pair<const char*, size_t> values[] = {{"reward", HOFFSET(RlhfRow, reward)},
                                                   {"kl", HOFFSET(RlhfRow, kl)},
                                                   {"gather_s", HOFFSET(RlhfRow, gather_s)},
                                                   {"generate_s", HOFFSET(RlhfRow, generate_s)},
                                                   {"train_s", HOFFSET(RlhfRow, train_s)},
                                                   {"other_s", HOFFSET(RlhfRow, other_s)},
                                                   {"samples_per_s", HOFFSET(RlhfRow, samples_per_s)}};
  for (const auto& v :
       values)  // not a structured binding: clang 14's lambdas in ZCHECK_H5 cannot capture one
    ZCHECK_H5(H5Tinsert(t, v.first, v.second, file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE));
  return t;
}

// An empty, extendible, chunked table of rows of mtype (file type ftype);
// rows never written read as `fill` (step = -1).
void create_table(hid_t file, const char* name, hid_t ftype, hid_t mtype, const void* fill) {
  H5Handle dcpl(ZCHECK_H5(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_chunk(dcpl, 1, &kChunkRows));
  ZCHECK_H5(H5Pset_fill_value(dcpl, mtype, fill));
  const hsize_t dims = 0, maxdims = H5S_UNLIMITED;
  H5Handle space(ZCHECK_H5(H5Screate_simple(1, &dims, &maxdims)), H5Sclose);
  H5Handle d(ZCHECK_H5(H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)), H5Dclose);
}

void create_tables(hid_t file, const std::vector<std::string>& names) {
  std::vector<double> fill(names.size(), 0.0);
  const int64_t no_step = -1;
  std::memcpy(&fill[0], &no_step, 8);
  create_table(file, "/steps", row_type(names, true), row_type(names, false), fill.data());
  const ValidationRow no_row{-1, 0.0};
  create_table(file, "/validation", val_type(true), val_type(false), &no_row);
}

// Resume: keeps the leading rows of `name` with 0 <= step <= last_step (a
// row of step s was written after s steps, before a checkpoint of step s).
hsize_t keep_rows_through(hid_t file, const char* name, int64_t last_step) {
  H5Handle d(ZCHECK_H5(H5Dopen2(file, name, H5P_DEFAULT)), H5Dclose);
  H5Handle step_only(ZCHECK_H5(H5Tcreate(H5T_COMPOUND, 8)), H5Tclose);
  ZCHECK_H5(H5Tinsert(step_only, "step", 0, H5T_NATIVE_INT64));
  std::vector<int64_t> step(length_of(d));
  if (!step.empty()) ZCHECK_H5(H5Dread(d, step_only, H5S_ALL, H5S_ALL, H5P_DEFAULT, step.data()));
  hsize_t keep = 0;
  while (keep < step.size() && step[keep] >= 0 && step[keep] <= last_step) ++keep;
  ZCHECK_H5(H5Dset_extent(d, &keep));
  return keep;
}

// Appends k rows of mtype at row `at` of the table `name`.
void write_table_rows(hid_t file, const char* name, hid_t mtype, hsize_t at, hsize_t k, const void* rows) {
  H5Handle d(ZCHECK_H5(H5Dopen2(file, name, H5P_DEFAULT)), H5Dclose);
  const hsize_t total = at + k;
  ZCHECK_H5(H5Dset_extent(d, &total));
  H5Handle space(ZCHECK_H5(H5Dget_space(d)), H5Sclose);
  ZCHECK_H5(H5Sselect_hyperslab(space, H5S_SELECT_SET, &at, nullptr, &k, nullptr));
  H5Handle mem(ZCHECK_H5(H5Screate_simple(1, &k, nullptr)), H5Sclose);
  ZCHECK_H5(H5Dwrite(d, mtype, mem, space, H5P_DEFAULT, rows));
}

void write_run_attrs(hid_t file, const RunInfo& info, const std::string& hosts) {
  std::string kinds;
  for (const char* k : kMetricKindNames) kinds += std::string(kinds.empty() ? "" : "\n") + k;
  const std::pair<const char*, std::string> texts[] = {{"format", kFormat},
                                                       {"deck", info.deck},
                                                       {"code_version", info.code_version},
                                                       {"hosts", hosts},
                                                       {"kinds", kinds}};
  const std::pair<const char*, int64_t> numbers[] = {
      {"format_version", MetricsWriter::kFormatVersion}, {"P", info.P}, {"X", info.X}, {"Y", info.Y}};
  for (const auto& [name, value] : texts) {
    drop_attr(file, name);
    h5::write_attr_string(file, name, value);
  }
  for (const auto& [name, value] : numbers) {
    drop_attr(file, name);
    h5::write_attr_i64(file, name, value);
  }
}

// Unique host names in rank order, one per line.
std::string gather_hosts(MPI_Comm comm, int rank, int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  ZCHECK_MPI(MPI_Get_processor_name(name, &len));
  std::vector<char> all(rank == 0 ? size_t(size) * MPI_MAX_PROCESSOR_NAME : 0);
  ZCHECK_MPI(MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                        0, comm));
  std::vector<std::string> seen;
  for (int r = 0; r < (rank == 0 ? size : 0); ++r) {
    const char* p = all.data() + size_t(r) * MPI_MAX_PROCESSOR_NAME;
    std::string h(p, strnlen(p, MPI_MAX_PROCESSOR_NAME));
    if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
  }
  std::string out;
  for (const std::string& h : seen) out += (out.empty() ? "" : "\n") + h;
  return out;
}

}  // namespace

MetricsWriter::MetricsWriter(MPI_Comm comm, const std::string& dir, const RunInfo& info, MetricsOptions opts)
    : comm_(comm), opts_(opts) {
  ZCHECK_MPI(MPI_Comm_rank(comm, &rank_));
  ZCHECK_MPI(MPI_Comm_size(comm, &size_));
  if (opts.flush_every < 1)
    throw Error("metrics: flush_every must be >= 1, got " + std::to_string(opts.flush_every));
  path_ = (dir.empty() || dir.back() == '/' ? dir : dir + "/") + kFileName;
  fields_ = row_fields();

  std::string hosts;
  if (info.hosts.empty()) {
    hosts = gather_hosts(comm, rank_, size_);
  } else {
    for (const std::string& h : info.hosts) hosts += (hosts.empty() ? "" : "\n") + h;
  }

  collectively(comm, [&] {
    if (rank_ != 0) return;
    h5::LibraryLock lock;
    hid_t id = -1;
    if (opts.resume) id = try_open(path_);
    if (id < 0 && opts.resume && ::access(path_.c_str(), F_OK) == 0)
      throw Error("metrics: cannot resume " + path_ +
                  ": not a readable HDF5 file (move it away to start a new one)");
    if (id < 0) {
      // A new file (or a resume without one).
      H5Handle fapl = file_access();
      H5E_BEGIN_TRY { id = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl); }
      H5E_END_TRY;
      if (id < 0)
        throw Error("metrics: cannot create " + path_ + " (does the folder exist and is it writable?)");
      H5Handle file(id, H5Fclose);
      create_tables(file, fields_);
      write_run_attrs(file, info, hosts);
      rows_in_file_ = 0;
      val_rows_in_file_ = 0;
      return;
    }
    // Resume: check the format, then keep the leading rows with 0 <= step < resume_step.
    H5Handle file(id, H5Fclose);
    const auto format = h5::read_attr_string(file, "format");
    const auto version_attr = h5::read_attr_int<int64_t>(file, "format_version", H5T_NATIVE_INT64);
    const int64_t version = version_attr.value_or(0);
    if (format != kFormat || !version_attr || ZCHECK_H5(H5Lexists(file, "steps", H5P_DEFAULT)) <= 0 ||
        (version == kFormatVersion && ZCHECK_H5(H5Lexists(file, "validation", H5P_DEFAULT)) <= 0))
      throw Error("metrics: cannot resume " + path_ + ": not a zeropp metrics file");
    if (version != kFormatVersion)
      throw Error("metrics: cannot resume " + path_ + ": format version " + std::to_string(version) +
                  ", this build writes " + std::to_string(kFormatVersion));
    {
      H5Handle steps(ZCHECK_H5(H5Dopen2(file, "steps", H5P_DEFAULT)), H5Dclose);
      H5Handle ftype(ZCHECK_H5(H5Dget_type(steps)), H5Tclose);
      H5Handle want = row_type(fields_, true);
      if (ZCHECK_H5(H5Tequal(ftype, want)) <= 0)
        throw Error("metrics: cannot resume " + path_ + ": /steps has other fields than this build writes");
    }
    rows_in_file_ = keep_rows_through(file, "steps", opts.resume_step);
    val_rows_in_file_ = keep_rows_through(file, "validation", opts.resume_step);
    if (ZCHECK_H5(H5Lexists(file, "rlhf", H5P_DEFAULT)) > 0)
      rlhf_rows_in_file_ = keep_rows_through(file, "rlhf", opts.resume_step);
    write_run_attrs(file, info, hosts);
  });
}

MetricsWriter::~MetricsWriter() { flush(); }

void MetricsWriter::append(const StepRecord& rec) {
  if (any_step_ && rec.step <= last_step_)
    throw Error("metrics: step " + std::to_string(rec.step) + " appended after step " +
                std::to_string(last_step_));
  if (rec.step < 0) throw Error("metrics: negative step " + std::to_string(rec.step));
  any_step_ = true;
  last_step_ = rec.step;

  const std::vector<double> mine = pack(rec);
  const int n = int(mine.size());
  std::vector<double> all(rank_ == 0 ? size_t(n) * size_t(size_) : 0);
  ZCHECK_MPI(MPI_Gather(mine.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, comm_));
  if (rank_ != 0) return;

  for (int r = 0; r < size_; ++r)
    if (all[size_t(r) * size_t(n)] != mine[0])
      fatal("MetricsWriter::append", __FILE__, __LINE__,
            "rank " + std::to_string(r) + " appended step " +
                std::to_string(int64_t(all[size_t(r) * size_t(n)])) + ", rank 0 step " +
                std::to_string(rec.step));
  // One row of 8-byte members in the order of row_fields().
  const size_t first = rows_.size();
  rows_.resize(first + fields_.size());
  double* row = rows_.data() + first;
  const int64_t ints[kIntFields] = {rec.step, size_};
  std::memcpy(row, ints, sizeof ints);
  size_t c = kIntFields;
  row[c++] = rec.loss;
  row[c++] = rec.lr;
  row[c++] = rec.grad_norm;
  std::vector<double> v(static_cast<size_t>(size_));
  const std::vector<RankField> fields = rank_fields();
  for (size_t f = 0; f < fields.size(); ++f) {
    double sum = 0;
    for (int r = 0; r < size_; ++r) {
      v[size_t(r)] = all[size_t(r) * size_t(n) + 1 + f];
      sum += v[size_t(r)];
    }
    row[c++] = *std::min_element(v.begin(), v.end());
    row[c++] = median_of(v);
    row[c++] = *std::max_element(v.begin(), v.end());
    if (fields[f].bytes) row[c++] = sum;
  }
  if (int64_t(rows_.size() / fields_.size()) >= opts_.flush_every) write_rows();
}

void MetricsWriter::append_validation(int64_t step, double loss) {
  if (any_val_ && step <= last_val_step_)
    throw Error("metrics: validation at step " + std::to_string(step) + " after step " +
                std::to_string(last_val_step_));
  if (step < 0) throw Error("metrics: validation at negative step " + std::to_string(step));
  any_val_ = true;
  last_val_step_ = step;
  if (rank_ == 0) val_rows_.push_back({step, loss});
}

void MetricsWriter::append_rlhf(const RlhfRow& row) {
  if (!rlhf_rows_.empty() && row.step <= rlhf_rows_.back().step)
    throw Error("metrics: rlhf row of step " + std::to_string(row.step) + " after step " +
                std::to_string(rlhf_rows_.back().step));
  if (rank_ == 0) rlhf_rows_.push_back(row);
}

void MetricsWriter::flush() {
  if (rank_ == 0) write_rows();
}

void MetricsWriter::write_rows() {
  const hsize_t k = rows_.size() / fields_.size(), kv = val_rows_.size(), kr = rlhf_rows_.size();
  if (k == 0 && kv == 0 && kr == 0) return;
  h5::LibraryLock lock;  // a checkpoint save's thread may be in HDF5
  const hid_t id = try_open(path_);
  if (id < 0) {
    // Keep the rows and try again at the next flush: a metrics file must
    // never stop a training run.
    if (!warned_)
      std::fprintf(stderr, "zeropp: metrics: cannot open %s to append; rows are kept until it can be\n",
                   path_.c_str());
    warned_ = true;
    return;
  }
  H5Handle file(id, H5Fclose);
  // Rank 0 is the only writer, so its count of rows is the truth: rows that
  // a flush cut short by a crash left behind are overwritten.
  if (k > 0) write_table_rows(file, "steps", row_type(fields_, false), rows_in_file_, k, rows_.data());
  if (kv > 0) write_table_rows(file, "validation", val_type(false), val_rows_in_file_, kv, val_rows_.data());
  if (kr > 0) {
    if (ZCHECK_H5(H5Lexists(file, "rlhf", H5P_DEFAULT)) <= 0) {
      const RlhfRow no_row{-1, 0, 0, 0, 0, 0, 0, 0};
      create_table(file, "/rlhf", rlhf_type(true), rlhf_type(false), &no_row);
    }
    write_table_rows(file, "rlhf", rlhf_type(false), rlhf_rows_in_file_, kr, rlhf_rows_.data());
  }
  rows_in_file_ += k;
  val_rows_in_file_ += kv;
  rlhf_rows_in_file_ += kr;
  rows_.clear();
  val_rows_.clear();
  rlhf_rows_.clear();
  warned_ = false;
}

}  // namespace zeropp
