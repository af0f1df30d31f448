#include "io/checkpoint.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "io/disk_space.hpp"
#include "src/base/errors.hpp"

namespace zeropp {
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------
// Tuning (docs/checkpoint-format.md, docs/performance.md)

constexpr hsize_t kAlignThreshold = hsize_t(1) << 20;  // datasets of 1 MiB or more ...
constexpr hsize_t kAlignment = hsize_t(1) << 20;       // ... start at a multiple of 1 MiB
constexpr int64_t kInspectChunk = int64_t(1) << 23;    // elements per read in inspect_checkpoint

// ---------------------------------------------------------------------------
// Small helpers

// Closes an HDF5 identifier when it goes out of scope.
class H5Id {
 public:
  H5Id() = default;
  H5Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id(H5Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  H5Id& operator=(H5Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = -1;
    }
    return *this;
  }
  ~H5Id() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  // Closes now and checks the result (for files: the close writes metadata).
  void close_checked(const char* what, const char* file, int line) {
    const hid_t id = id_;
    id_ = -1;
    if (id >= 0 && close_(id) < 0) fatal(what, file, line, "HDF5 returned an error");
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// Silences HDF5's automatic error stack printing while alive; we report our own.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

int comm_rank(MPI_Comm comm) {
  int r = 0;
  ZCHECK_MPI(MPI_Comm_rank(comm, &r));
  return r;
}
int comm_size(MPI_Comm comm) {
  int s = 0;
  ZCHECK_MPI(MPI_Comm_size(comm, &s));
  return s;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string hex64(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

// Phase times of a save or load, printed by rank 0 when ZEROPP_CKPT_TIMING is set.
class PhaseTimer {
 public:
  PhaseTimer(const char* what, int rank) : what_(what), on_(rank == 0 && std::getenv("ZEROPP_CKPT_TIMING")) {
    t0_ = last_ = MPI_Wtime();
  }
  void mark(const char* phase) {
    if (!on_) return;
    const double t = MPI_Wtime();
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s %.3f s", phase, t - last_);
    text_ += buf;
    last_ = t;
  }
  ~PhaseTimer() {
    if (on_) std::fprintf(stderr, "zeropp: %s:%s; total %.3f s\n", what_, text_.c_str(), MPI_Wtime() - t0_);
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  const char* what_;
  bool on_;
  double t0_ = 0, last_ = 0;
  std::string text_;
};

// A thread joined when it goes out of scope (also when an exception passes).
class JoiningThread {
 public:
  template <class F>
  explicit JoiningThread(F&& f) : t_(std::forward<F>(f)) {}
  ~JoiningThread() { join(); }
  void join() {
    if (t_.joinable()) t_.join();
  }
  JoiningThread(const JoiningThread&) = delete;
  JoiningThread& operator=(const JoiningThread&) = delete;

 private:
  std::thread t_;
};

// Checksums of parts computed on a helper thread while the caller reads on.
class ChecksumWorker {
 public:
  explicit ChecksumWorker(std::vector<uint64_t>& sums) : sums_(sums), thread_([this] { run(); }) {}
  ~ChecksumWorker() { finish(); }
  ChecksumWorker(const ChecksumWorker&) = delete;
  ChecksumWorker& operator=(const ChecksumWorker&) = delete;
  // sums[index] = checksum of n floats at flat index `first`: `data`, or `owned` when given.
  void add(size_t index, const float* data, int64_t first, int64_t n, std::vector<float> owned) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back({index, data, first, n, std::move(owned)});
    }
    cv_.notify_one();
  }
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Job {
    size_t index;
    const float* data;
    int64_t first, n;
    std::vector<float> owned;
  };
  void run() {
    while (true) {
      Job j;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !jobs_.empty() || done_; });
        if (jobs_.empty()) return;
        j = std::move(jobs_.front());
        jobs_.pop_front();
      }
      sums_[j.index] = checksum_part(j.owned.empty() ? j.data : j.owned.data(), j.first, j.n);
    }
  }
  std::vector<uint64_t>& sums_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool done_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

// ---------------------------------------------------------------------------
// Fault injection

struct FaultSetting {
  int rank = -1;
  CheckpointFault where = CheckpointFault::kNone;
  int after_datasets = 0;
};
FaultSetting g_fault;

void maybe_fault(int rank, CheckpointFault where, int datasets_written = -1) {
  if (g_fault.where != where || g_fault.rank != rank) return;
  if (where == CheckpointFault::kAfterDatasets && datasets_written != g_fault.after_datasets) return;
  std::fprintf(stderr, "zeropp: rank %d: checkpoint fault injection: SIGKILL\n", rank);
  std::fflush(stderr);
  std::raise(SIGKILL);
}

// ---------------------------------------------------------------------------
// Byte buffers for broadcasting what rank 0 found in a file

class Packer {
 public:
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void i64s(const std::vector<int64_t>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(int64_t));
  }
  void f64s(const std::vector<double>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(double));
  }
  void u64s(const std::vector<uint64_t>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(uint64_t));
  }
  std::string& bytes() { return buf_; }

 private:
  void raw(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  std::string buf_;
};

