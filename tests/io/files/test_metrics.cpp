// metrics.h5: round trip of every dataset (min/median/max over ranks exact),
// readability between appends (also while a reader holds a lock), resume
// truncation, recovery from a half-written flush, and errors on every rank.
#include <fcntl.h>
#include <hdf5.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "io/files/metrics.hpp"
#include "io/io_test_support.hpp"
#include "src/base/errors.hpp"

using namespace zeropp;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

using zeropp::test::error_of;

namespace {

int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

// A fresh directory that rank 0 creates and every rank knows; rank 0
// removes it when the test case ends.
struct SharedDir {
  fs::path path;
  SharedDir() {
    char name[512] = {};
    if (rank_of() == 0) {
      std::string tmpl = (fs::temp_directory_path() / "zeropp-metrics-XXXXXX").string();
      if (::mkdtemp(tmpl.data()) != nullptr) std::snprintf(name, sizeof name, "%s", tmpl.c_str());
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    path = name;
    REQUIRE(!path.empty());
  }
  ~SharedDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ec;
    if (rank_of() == 0) fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
  std::string file() const { return (path / MetricsWriter::kFileName).string(); }
};

// A record with values that differ between ranks and steps; every rank can
// compute any rank's record, so the expected statistics are known everywhere.
StepRecord make_record(int r, int64_t s, double loss_offset = 0) {
  StepRecord x;
  x.step = s;
  x.loss = 10.0 - 0.5 * double(s) + loss_offset;
  x.lr = 1e-3 * double(s);
  x.grad_norm = 1.0 + 0.25 * double(s);
  const double wobble = 1.5 * double((3 * r + int(s)) % 5) + 0.125 * r;
  x.tokens_per_s = 1000.0 + 10.0 * double(s) + wobble;
  x.time_step_s = 0.5 + 0.01 * wobble;
  x.time_compute_s = 0.3 + 0.003 * wobble;
  for (int k = 0; k < kMetricKinds; ++k) {
    x.time_collective_s[size_t(k)] = 0.01 * k + 0.001 * wobble * (k + 1);
    x.bytes[size_t(k)].intra = 1000 * (k + 1) + 17 * ((r + 2 * int(s) + k) % 7);
    x.bytes[size_t(k)].inter = k == 2 ? 0 : 100 * (k + 1) * (r + 1) + int64_t(s);
  }
  x.time_wait_s = 0.02 + 0.002 * wobble;
  x.comm_hidden_fraction = 0.5 + 0.01 * wobble;
  return x;
}

// Per-rank fields as the writer names them, and how to read them off a record.
struct Field {
  std::string name;
  std::function<double(const StepRecord&)> get;
  bool sum;
};

std::vector<Field> fields() {
  std::vector<Field> f = {
      {"tokens_per_s", [](const StepRecord& x) { return x.tokens_per_s; }, false},
      {"time_s.step", [](const StepRecord& x) { return x.time_step_s; }, false},
      {"time_s.compute", [](const StepRecord& x) { return x.time_compute_s; }, false},
      {"time_s.wait", [](const StepRecord& x) { return x.time_wait_s; }, false},
      {"time_s.comm",
       [](const StepRecord& x) {
         double c = x.time_wait_s;  // the writer's order of summation
         for (double t : x.time_collective_s) c += t;
         return c;
       },
       false},
      {"comm_hidden_fraction", [](const StepRecord& x) { return x.comm_hidden_fraction; }, false}};
  for (int k = 0; k < kMetricKinds; ++k) {
    const std::string kind = kMetricKindNames[size_t(k)];
    f.push_back(
        {"time_s." + kind, [k](const StepRecord& x) { return x.time_collective_s[size_t(k)]; }, false});
    f.push_back({"bytes." + kind + ".intra",
                 [k](const StepRecord& x) { return double(x.bytes[size_t(k)].intra); }, true});
    f.push_back({"bytes." + kind + ".inter",
                 [k](const StepRecord& x) { return double(x.bytes[size_t(k)].inter); }, true});
  }
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// --- Reading back with the HDF5 C API (rank 0) ------------------------------

struct File {
  hid_t id;
  explicit File(const std::string& path) : id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {
    REQUIRE(id >= 0);
  }
  ~File() { H5Fclose(id); }
};

// Every row of /steps (or another table), read once in the file's (native)
// compound type; col() picks one member by name.
struct Rows {
  hsize_t n = 0;
  size_t row_bytes = 0;
  std::vector<char> data;
  hid_t type = -1;
  explicit Rows(const File& f, const char* table = "/steps") {
    const hid_t d = H5Dopen2(f.id, table, H5P_DEFAULT);
    REQUIRE(d >= 0);
    const hid_t space = H5Dget_space(d), ftype = H5Dget_type(d);
    REQUIRE(H5Sget_simple_extent_ndims(space) == 1);
    H5Sget_simple_extent_dims(space, &n, nullptr);
    type = H5Tget_native_type(ftype, H5T_DIR_DEFAULT);
    row_bytes = H5Tget_size(type);
    data.resize(n * row_bytes);
    if (n) CHECK(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
    H5Tclose(ftype);
    H5Sclose(space);
    H5Dclose(d);
  }
  ~Rows() { H5Tclose(type); }
  template <class T>
  std::vector<T> col(const std::string& name) const {
    const int i = H5Tget_member_index(type, name.c_str());
    INFO("member " << name);
    REQUIRE(i >= 0);
    const hid_t mt = H5Tget_member_type(type, unsigned(i));
    CHECK(H5Tequal(mt, std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64) > 0);
    H5Tclose(mt);
    const size_t off = H5Tget_member_offset(type, unsigned(i));
    std::vector<T> v(n);
    for (size_t r = 0; r < n; ++r) std::memcpy(&v[r], data.data() + r * row_bytes + off, sizeof(T));
    return v;
  }
};

std::string string_attr(const File& f, const char* name) {
  const hid_t a = H5Aopen(f.id, name, H5P_DEFAULT);
  REQUIRE(a >= 0);
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  char* p = nullptr;
  CHECK(H5Aread(a, t, &p) >= 0);
  std::string s = p ? p : "";
  H5free_memory(p);
  H5Tclose(t);
  H5Aclose(a);
  return s;
}

int64_t int_attr(const File& f, const char* name) {
  const hid_t a = H5Aopen(f.id, name, H5P_DEFAULT);
  REQUIRE(a >= 0);
  int64_t v = 0;
  CHECK(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
  H5Aclose(a);
  return v;
}

// Every column of the file holds exactly these steps, each with the records
// make_record(r, step, offset_of(step)) of ranks 0..P-1.
void check_rows(const std::string& path, const std::vector<int64_t>& steps, int P,
                const std::function<double(int64_t)>& offset_of) {
  File file(path);
  const Rows f(file);
  CHECK(f.col<int64_t>("step") == steps);
  CHECK(f.col<int64_t>("ranks") == std::vector<int64_t>(steps.size(), P));
  const auto loss = f.col<double>("loss"), lr = f.col<double>("lr"), norm = f.col<double>("grad_norm");
  REQUIRE(loss.size() == steps.size());
  REQUIRE(lr.size() == steps.size());
  REQUIRE(norm.size() == steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepRecord x = make_record(0, steps[i], offset_of(steps[i]));
    CHECK(loss[i] == x.loss);
    CHECK(lr[i] == x.lr);
    CHECK(norm[i] == x.grad_norm);
  }
  for (const Field& fd : fields()) {
    INFO(fd.name);
    const auto mn = f.col<double>(fd.name + ".min"), md = f.col<double>(fd.name + ".median"),
               mx = f.col<double>(fd.name + ".max");
    REQUIRE(mn.size() == steps.size());
    REQUIRE(md.size() == steps.size());
    REQUIRE(mx.size() == steps.size());
    std::vector<double> sm;
    if (fd.sum) {
      sm = f.col<double>(fd.name + ".sum");
      REQUIRE(sm.size() == steps.size());
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      std::vector<double> v;
      double total = 0;
      for (int r = 0; r < P; ++r) {
        v.push_back(fd.get(make_record(r, steps[i], offset_of(steps[i]))));
        total += v.back();
      }
      CHECK(mn[i] == *std::min_element(v.begin(), v.end()));
      CHECK(md[i] == median(v));
      CHECK(mx[i] == *std::max_element(v.begin(), v.end()));
      if (fd.sum) CHECK(sm[i] == total);
    }
  }
}

RunInfo run_info(int P) {
  RunInfo info;
  info.deck = "[model]\nn_layer = 2\n";
  info.P = P;
  info.X = P;
  info.Y = 1;
  info.code_version = "0.1.0-test";
  return info;
}

std::vector<int64_t> range(int64_t a, int64_t b) {  // [a, b]
  std::vector<int64_t> v;
  for (int64_t s = a; s <= b; ++s) v.push_back(s);
  return v;
}

}  // namespace

TEST_CASE("metrics round trip: min/median/max over ranks, global values once, run attributes", "[metrics]") {
  const int rank = rank_of(), P = size_of();
  SharedDir dir;
  MetricsOptions opts;
  opts.flush_every = 3;  // 7 steps: two flushes of 3, the last row at destruction
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts);
    CHECK(w.path() == dir.file());
    for (int64_t s = 1; s <= 7; ++s) w.append(make_record(rank, s));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    check_rows(dir.file(), range(1, 7), P, [](int64_t) { return 0.0; });
    File f(dir.file());
    CHECK(string_attr(f, "format") == "zeropp-metrics");
    CHECK(int_attr(f, "format_version") == MetricsWriter::kFormatVersion);
    CHECK(string_attr(f, "deck") == run_info(P).deck);
    CHECK(int_attr(f, "P") == P);
    CHECK(int_attr(f, "X") == P);
    CHECK(int_attr(f, "Y") == 1);
    CHECK(string_attr(f, "code_version") == "0.1.0-test");
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    CHECK(string_attr(f, "hosts") == std::string(host, size_t(len)));  // every rank on this host
    const hid_t d = H5Dopen2(f.id, "/steps", H5P_DEFAULT);
    const hid_t t = H5Dget_type(d);
    CHECK(H5Tget_nmembers(t) == 5 + 3 * 11 + 4 * 2 * kMetricKinds);  // no member unchecked
    H5Tclose(t);
    H5Dclose(d);
    CHECK(string_attr(f, "kinds") == "all_gather\nreduce_scatter\nall_to_all\nall_reduce\nbroadcast");
  }
}

TEST_CASE("metrics file is readable between appends, also while a reader holds a lock", "[metrics]") {
  const int rank = rank_of(), P = size_of();
  SharedDir dir;
  for (int flush_every : {1, 2}) {
    INFO("flush_every " << flush_every);
    MetricsOptions opts;
    opts.flush_every = flush_every;
    RunInfo info = run_info(P);
    info.hosts = {"node-a", "node-b"};
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), info, opts);
    for (int64_t s = 1; s <= 5; ++s) {
      // A reader's shared lock (what h5py takes) must not stop the writer.
      int fd = -1;
      if (rank == 0 && s == 3) {
        fd = ::open(dir.file().c_str(), O_RDONLY);
        REQUIRE(fd >= 0);
        REQUIRE(::flock(fd, LOCK_SH | LOCK_NB) == 0);
      }
      w.append(make_record(rank, s));
      if (fd >= 0) ::close(fd);
      if (rank == 0) {
        const int64_t flushed = s / flush_every * flush_every;
        check_rows(dir.file(), range(1, flushed), P, [](int64_t) { return 0.0; });
        File f(dir.file());
        CHECK(string_attr(f, "hosts") == "node-a\nnode-b");
      }
    }
  }
}

