#include "io/checkpoint/checkpoint_scan.hpp"

#include <hdf5.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>

#include "io/checkpoint/checkpoint_checksum.hpp"
#include "io/checkpoint/checkpoint_isolated.hpp"
#include "io/checkpoint/checkpoint_shards.hpp"
#include "io/hdf5/h5_util.hpp"
#include "src/base/errors.hpp"

namespace zeropp {
namespace fs = std::filesystem;
using namespace h5;

namespace ckpt {

namespace {

constexpr int64_t kInspectChunk = int64_t(1) << 23;  // elements per read in inspect_checkpoint

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

// Required attributes, each missing or unreadable one an Error naming it and its object.
struct Attrs {
  const std::string& where;
  std::string str(hid_t obj, const char* name, const char* at) const {
    auto v = read_attr_string(obj, name);
    if (!v) throw missing(name, at);
    return *v;
  }
  int64_t i64(hid_t obj, const char* name, const char* at) const {
    auto v = read_attr_int<int64_t>(obj, name, H5T_NATIVE_INT64);
    if (!v) throw missing(name, at);
    return *v;
  }
  uint64_t u64(hid_t obj, const char* name, const char* at) const {
    auto v = read_attr_int<uint64_t>(obj, name, H5T_NATIVE_UINT64);
    if (!v) throw missing(name, at);
    return *v;
  }
  // A rank count of the root: a damaged value must not wrap into a plausible one.
  int count(hid_t f, const char* name) const {
    const int64_t v = i64(f, name, "/");
    if (v < 1 || v > INT_MAX)
      throw Error(where + ": attribute '" + name + "' of / is " + std::to_string(v) + ", not a positive int");
    return int(v);
  }
  Error missing(const char* name, const char* at) const {
    return Error(where + ": attribute '" + name + "' of " + at + " missing or unreadable");
  }
};

// Opens `path` as a zeropp checkpoint of this build's format version; fills the scan's size and version.
H5Id open_checkpoint(const std::string& path, const std::string& where, Scan& scan) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(where + ": no such file");
  if (!fs::is_regular_file(path, ec)) throw Error(where + ": not a regular file");
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
  return file;
}

// The root's and /state's attributes.
void read_run_attributes(hid_t f, const std::string& where, CheckpointMeta& m) {
  const Attrs attrs{where};
  m.deck_toml = attrs.str(f, "deck_toml", "/");
  m.zero_toml = attrs.str(f, "zero_toml", "/");
  m.code_version = attrs.str(f, "code_version", "/");
  m.world_size = attrs.count(f, "world_size");
  m.ranks_per_node = attrs.count(f, "ranks_per_node");
  m.nodes = attrs.count(f, "nodes");
  if (H5Lexists(f, "state", H5P_DEFAULT) <= 0) throw Error(where + ": group /state missing");
  H5Id state(H5Gopen2(f, "state", H5P_DEFAULT), H5Gclose);
  if (!state.valid()) throw Error(where + ": group /state unreadable");
  m.step = attrs.i64(state.get(), "step", "/state");
  m.tokens_seen = attrs.i64(state.get(), "tokens_seen", "/state");
  m.seed = attrs.u64(state.get(), "seed", "/state");
}

// A dataset's type, shape and stored checksum.
ScannedDataset describe_dataset(hid_t d, const std::string& name, const std::string& where) {
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
  return sd;
}

// Records the dataset's problem, if any: a wrong dtype, no checksum, or (when read) a checksum mismatch.
void check_dataset(hid_t d, const std::string& expected, bool read, ScannedDataset& sd) {
  DatasetReport& r = sd.report;
  if (r.dtype != expected) {
    r.problem = "dtype " + r.dtype + ", expected " + expected;
  } else if (!sd.has_checksum) {
    r.problem = "no 'checksum' attribute";
  } else if (read) {
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
}

// A /state/scalars or /state/words dataset's values into the metadata; any problem is an Error.
void read_state_dataset(hid_t d, const std::string& name, bool scalars, const ScannedDataset& sd,
                        const std::string& where, CheckpointMeta& m) {
  const DatasetReport& r = sd.report;
  if (!r.problem.empty()) throw Error(where + ": dataset " + r.path + ": " + r.problem);
  if (r.shape.size() != 1) throw Error(where + ": dataset " + r.path + ": expected a 1-D dataset");
  const std::string key = name.substr(scalars ? 14 : 12);
  const size_t n = size_t(r.shape[0]);
  if (scalars) {
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

}  // namespace

Scan scan_file(const std::string& path, bool checksum_all) {
  const std::string where = "checkpoint " + path;
  Scan scan;
  H5Id file = open_checkpoint(path, where, scan);
  const hid_t f = file.get();
  read_run_attributes(f, where, scan.meta);
  for (const std::string& name : visit_links(f)) {
    H5Id obj(H5Oopen(f, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj.valid()) throw Error(where + ": object /" + name + " unreadable");
    if (H5Iget_type(obj.get()) != H5I_DATASET) continue;
    const bool is_state = name.rfind("state/", 0) == 0;
    const bool is_scalars = name.rfind("state/scalars/", 0) == 0,
               is_words = name.rfind("state/words/", 0) == 0;
    ScannedDataset sd = describe_dataset(obj.get(), name, where);
    if (is_state && !is_scalars && !is_words) continue;  // not ours: ignored
    std::string expected = "float32";
    if (is_scalars) expected = "float64";
    if (is_words) expected = "uint64";
    check_dataset(obj.get(), expected, checksum_all || is_state, sd);
    if (is_state) read_state_dataset(obj.get(), name, is_scalars, sd, where, scan.meta);
    scan.datasets.push_back(std::move(sd));
  }
  file.close_checked("H5Fclose(checkpoint)", __FILE__, __LINE__);
  return scan;
}

}  // namespace ckpt

using namespace ckpt;

CheckpointReport inspect_checkpoint(const std::string& path) {
  QuietHdf5 quiet;
  Scan scan = scan_file_in_child(path, true);
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