class Unpacker {
 public:
  explicit Unpacker(const std::string& b) : buf_(b) {}
  uint64_t u64() {
    uint64_t v;
    raw(&v, sizeof v);
    return v;
  }
  int64_t i64() {
    int64_t v;
    raw(&v, sizeof v);
    return v;
  }
  std::string str() {
    std::string s(u64(), '\0');
    raw(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> vec() {
    std::vector<T> v(u64());
    raw(v.data(), v.size() * sizeof(T));
    return v;
  }

 private:
  void raw(void* p, size_t n) {
    if (n > 0) std::memcpy(p, buf_.data() + pos_, n);  // an empty vector's data() may be null
    pos_ += n;
  }
  const std::string& buf_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------
// HDF5 helpers

H5Id vlen_string_type() {
  H5Id t(ZCHECK_H5(H5Tcopy(H5T_C_S1)), H5Tclose);
  ZCHECK_H5(H5Tset_size(t.get(), H5T_VARIABLE));
  ZCHECK_H5(H5Tset_cset(t.get(), H5T_CSET_UTF8));
  return t;
}

void write_attr_string(hid_t obj, const char* name, const std::string& value) {
  H5Id type = vlen_string_type();
  H5Id space(ZCHECK_H5(H5Screate(H5S_SCALAR)), H5Sclose);
  H5Id attr(ZCHECK_H5(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT)), H5Aclose);
  const char* p = value.c_str();
  ZCHECK_H5(H5Awrite(attr.get(), type.get(), &p));
}

template <class T>
void write_attr_scalar(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, T value) {
  H5Id space(ZCHECK_H5(H5Screate(H5S_SCALAR)), H5Sclose);
  H5Id attr(ZCHECK_H5(H5Acreate2(obj, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT)), H5Aclose);
  ZCHECK_H5(H5Awrite(attr.get(), mem_type, &value));
}
void write_attr_i64(hid_t obj, const char* name, int64_t v) {
  write_attr_scalar(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, v);
}
void write_attr_u64(hid_t obj, const char* name, uint64_t v) {
  write_attr_scalar(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, v);
}

// Attribute readers for possibly foreign files: nullopt when missing or of the wrong kind.
std::optional<std::string> read_attr_string(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return std::nullopt;
  H5Id ftype(H5Aget_type(attr.get()), H5Tclose);
  H5Id space(H5Aget_space(attr.get()), H5Sclose);
  if (!ftype.valid() || !space.valid() || H5Tget_class(ftype.get()) != H5T_STRING) return std::nullopt;
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return std::nullopt;
  const htri_t vl = H5Tis_variable_str(ftype.get());
  if (vl < 0) return std::nullopt;
  H5Id mtype(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!mtype.valid()) return std::nullopt;
  if (vl > 0) {
    if (H5Tset_size(mtype.get(), H5T_VARIABLE) < 0 || H5Tset_cset(mtype.get(), H5Tget_cset(ftype.get())) < 0)
      return std::nullopt;
    char* p = nullptr;
    if (H5Aread(attr.get(), mtype.get(), &p) < 0) return std::nullopt;
    std::string s = p ? p : "";
    if (p) H5free_memory(p);
    return s;
  }
  const size_t n = H5Tget_size(ftype.get());
  if (n == 0) return std::nullopt;
  std::string s(n, '\0');
  if (H5Tset_size(mtype.get(), n) < 0 || H5Tset_strpad(mtype.get(), H5T_STR_NULLPAD) < 0 ||
      H5Aread(attr.get(), mtype.get(), s.data()) < 0)
    return std::nullopt;
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <class T>
std::optional<T> read_attr_int(hid_t obj, const char* name, hid_t mem_type) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return std::nullopt;
  H5Id ftype(H5Aget_type(attr.get()), H5Tclose);
  H5Id space(H5Aget_space(attr.get()), H5Sclose);
  if (!ftype.valid() || !space.valid() || H5Tget_class(ftype.get()) != H5T_INTEGER) return std::nullopt;
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return std::nullopt;
  T v{};
  if (H5Aread(attr.get(), mem_type, &v) < 0) return std::nullopt;
  return v;
}

// Group creation properties: links tracked in creation order, so readers can
// list tensors and state in the order they were written.
H5Id ordered_gcpl() {
  H5Id p(ZCHECK_H5(H5Pcreate(H5P_GROUP_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_link_creation_order(p.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  return p;
}

H5Id create_group(hid_t parent, const std::string& name) {
  H5Id gcpl = ordered_gcpl();
  return H5Id(ZCHECK_H5(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT)), H5Gclose);
}

// Dataspace of a logical shape ({} = scalar).
H5Id make_space(const std::vector<int64_t>& shape) {
  if (shape.empty()) return H5Id(ZCHECK_H5(H5Screate(H5S_SCALAR)), H5Sclose);
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  return H5Id(ZCHECK_H5(H5Screate_simple(int(dims.size()), dims.data(), nullptr)), H5Sclose);
}

// Selects the flat range [begin, end) of `space` (a dataspace of `shape`).
void select_flat_range(hid_t space, const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  if (begin >= end) {
    ZCHECK_H5(H5Sselect_none(space));
    return;
  }
  if (shape.empty()) {
    ZCHECK_H5(H5Sselect_all(space));
    return;
  }
  const std::vector<Hyperslab> slabs = flat_range_hyperslabs(shape, begin, end);
  bool first = true;
  for (const Hyperslab& h : slabs) {
    std::vector<hsize_t> start(h.start.begin(), h.start.end()), count(h.count.begin(), h.count.end());
    ZCHECK_H5(H5Sselect_hyperslab(space, first ? H5S_SELECT_SET : H5S_SELECT_OR, start.data(), nullptr,
                                  count.data(), nullptr));
    first = false;
  }
}

// A 1-D memory space of n elements (n == 0: one element, none selected).
H5Id memory_space(int64_t n) {
  const hsize_t dim = hsize_t(std::max<int64_t>(n, 1));
  H5Id s(ZCHECK_H5(H5Screate_simple(1, &dim, nullptr)), H5Sclose);
  if (n == 0) ZCHECK_H5(H5Sselect_none(s.get()));
  return s;
}

std::string dtype_name(hid_t type) {
  const H5T_class_t c = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (c == H5T_FLOAT)
    return size == 4 ? "float32" : size == 8 ? "float64" : "float" + std::to_string(8 * size);
  if (c == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    return std::string(is_signed ? "int" : "uint") + std::to_string(8 * size);
  }
  if (c == H5T_STRING) return "string";
  return "other";
}

// MPI-IO hints from ZEROPP_CKPT_MPIIO_HINTS="key=value,key=value" (tuning experiments).
MPI_Info mpiio_hints() {
  MPI_Info info = MPI_INFO_NULL;
  const char* env = std::getenv("ZEROPP_CKPT_MPIIO_HINTS");
  if (!env || !*env) return info;
  ZCHECK_MPI(MPI_Info_create(&info));
  std::stringstream ss(env);
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    ZCHECK_MPI(MPI_Info_set(info, kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str()));
  }
  return info;
}

// File access for collective parallel I/O.
H5Id parallel_fapl(MPI_Comm comm) {
  H5Id fapl(ZCHECK_H5(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  MPI_Info info = mpiio_hints();
  ZCHECK_H5(H5Pset_fapl_mpio(fapl.get(), comm, info));
  if (info != MPI_INFO_NULL) ZCHECK_MPI(MPI_Info_free(&info));
  ZCHECK_H5(H5Pset_all_coll_metadata_ops(fapl.get(), true));
  ZCHECK_H5(H5Pset_coll_metadata_write(fapl.get(), true));
  ZCHECK_H5(H5Pset_alignment(fapl.get(), kAlignThreshold, kAlignment));
  // The 1.8 file format: creation-order indexes and attributes of any size.
  ZCHECK_H5(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST));
  return fapl;
}

H5Id transfer_plist() {
  H5Id dxpl(ZCHECK_H5(H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
  const char* env = std::getenv("ZEROPP_CKPT_XFER");
  const bool independent = env && std::string(env) == "independent";
  ZCHECK_H5(H5Pset_dxpl_mpio(dxpl.get(), independent ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE));
  return dxpl;
}

// ---------------------------------------------------------------------------
// Files and directories

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw Error(path + ": cannot open to flush: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw Error(path + ": fsync failed: " + std::strerror(err));
}

std::string join(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

std::string tmp_name(const std::string& name) { return "." + name + ".tmp"; }

// The step in "step_<digits>.h5", or -1.
int64_t step_of_name(const std::string& name) {
  const std::string pre = "step_", suf = ".h5";
  if (name.size() <= pre.size() + suf.size() || name.compare(0, pre.size(), pre) != 0 ||
      name.compare(name.size() - suf.size(), suf.size(), suf) != 0)
    return -1;
  const std::string digits = name.substr(pre.size(), name.size() - pre.size() - suf.size());
  if (digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

// Checkpoint files in dir, highest step first.
std::vector<std::pair<int64_t, std::string>> checkpoints_in(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), e; !ec && it != e; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    const int64_t s = step_of_name(n);
    if (s >= 0 && it->is_regular_file(ec)) found.emplace_back(s, n);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  });
  return found;
}

std::string read_latest(const std::string& dir) {
  std::ifstream in(join(dir, "latest"));
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

// Removes ".*.tmp" files left by interrupted saves, and "latest.tmp".
void remove_stale_temporaries(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), e; !ec && it != e; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    const bool ours =
        (n.size() > 8 && n[0] == '.' && n.compare(n.size() - 7, 7, ".h5.tmp") == 0) || n == "latest.tmp";
    if (ours) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

void write_latest(const std::string& dir, const std::string& name) {
  const std::string tmp = join(dir, "latest.tmp"), final_path = join(dir, "latest");
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw Error(tmp + ": cannot create: " + std::strerror(errno));
    const std::string text = name + "\n";
    const ssize_t n = ::write(fd, text.data(), text.size());
    const int err = errno;
    const int rc = n == ssize_t(text.size()) ? ::fsync(fd) : -1;
    ::close(fd);
    if (n != ssize_t(text.size()) || rc != 0) throw Error(tmp + ": cannot write: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0)
    throw Error(final_path + ": cannot rename " + tmp + " into place: " + std::strerror(errno));
  fsync_path(dir, true);
}

// Keeps the newest `keep` checkpoints by step, and always `protect`.
void apply_retention(const std::string& dir, int keep, const std::string& protect) {
  if (keep <= 0) return;
  const auto found = checkpoints_in(dir);
  for (size_t i = size_t(keep); i < found.size(); ++i) {
    if (found[i].second == protect) continue;
    std::error_code ec;
    fs::remove(join(dir, found[i].second), ec);
    if (ec)
      std::fprintf(stderr, "zeropp: warning: cannot remove old checkpoint %s: %s\n",
                   join(dir, found[i].second).c_str(), ec.message().c_str());
  }
}

// ---------------------------------------------------------------------------
// Validation of the caller's shards

bool valid_component(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos;
}

bool valid_group_path(const std::string& g) {
  if (g.empty()) return false;
  std::stringstream ss(g);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (!valid_component(part)) return false;
  return g.back() != '/' && g.rfind("state", 0) != 0;
}

std::optional<std::string> check_groups(const ShardGroups& groups, const std::string& what) {
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& [g, shards] = groups[gi];
    if (!valid_group_path(g)) return what + ": bad group name '" + g + "'";
    for (size_t gj = 0; gj < gi; ++gj) {
      const std::string& o = groups[gj].first;
      if (o == g || o.rfind(g + "/", 0) == 0 || g.rfind(o + "/", 0) == 0)
        return what + ": group '" + g + "' clashes with group '" + o + "'";
    }
    std::vector<std::string> names;
    for (const TensorShard& s : shards) {
      if (!valid_component(s.name)) return what + ": bad tensor name '" + s.name + "' in group '" + g + "'";
      names.push_back(s.name);
      for (int64_t d : s.shape)
        if (d < 0)
          return what + ": /" + g + "/" + s.name + ": negative dimension in shape " + shape_str(s.shape);
      const int64_t n = numel_of(s.shape);
      if (s.begin < 0 || s.end < s.begin || s.end > n)
        return what + ": /" + g + "/" + s.name + ": range [" + std::to_string(s.begin) + ", " +
               std::to_string(s.end) + ") outside its " + std::to_string(n) + " elements";
      if (s.end > s.begin && !s.data) return what + ": /" + g + "/" + s.name + ": no data pointer";
    }
    std::sort(names.begin(), names.end());
    const auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) return what + ": tensor '" + *dup + "' twice in group '" + g + "'";
  }
  return std::nullopt;
}

// Every rank must pass the same groups, names and shapes (collective).
void check_same_on_all_ranks(MPI_Comm comm, const ShardGroups& groups, const std::string& what) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& [g, shards] : groups) {
    h = fnv1a(h, g.data(), g.size() + 1);
    for (const TensorShard& s : shards) {
      h = fnv1a(h, s.name.data(), s.name.size() + 1);
      const uint64_t rank = s.shape.size();
      h = fnv1a(h, &rank, sizeof rank);
      h = fnv1a(h, s.shape.data(), s.shape.size() * sizeof(int64_t));
    }
  }
  uint64_t lo = 0, hi = 0;
  ZCHECK_MPI(MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm));
  ZCHECK_MPI(MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm));
  if (lo != hi) throw Error(what + ": ranks passed different tensor lists (names, shapes or order)");
}

// For each shard in order: whether the ranges of all ranks tile [0, numel) exactly.
std::vector<bool> ranges_tile(MPI_Comm comm, const ShardGroups& groups) {
  const int p = comm_size(comm);
  std::vector<int64_t> mine;
  for (const auto& gs : groups)
    for (const TensorShard& s : gs.second) {
      mine.push_back(s.begin);
      mine.push_back(s.end);
    }
  const size_t n = mine.size();
  std::vector<int64_t> all(n * size_t(p));
  ZCHECK_MPI(MPI_Allgather(mine.data(), int(n), MPI_INT64_T, all.data(), int(n), MPI_INT64_T, comm));
  std::vector<bool> tiles;
  size_t k = 0;
  std::vector<std::pair<int64_t, int64_t>> iv;
  for (const auto& gs : groups)
    for (const TensorShard& s : gs.second) {
      iv.clear();
      for (int r = 0; r < p; ++r) {
        const int64_t b = all[size_t(r) * n + 2 * k], e = all[size_t(r) * n + 2 * k + 1];
        if (e > b) iv.emplace_back(b, e);
      }
      std::sort(iv.begin(), iv.end());
      int64_t pos = 0;
      bool ok = true;
      for (const auto& [b, e] : iv) {
        if (b != pos) ok = false;
        pos = e;
      }
      tiles.push_back(ok && pos == numel_of(s.shape));
      ++k;
    }
  return tiles;
}

// ---------------------------------------------------------------------------
// Scanning a file (one process): metadata, datasets, optionally checksums

struct ScannedDataset {
  DatasetReport report;
  bool has_checksum = false;
};

struct Scan {
  CheckpointMeta meta;
  int format_version = 0;
  std::vector<ScannedDataset> datasets;
  int64_t bytes = 0;
};

struct VisitState {
  std::vector<std::string> names;
};

herr_t collect_link(hid_t, const char* name, const H5L_info_t* info, void* op) {
  if (info->type == H5L_TYPE_HARD) static_cast<VisitState*>(op)->names.push_back(name);
  return 0;
}

// Links under `obj` recursively, in creation order where tracked.
std::vector<std::string> visit_links(hid_t obj) {
  VisitState st;
  if (H5Lvisit(obj, H5_INDEX_CRT_ORDER, H5_ITER_INC, collect_link, &st) < 0) {
    st.names.clear();
    if (H5Lvisit(obj, H5_INDEX_NAME, H5_ITER_INC, collect_link, &st) < 0) return {};
  }
  return st.names;
}

// The checksum of a whole dataset read in chunks, or nullopt if it cannot be read.
std::optional<uint64_t> checksum_dataset(hid_t dset, const std::vector<int64_t>& shape,
                                         const std::string& dtype) {
  const int64_t n = numel_of(shape);
  H5Id fspace(H5Dget_space(dset), H5Sclose);
  if (!fspace.valid()) return std::nullopt;
  uint64_t sum = 0;
  const bool f32 = dtype == "float32";
  const hid_t mtype = f32 ? H5T_NATIVE_FLOAT : dtype == "float64" ? H5T_NATIVE_DOUBLE : H5T_NATIVE_UINT64;
  const size_t esize = f32 ? 4 : 8;
  std::vector<char> buf(size_t(std::min(n, kInspectChunk)) * esize);
  for (int64_t b = 0; b < n; b += kInspectChunk) {
    const int64_t e = std::min(n, b + kInspectChunk);
    if (shape.empty()) {
      if (H5Sselect_all(fspace.get()) < 0) return std::nullopt;
    } else {
      bool first = true;
      for (const Hyperslab& h : flat_range_hyperslabs(shape, b, e)) {
        std::vector<hsize_t> st(h.start.begin(), h.start.end()), ct(h.count.begin(), h.count.end());
        if (H5Sselect_hyperslab(fspace.get(), first ? H5S_SELECT_SET : H5S_SELECT_OR, st.data(), nullptr,
                                ct.data(), nullptr) < 0)
          return std::nullopt;
        first = false;
      }
    }
    const hsize_t cnt = hsize_t(e - b);
    H5Id mspace(H5Screate_simple(1, &cnt, nullptr), H5Sclose);
    if (!mspace.valid() || H5Dread(dset, mtype, mspace.get(), fspace.get(), H5P_DEFAULT, buf.data()) < 0)
      return std::nullopt;
    if (f32) {
      sum += checksum_part(reinterpret_cast<const float*>(buf.data()), b, e - b);
    } else {
      for (int64_t i = 0; i < e - b; ++i) {
        uint64_t bits;
        std::memcpy(&bits, buf.data() + size_t(i) * 8, 8);
        sum += checksum_element(uint64_t(b + i), bits);
      }
    }
  }
  return sum;
}

// Opens and checks `path` on this process alone (sec2 driver). Throws Error for
// anything that makes it unusable as a checkpoint; per-dataset problems are
// recorded. With `checksum_all`, every dataset is read and its checksum
// recomputed; otherwise only the small /state datasets are.
Scan scan_file(const std::string& path, bool checksum_all) {
  const std::string where = "checkpoint " + path;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(where + ": no such file");
  if (!fs::is_regular_file(path, ec)) throw Error(where + ": not a regular file");
  Scan scan;
  scan.bytes = int64_t(fs::file_size(path, ec));
  if (H5Fis_hdf5(path.c_str()) <= 0) throw Error(where + ": not an HDF5 file");
  H5Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw Error(where + ": HDF5 cannot open it (truncated or corrupted file)");
  const hid_t f = file.get();

  const auto format = read_attr_string(f, "format");
  if (!format || *format != kCheckpointFormatName)
    throw Error(where + ": not a zeropp checkpoint (root attribute 'format' is not '" +
                kCheckpointFormatName + "')");
  const auto version = read_attr_int<int64_t>(f, "format_version", H5T_NATIVE_INT64);
  if (!version) throw Error(where + ": root attribute 'format_version' missing or unreadable");
  scan.format_version = int(*version);
  if (*version != kCheckpointFormatVersion)
    throw Error(where + ": format version " + std::to_string(*version) + ", this build reads version " +
                std::to_string(kCheckpointFormatVersion));

  CheckpointMeta& m = scan.meta;
  auto need_str = [&](hid_t obj, const char* name, const char* at) {
    auto v = read_attr_string(obj, name);
    if (!v) throw Error(where + ": attribute '" + name + "' of " + at + " missing or unreadable");
    return *v;
  };
  auto need_i64 = [&](hid_t obj, const char* name, const char* at) {
    auto v = read_attr_int<int64_t>(obj, name, H5T_NATIVE_INT64);
    if (!v) throw Error(where + ": attribute '" + name + "' of " + at + " missing or unreadable");
    return *v;
  };
  m.deck_toml = need_str(f, "deck_toml", "/");
  m.zero_toml = need_str(f, "zero_toml", "/");
  m.code_version = need_str(f, "code_version", "/");
  m.world_size = int(need_i64(f, "world_size", "/"));
  m.ranks_per_node = int(need_i64(f, "ranks_per_node", "/"));
  m.nodes = int(need_i64(f, "nodes", "/"));

  if (H5Lexists(f, "state", H5P_DEFAULT) <= 0) throw Error(where + ": group /state missing");
  H5Id state(H5Gopen2(f, "state", H5P_DEFAULT), H5Gclose);
  if (!state.valid()) throw Error(where + ": group /state unreadable");
  m.step = need_i64(state.get(), "step", "/state");
  m.tokens_seen = need_i64(state.get(), "tokens_seen", "/state");
  const auto seed = read_attr_int<uint64_t>(state.get(), "seed", H5T_NATIVE_UINT64);
  if (!seed) throw Error(where + ": attribute 'seed' of /state missing or unreadable");
  m.seed = *seed;

  const std::vector<std::string> links = visit_links(f);
  for (const std::string& name : links) {
    H5Id obj(H5Oopen(f, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj.valid()) throw Error(where + ": object /" + name + " unreadable");
    if (H5Iget_type(obj.get()) != H5I_DATASET) continue;
    const hid_t d = obj.get();
    ScannedDataset sd;
    DatasetReport& r = sd.report;
    r.path = "/" + name;
    H5Id type(H5Dget_type(d), H5Tclose);
    H5Id space(H5Dget_space(d), H5Sclose);
    if (!type.valid() || !space.valid()) throw Error(where + ": dataset " + r.path + " unreadable");
    r.dtype = dtype_name(type.get());
    const int nd = H5Sget_simple_extent_ndims(space.get());
    if (nd < 0) throw Error(where + ": dataset " + r.path + " has an unreadable shape");
    std::vector<hsize_t> dims(static_cast<size_t>(nd));
    if (nd > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
      throw Error(where + ": dataset " + r.path + " has an unreadable shape");
    r.shape.assign(dims.begin(), dims.end());
    const auto stored = read_attr_int<uint64_t>(d, "checksum", H5T_NATIVE_UINT64);
    sd.has_checksum = stored.has_value();
    r.stored_checksum = stored.value_or(0);
    const bool is_state = name.rfind("state/", 0) == 0;
    const bool is_scalars = name.rfind("state/scalars/", 0) == 0,
               is_words = name.rfind("state/words/", 0) == 0;
    std::string expected = "float32";
    if (is_scalars) expected = "float64";
    if (is_words) expected = "uint64";
    if (is_state && !is_scalars && !is_words) {
      continue;  // not ours: ignored
    }
    if (r.dtype != expected) {
      r.problem = "dtype " + r.dtype + ", expected " + expected;
    } else if (!sd.has_checksum) {
      r.problem = "no 'checksum' attribute";
    } else if (checksum_all || is_state) {
      const auto sum = checksum_dataset(d, r.shape, r.dtype);
      if (!sum) {
        r.problem = "data unreadable";
      } else {
        r.computed_checksum = *sum;
        r.checksum_ok = *sum == r.stored_checksum;
        if (!r.checksum_ok)
          r.problem =
              "checksum mismatch (stored " + hex64(r.stored_checksum) + ", computed " + hex64(*sum) + ")";
      }
    }
    if (is_state) {
      if (!r.problem.empty()) throw Error(where + ": dataset " + r.path + ": " + r.problem);
      if (r.shape.size() != 1) throw Error(where + ": dataset " + r.path + ": expected a 1-D dataset");
      const std::string key = name.substr(is_scalars ? 14 : 12);
      const size_t n = size_t(r.shape[0]);
      if (is_scalars) {
        std::vector<double> v(n);
        if (n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
          throw Error(where + ": dataset " + r.path + " unreadable");
        m.scalars.emplace_back(key, std::move(v));
      } else {
        std::vector<uint64_t> v(n);
        if (n && H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
          throw Error(where + ": dataset " + r.path + " unreadable");
        m.words.emplace_back(key, std::move(v));
      }
    }
    scan.datasets.push_back(std::move(sd));
  }
  file.close_checked("H5Fclose(checkpoint)", __FILE__, __LINE__);
  return scan;
}

std::string pack_scan(const Scan& s) {
  Packer p;
  const CheckpointMeta& m = s.meta;
  p.i64(m.step);
  p.i64(m.tokens_seen);
  p.u64(m.seed);
  p.str(m.deck_toml);
  p.str(m.zero_toml);
  p.str(m.code_version);
  p.i64(m.world_size);
  p.i64(m.ranks_per_node);
  p.i64(m.nodes);
  p.u64(m.scalars.size());
  for (const auto& [k, v] : m.scalars) {
    p.str(k);
    p.f64s(v);
  }
  p.u64(m.words.size());
  for (const auto& [k, v] : m.words) {
    p.str(k);
    p.u64s(v);
  }
  p.i64(s.format_version);
  p.i64(s.bytes);
  p.u64(s.datasets.size());
  for (const ScannedDataset& d : s.datasets) {
    p.str(d.report.path);
    p.i64s(d.report.shape);
    p.str(d.report.dtype);
    p.u64(d.report.stored_checksum);
    p.str(d.report.problem);
    p.u64(d.has_checksum);
  }
  return std::move(p.bytes());
}

Scan unpack_scan(const std::string& b) {
  Unpacker u(b);
  Scan s;
  CheckpointMeta& m = s.meta;
  m.step = u.i64();
  m.tokens_seen = u.i64();
  m.seed = u.u64();
  m.deck_toml = u.str();
  m.zero_toml = u.str();
  m.code_version = u.str();
  m.world_size = int(u.i64());
  m.ranks_per_node = int(u.i64());
  m.nodes = int(u.i64());
  for (uint64_t i = 0, n = u.u64(); i < n; ++i) {
    std::string k = u.str();
    m.scalars.emplace_back(std::move(k), u.vec<double>());
  }
  for (uint64_t i = 0, n = u.u64(); i < n; ++i) {
    std::string k = u.str();
    m.words.emplace_back(std::move(k), u.vec<uint64_t>());
  }
  s.format_version = int(u.i64());
  s.bytes = u.i64();
  for (uint64_t i = 0, n = u.u64(); i < n; ++i) {
    ScannedDataset d;
    d.report.path = u.str();
    d.report.shape = u.vec<int64_t>();
    d.report.dtype = u.str();
    d.report.stored_checksum = u.u64();
    d.report.problem = u.str();
    d.has_checksum = u.u64() != 0;
    s.datasets.push_back(std::move(d));
  }
  return s;
}

// Broadcasts a string from rank 0.
void bcast_string(MPI_Comm comm, std::string& s) {
  uint64_t n = s.size();
  ZCHECK_MPI(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm));
  s.resize(size_t(n));
  size_t off = 0;
  while (off < n) {  // in pieces below INT_MAX
    const int len = int(std::min<uint64_t>(n - off, uint64_t(1) << 30));
    ZCHECK_MPI(MPI_Bcast(s.data() + off, len, MPI_CHAR, 0, comm));
    off += size_t(len);
  }
}

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

// ---------------------------------------------------------------------------
// Public: checksums, hyperslabs, names, faults

uint64_t checksum_element(uint64_t flat_index, uint64_t bits) {
  uint64_t x = (flat_index * 0x9E3779B97F4A7C15ULL) ^ bits;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

uint64_t checksum_part(const float* data, int64_t first, int64_t n) {
  uint64_t s0 = 0, s1 = 0;
  int64_t i = 0;
  for (; i + 1 < n; i += 2) {
    uint32_t b0, b1;
    std::memcpy(&b0, data + i, 4);
    std::memcpy(&b1, data + i + 1, 4);
    s0 += checksum_element(uint64_t(first + i), b0);
    s1 += checksum_element(uint64_t(first + i + 1), b1);
  }
  if (i < n) {
    uint32_t b;
    std::memcpy(&b, data + i, 4);
    s0 += checksum_element(uint64_t(first + i), b);
  }
  return s0 + s1;
}

std::vector<Hyperslab> flat_range_hyperslabs(const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  std::vector<Hyperslab> out;
  const size_t nd = shape.size();
  if (begin >= end) return out;
  if (nd == 0) {
    out.push_back({});
    return out;
  }
  // stride[k]: elements in one step of dimension k.
  std::vector<int64_t> stride(nd, 1);
  for (size_t k = nd - 1; k > 0; --k) stride[k - 1] = stride[k] * shape[k];
  int64_t pos = begin;
  while (pos < end) {
    std::vector<int64_t> coord(nd);
    for (size_t k = 0; k < nd; ++k) coord[k] = (pos / stride[k]) % shape[k];
    // The outermost dimension j at which pos is aligned (all inner coordinates
    // zero) and at least one whole step of j fits before `end`.
    for (size_t j = 0; j < nd; ++j) {
      bool aligned = true;
      for (size_t k = j + 1; k < nd; ++k) aligned = aligned && coord[k] == 0;
      if (!aligned) continue;
      const int64_t c = std::min(shape[j] - coord[j], (end - pos) / stride[j]);
      if (c < 1) continue;
      Hyperslab h;
      h.start = coord;
      h.count.assign(nd, 1);
      h.count[j] = c;
      for (size_t k = j + 1; k < nd; ++k) h.count[k] = shape[k];
      out.push_back(std::move(h));
      pos += c * stride[j];
      break;
    }
  }
  return out;
}

std::string checkpoint_name(int64_t step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "step_%08lld.h5", static_cast<long long>(step));
  return buf;
}

void set_checkpoint_fault(int rank, int after_datasets) {
  g_fault = {rank, CheckpointFault::kAfterDatasets, after_datasets};
}
void set_checkpoint_fault(int rank, CheckpointFault where) { g_fault = {rank, where, 0}; }
void clear_checkpoint_fault() { g_fault = {}; }

// ---------------------------------------------------------------------------
// Writing

void write_checkpoint(MPI_Comm comm, const std::string& dir, const std::string& name,
                      const ShardGroups& groups, const CheckpointMeta& meta, int keep) {
  QuietHdf5 quiet;
  const int rank = comm_rank(comm);
  PhaseTimer timer("checkpoint write", rank);
  const std::string final_path = join(dir, name), tmp_path = join(dir, tmp_name(name));
  const std::string what = "checkpoint " + final_path;

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
      remove_stale_temporaries(dir);  // first: they may hold the space needed
      if (const auto full = disk_space_problem(dir, checkpoint_bytes_estimate(groups)))
        err = what + ": " + *full;
    }
  }
  agree_on_error(comm, err);
  timer.mark("checks");

  // 4. Checksums: each rank over its part, on a helper thread (no MPI, no
  //    HDF5) while this one writes the data and waits for the disk; summed
  //    over the ranks and written as attributes afterwards.
  size_t n_tensors = 0;
  for (const auto& gs : groups) n_tensors += gs.second.size();
  std::vector<uint64_t> sums(n_tensors, 0);
  JoiningThread summer([&] {
    size_t i = 0;
    for (const auto& gs : groups)
      for (const TensorShard& s : gs.second) sums[i++] = checksum_part(s.data, s.begin, s.end - s.begin);
  });

  // 5. The file, collectively.
  H5Id fapl = parallel_fapl(comm);
  H5Id fcpl(ZCHECK_H5(H5Pcreate(H5P_FILE_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_link_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  H5Id file(ZCHECK_H5(H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get())), H5Fclose);
  const hid_t f = file.get();
  H5Id dxpl = transfer_plist();

  write_attr_string(f, "format", kCheckpointFormatName);
  write_attr_i64(f, "format_version", kCheckpointFormatVersion);
  write_attr_string(f, "deck_toml", meta.deck_toml);
  write_attr_string(f, "zero_toml", meta.zero_toml);
  write_attr_string(f, "code_version", meta.code_version);
  write_attr_i64(f, "world_size", meta.world_size);
  write_attr_i64(f, "ranks_per_node", meta.ranks_per_node);
  write_attr_i64(f, "nodes", meta.nodes);
  write_attr_string(f, "checksum_algorithm", kCheckpointChecksumAlgorithm);

  {
    H5Id state = create_group(f, "state");
    write_attr_i64(state.get(), "step", meta.step);
    write_attr_i64(state.get(), "tokens_seen", meta.tokens_seen);
    write_attr_u64(state.get(), "seed", meta.seed);
    H5Id scalars = create_group(state.get(), "scalars");
    for (const auto& [k, v] : meta.scalars) {
      std::vector<uint64_t> bits(v.size());
      if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * 8);  // null data(): undefined even for 0
      write_state_dataset(scalars.get(), k, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data(), int64_t(v.size()),
                          bits, dxpl.get(), rank);
    }
    H5Id words = create_group(state.get(), "words");
    for (const auto& [k, v] : meta.words)
      write_state_dataset(words.get(), k, H5T_STD_U64LE, H5T_NATIVE_UINT64, v.data(), int64_t(v.size()), v,
                          dxpl.get(), rank);
  }

  H5Id dcpl(ZCHECK_H5(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS));
  ZCHECK_H5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
  ZCHECK_H5(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY));
  int written = 0;
  maybe_fault(rank, CheckpointFault::kAfterDatasets, written);
  std::vector<H5Id> datasets;
  for (const auto& [g, shards] : groups) {
    // Create the group path one level at a time (each with creation order tracked).
    H5Id group;
    {
      std::stringstream ss(g);
      std::string part, sofar;
      hid_t parent = f;
      while (std::getline(ss, part, '/')) {
        sofar += (sofar.empty() ? "" : "/") + part;
        const htri_t exists = ZCHECK_H5(H5Lexists(f, sofar.c_str(), H5P_DEFAULT));
        group = exists ? H5Id(ZCHECK_H5(H5Gopen2(f, sofar.c_str(), H5P_DEFAULT)), H5Gclose)
                       : create_group(parent, part);
        parent = group.get();
      }
    }
    for (const TensorShard& s : shards) {
      H5Id fspace = make_space(s.shape);
      H5Id d(ZCHECK_H5(H5Dcreate2(group.get(), s.name.c_str(), H5T_IEEE_F32LE, fspace.get(), H5P_DEFAULT,
                                  dcpl.get(), H5P_DEFAULT)),
             H5Dclose);
      if (numel_of(s.shape) > 0) {
        const int64_t n = s.end - s.begin;
        select_flat_range(fspace.get(), s.shape, s.begin, s.end);
        H5Id mspace = memory_space(n);
        static const float dummy = 0;
        ZCHECK_H5(
            H5Dwrite(d.get(), H5T_NATIVE_FLOAT, mspace.get(), fspace.get(), dxpl.get(), n ? s.data : &dummy));
      }
      datasets.push_back(std::move(d));
      maybe_fault(rank, CheckpointFault::kAfterDatasets, ++written);
    }
  }
  timer.mark("datasets");
  // Every rank's data to stable storage (MPI_File_sync on every rank).
  ZCHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
  timer.mark("flush");
  summer.join();
  ZCHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums.data(), int(sums.size()), MPI_UINT64_T, MPI_SUM, comm));
  timer.mark("checksums");
  for (size_t k = 0; k < datasets.size(); ++k) {
    write_attr_u64(datasets[k].get(), "checksum", sums[k]);
    write_attr_string(datasets[k].get(), "checksum_algorithm", kCheckpointChecksumAlgorithm);
    datasets[k].close_checked("H5Dclose(tensor)", __FILE__, __LINE__);
  }
  // The attributes too, then the last metadata at close (fsynced by rank 0 below).
  ZCHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
  file.close_checked("H5Fclose(checkpoint)", __FILE__, __LINE__);
  timer.mark("attributes+close");
  maybe_fault(rank, CheckpointFault::kBeforeRename);

  // 6. Commit on rank 0: fsync, rename, fsync the directory, `latest`, retention.
  //    A failure before the rename removes the temporary file.
  if (rank == 0) {
    try {
      fsync_path(tmp_path, false);
    } catch (const Error& e) {
      err = e.what();
    }
  }
  try {
    agree_on_error(comm, err);
  } catch (const Error&) {
    if (rank == 0) ::unlink(tmp_path.c_str());
    throw;
  }
  timer.mark("fsync");
  if (rank == 0) {
    try {
      if (std::rename(tmp_path.c_str(), final_path.c_str()) != 0)
        throw Error(final_path + ": cannot rename " + tmp_path + " into place: " + std::strerror(errno));
      fsync_path(dir, true);
      timer.mark("rename");
      maybe_fault(rank, CheckpointFault::kBeforeLatest);
      write_latest(dir, name);
      timer.mark("latest");
      maybe_fault(rank, CheckpointFault::kBeforeRetention);
      apply_retention(dir, keep, name);
      timer.mark("retention");
    } catch (const Error& e) {
      err = e.what();
    }
  }
  agree_on_error(comm, err);
}

// ---------------------------------------------------------------------------
// Reading

CheckpointMeta read_checkpoint(MPI_Comm comm, const std::string& path, const ShardGroups& groups) {
  QuietHdf5 quiet;
  const int rank = comm_rank(comm), size = comm_size(comm);
  PhaseTimer timer("checkpoint read", rank);
  const std::string where = "checkpoint " + path;
  agree_on_error(comm, check_groups(groups, where));
  check_same_on_all_ranks(comm, groups, where);

  // 1. Rank 0 checks the file alone (no collective HDF5 call sees a bad file)
  //    and broadcasts what it found.
  std::optional<std::string> err;
  std::string packed;
  if (rank == 0) {
    try {
      packed = pack_scan(scan_file(path, false));
    } catch (const Error& e) {
      err = e.what();
    }
  }
  agree_on_error(comm, err);
  bcast_string(comm, packed);
  const Scan scan = unpack_scan(packed);
  timer.mark("scan");

  // 2. Every expected dataset, with its shape, dtype and a checksum attribute.
  std::unordered_map<std::string, const ScannedDataset*> by_path;
  for (const ScannedDataset& d : scan.datasets) by_path[d.report.path] = &d;
  std::vector<uint64_t> stored;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) {
      const std::string p = "/" + g + "/" + s.name;
      const auto found = by_path.find(p);
      if (found == by_path.end()) throw Error(where + ": dataset " + p + " missing");
      const ScannedDataset* it = found->second;
      if (it->report.shape != s.shape)
        throw Error(where + ": dataset " + p + ": expected shape " + shape_str(s.shape) + ", found " +
                    shape_str(it->report.shape));
      if (!it->report.problem.empty()) throw Error(where + ": dataset " + p + ": " + it->report.problem);
      stored.push_back(it->report.stored_checksum);
    }
  const std::vector<bool> tiles = ranges_tile(comm, groups);

  // 3. Collective reads of every rank's ranges; checksums over the data read
  //    where the ranges tile the tensor, else over an even partition read again.
  H5Id fapl = parallel_fapl(comm);
  H5Id file(ZCHECK_H5(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get())), H5Fclose);
  H5Id dxpl = transfer_plist();
  std::vector<uint64_t> sums(stored.size(), 0);
  ChecksumWorker summer(sums);
  size_t k = 0;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) {
      const std::string p = "/" + g + "/" + s.name;
      H5Id d(ZCHECK_H5(H5Dopen2(file.get(), p.c_str(), H5P_DEFAULT)), H5Dclose);
      H5Id fspace(ZCHECK_H5(H5Dget_space(d.get())), H5Sclose);
      const int64_t numel = numel_of(s.shape);
      auto read_range = [&](int64_t b, int64_t e, float* dst) {
        if (numel == 0) return;
        select_flat_range(fspace.get(), s.shape, b, e);
        H5Id mspace = memory_space(e - b);
        static float dummy;
        ZCHECK_H5(
            H5Dread(d.get(), H5T_NATIVE_FLOAT, mspace.get(), fspace.get(), dxpl.get(), e > b ? dst : &dummy));
      };
      read_range(s.begin, s.end, s.data);
      if (tiles[k]) {
        summer.add(k, s.data, s.begin, s.end - s.begin, {});
      } else {
        const int64_t b = numel * rank / size, e = numel * (rank + 1) / size;
        std::vector<float> part(static_cast<size_t>(e - b));
        read_range(b, e, part.data());
        summer.add(k, nullptr, b, e - b, std::move(part));
      }
      ++k;
    }
  file.close_checked("H5Fclose(checkpoint)", __FILE__, __LINE__);
  timer.mark("datasets");
  summer.finish();
  timer.mark("checksums");
  ZCHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums.data(), int(sums.size()), MPI_UINT64_T, MPI_SUM, comm));
  k = 0;
  for (const auto& [g, shards] : groups)
    for (const TensorShard& s : shards) {
      if (sums[k] != stored[k])
        throw Error(where + ": dataset /" + g + "/" + s.name + ": checksum mismatch (stored " +
                    hex64(stored[k]) + ", computed " + hex64(sums[k]) + "): the file is corrupted");
      ++k;
    }
  return scan.meta;
}