TEST_CASE("metrics recover from a flush cut short: unwritten rows read step -1 and are overwritten",
          "[metrics]") {
  const int rank = rank_of(), P = size_of();
  SharedDir dir;
  // What a crash between extending /steps and writing its rows leaves.
  const auto extend = [&](hsize_t n) {
    const hid_t f = H5Fopen(dir.file().c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t d = H5Dopen2(f, "/steps", H5P_DEFAULT);
    CHECK(H5Dset_extent(d, &n) >= 0);
    H5Dclose(d);
    H5Fclose(f);
  };
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), {});
    for (int64_t s = 1; s <= 2; ++s) w.append(make_record(rank, s));
    if (rank == 0) {
      extend(4);
      File file(dir.file());
      CHECK(Rows(file).col<int64_t>("step") == std::vector<int64_t>{1, 2, -1, -1});
    }
    for (int64_t s = 3; s <= 4; ++s) w.append(make_record(rank, s));
    if (rank == 0) check_rows(dir.file(), range(1, 4), P, [](int64_t) { return 0.0; });
  }
  // A resume keeps the written rows before the first unwritten one.
  if (rank == 0) extend(6);
  MPI_Barrier(MPI_COMM_WORLD);
  MetricsOptions opts;
  opts.resume = true;
  opts.resume_step = 100;
  { MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts); }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) check_rows(dir.file(), range(1, 4), P, [](int64_t) { return 0.0; });
}

