#include "io/hdf5/h5_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp::h5 {

namespace {

// Tuning (docs/checkpoint-format.md, docs/performance.md)
constexpr hsize_t kAlignThreshold = hsize_t(1) << 20;  // datasets of 1 MiB or more ...
constexpr hsize_t kAlignment = hsize_t(1) << 20;       // ... start at a multiple of 1 MiB

template <class T>
void write_attr_scalar(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, T value) {
  H5Id space(ZCHECK_H5(H5Screate(H5S_SCALAR)), H5Sclose);
  H5Id attr(ZCHECK_H5(H5Acreate2(obj, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT)), H5Aclose);
  ZCHECK_H5(H5Awrite(attr.get(), mem_type, &value));
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

}  // namespace

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

void write_attr_i64(hid_t obj, const char* name, int64_t v) {
  write_attr_scalar(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, v);
}
void write_attr_u64(hid_t obj, const char* name, uint64_t v) {
  write_attr_scalar(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, v);
}

std::optional<ScalarAttr> open_scalar_attr(hid_t obj, const char* name, H5T_class_t cls) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return std::nullopt;
  H5Id ftype(H5Aget_type(attr.get()), H5Tclose);
  H5Id space(H5Aget_space(attr.get()), H5Sclose);
  if (!ftype.valid() || !space.valid() || H5Tget_class(ftype.get()) != cls) return std::nullopt;
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return std::nullopt;
  return ScalarAttr{std::move(attr), std::move(ftype)};
}

std::optional<std::string> read_attr_string(hid_t obj, const char* name) {
  const auto a = open_scalar_attr(obj, name, H5T_STRING);
  if (!a) return std::nullopt;
  const hid_t attr = a->attr.get(), ftype = a->type.get();
  const htri_t vl = H5Tis_variable_str(ftype);
  if (vl < 0) return std::nullopt;
  H5Id mtype(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!mtype.valid()) return std::nullopt;
  if (vl > 0) {
    if (H5Tset_size(mtype.get(), H5T_VARIABLE) < 0 || H5Tset_cset(mtype.get(), H5Tget_cset(ftype)) < 0)
      return std::nullopt;
    char* p = nullptr;
    if (H5Aread(attr, mtype.get(), &p) < 0) return std::nullopt;
    std::string s = p ? p : "";
    if (p) H5free_memory(p);
    return s;
  }
  const size_t n = H5Tget_size(ftype);
  if (n == 0) return std::nullopt;
  std::string s(n, '\0');
  if (H5Tset_size(mtype.get(), n) < 0 || H5Tset_strpad(mtype.get(), H5T_STR_NULLPAD) < 0 ||
      H5Aread(attr, mtype.get(), s.data()) < 0)
    return std::nullopt;
  s.resize(std::strlen(s.c_str()));
  return s;
}

H5Id ordered_gcpl() {
  H5Id p(ZCHECK_H5(H5Pcreate(H5P_GROUP_CREATE)), H5Pclose);
  ZCHECK_H5(H5Pset_link_creation_order(p.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  return p;
}

H5Id create_group(hid_t parent, const std::string& name) {
  H5Id gcpl = ordered_gcpl();
  return H5Id(ZCHECK_H5(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT)), H5Gclose);
}

H5Id make_space(const std::vector<int64_t>& shape) {
  if (shape.empty()) return H5Id(ZCHECK_H5(H5Screate(H5S_SCALAR)), H5Sclose);
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  return H5Id(ZCHECK_H5(H5Screate_simple(int(dims.size()), dims.data(), nullptr)), H5Sclose);
}

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

namespace {
// What every checkpoint file's access shares, whoever writes it.
void set_file_layout(hid_t fapl) {
  ZCHECK_H5(H5Pset_alignment(fapl, kAlignThreshold, kAlignment));
  // The 1.8 file format: creation-order indexes and attributes of any size.
  ZCHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST));
}
}  // namespace

H5Id parallel_fapl(MPI_Comm comm) {
  H5Id fapl(ZCHECK_H5(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  MPI_Info info = mpiio_hints();
  ZCHECK_H5(H5Pset_fapl_mpio(fapl.get(), comm, info));
  if (info != MPI_INFO_NULL) ZCHECK_MPI(MPI_Info_free(&info));
  ZCHECK_H5(H5Pset_all_coll_metadata_ops(fapl.get(), true));
  ZCHECK_H5(H5Pset_coll_metadata_write(fapl.get(), true));
  set_file_layout(fapl.get());
  return fapl;
}

H5Id serial_fapl() {
  H5Id fapl(ZCHECK_H5(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  ZCHECK_H5(H5Pset_fapl_sec2(fapl.get()));
  set_file_layout(fapl.get());
  return fapl;
}

H5Id transfer_plist() {
  H5Id dxpl(ZCHECK_H5(H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
  const char* env = std::getenv("ZEROPP_CKPT_XFER");
  const bool independent = env && std::string(env) == "independent";
  ZCHECK_H5(H5Pset_dxpl_mpio(dxpl.get(), independent ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE));
  return dxpl;
}

}  // namespace zeropp::h5