// ---------------------------------------------------------------------------
// Resolving and inspecting

std::string resolve_checkpoint(const std::string& spec, const std::string& dir) {
  std::error_code ec;
  std::string d;
  if (spec == "auto") {
    d = dir;
  } else if (fs::is_directory(spec, ec)) {
    d = spec;
  } else {
    if (!fs::exists(spec, ec)) throw Error("checkpoint " + spec + ": no such file");
    return spec;
  }
  const auto found = checkpoint_candidates(d);
  return found.empty() ? "" : found.front();
}

std::vector<std::string> checkpoint_candidates(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return {};
  std::vector<std::string> out;
  const std::string latest = read_latest(dir);
  if (!latest.empty() && latest.find('/') == std::string::npos && fs::is_regular_file(join(dir, latest), ec))
    out.push_back(join(dir, latest));
  for (const auto& f : checkpoints_in(dir))
    if (f.second != latest) out.push_back(join(dir, f.second));
  return out;
}

CheckpointReport inspect_checkpoint(const std::string& path) {
  QuietHdf5 quiet;
  Scan scan = scan_file(path, true);
  CheckpointReport r;
  r.meta = std::move(scan.meta);
  r.format_version = scan.format_version;
  r.bytes = scan.bytes;
  r.ok = true;
  for (ScannedDataset& d : scan.datasets) {
    r.ok = r.ok && d.report.checksum_ok;
    r.datasets.push_back(std::move(d.report));
  }
  return r;
}

}  // namespace zeropp