TEST_CASE("metrics resume keeps the rows before the resumed step and appends after them", "[metrics]") {
  const int rank = rank_of(), P = size_of();
  SharedDir dir;
  MetricsOptions opts;
  opts.flush_every = 4;
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts);
    for (int64_t s = 1; s <= 6; ++s) w.append(make_record(rank, s));
  }
  // Resumed from a checkpoint saved after step 4: steps 5.. are redone (other losses).
  opts.resume = true;
  opts.resume_step = 4;
  RunInfo info = run_info(P);
  info.code_version = "0.2.0-test";
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), info, opts);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) check_rows(dir.file(), range(1, 4), P, [](int64_t) { return 0.0; });
    for (int64_t s = 5; s <= 6; ++s) w.append(make_record(rank, s, 100.0));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto offset = [](int64_t s) { return s >= 5 ? 100.0 : 0.0; };
  if (rank == 0) {
    check_rows(dir.file(), range(1, 6), P, offset);
    File f(dir.file());
    CHECK(string_attr(f, "code_version") == "0.2.0-test");
  }

  // A resume past every row keeps them all; steps must still increase.
  opts.resume_step = 100;
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), info, opts);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) check_rows(dir.file(), range(1, 6), P, offset);
    w.append(make_record(rank, 100));
    CHECK_THAT(error_of([&] { w.append(make_record(rank, 100)); }),
               Contains("step 100 appended after step 100"));
  }
  // Resume from step 0 keeps nothing; a resume without a file starts one.
  opts.resume_step = 0;
  { MetricsWriter w(MPI_COMM_WORLD, dir.str(), info, opts); }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    check_rows(dir.file(), {}, P, offset);
    fs::remove(dir.file());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), info, opts);
    w.append(make_record(rank, 7));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) check_rows(dir.file(), {7}, P, [](int64_t) { return 0.0; });
}

TEST_CASE("metrics /validation: losses by step, kept through the resumed step", "[metrics]") {
  const int rank = rank_of(), P = size_of();
  SharedDir dir;
  MetricsOptions opts;
  opts.flush_every = 4;  // validation rows wait for the next flush of /steps, or the last
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts);
    for (int64_t s = 1; s <= 6; ++s) {
      w.append(make_record(rank, s));
      if (s % 2 == 0) w.append_validation(s, 3.0 - 0.25 * double(s));
    }
    CHECK_THAT(error_of([&] { w.append_validation(6, 1.0); }), Contains("validation at step 6 after step 6"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    File f(dir.file());
    Rows v(f, "/validation");
    CHECK(v.col<int64_t>("step") == std::vector<int64_t>{2, 4, 6});
    CHECK(v.col<double>("loss") == std::vector<double>{2.5, 2.0, 1.5});
  }
  // Resumed from the checkpoint after step 4: its validation (step 4) stays.
  opts.resume = true;
  opts.resume_step = 4;
  {
    MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts);
    w.append(make_record(rank, 5));
    w.append_validation(6, 0.5);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    File f(dir.file());
    Rows v(f, "/validation");
    CHECK(v.col<int64_t>("step") == std::vector<int64_t>{2, 4, 6});
    CHECK(v.col<double>("loss") == std::vector<double>{2.5, 2.0, 0.5});
    CHECK(Rows(f).col<int64_t>("step") == range(1, 5));
  }
}

TEST_CASE("metrics errors reach every rank and name the file", "[metrics]") {
  const int rank = rank_of(), P = size_of();
  SharedDir dir;
  const std::string missing = (dir.path / "no-such-dir").string();
  CHECK_THAT(error_of([&] { MetricsWriter w(MPI_COMM_WORLD, missing, run_info(P)); }),
             Contains("cannot create " + missing + "/metrics.h5"));

  MetricsOptions opts;
  opts.flush_every = 0;
  CHECK_THAT(error_of([&] { MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts); }),
             Contains("flush_every must be >= 1"));

  opts.flush_every = 1;
  opts.resume = true;
  if (rank == 0) std::ofstream(dir.file()) << "not hdf5\n";
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_THAT(error_of([&] { MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts); }),
             Contains(dir.file() + ": not a readable HDF5 file"));

  // An HDF5 file that is not ours.
  if (rank == 0) {
    const hid_t f = H5Fcreate(dir.file().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(f >= 0);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_THAT(error_of([&] { MetricsWriter w(MPI_COMM_WORLD, dir.str(), run_info(P), opts); }),
             Contains(dir.file() + ": not a zeropp metrics file"));
}

// Writes the file that the metrics_table ctest entries read: P = 2, 4 steps,
// a slow first step. Expected table: median tokens/s (steps 2-4) 4100.0, per
// rank 2050.0, communication 40.0% of the step, 4000 cross-node bytes per
// step, final loss 6.0000.
TEST_CASE("metrics file for scaling/metrics_table.py", "[metrics-py]") {
  const int rank = rank_of(), P = size_of();
  const char* out = std::getenv("ZEROPP_METRICS_OUT");
  if (out == nullptr) {
    WARN("SKIPPED: ZEROPP_METRICS_OUT not set; nothing written");
    return;
  }
  REQUIRE(P == 2);
  if (rank == 0) fs::create_directories(out);
  MPI_Barrier(MPI_COMM_WORLD);
  RunInfo info;
  info.deck = "[train]\nsteps = 4\n";
  info.P = 2;
  info.X = 2;
  info.Y = 1;
  info.code_version = "test";
  MetricsWriter w(MPI_COMM_WORLD, out, info);
  for (int64_t s = 1; s <= 4; ++s) {
    StepRecord x;
    x.step = s;
    x.loss = 10.0 - double(s);
    x.lr = 1e-4 * double(s);
    x.grad_norm = 2.0;
    x.tokens_per_s = s == 1 ? 100.0 + 10 * rank : 4000.0 + 200 * rank;
    x.time_step_s = 1.0;
    x.time_compute_s = 0.6;
    x.time_collective_s[0] = 0.25;   // all-gather
    x.time_collective_s[1] = 0.125;  // reduce-scatter
    x.time_wait_s = 0.025;
    x.bytes[0] = {2000, 1000 * (rank + 1)};
    x.bytes[1] = {0, 500};
    w.append(x);
    if (s % 2 == 0) w.append_validation(s, 8.5 - double(s));  // the last: 4.5
  }
}
