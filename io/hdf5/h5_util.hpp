// Checked HDF5 helpers for the checkpoint code: owned identifiers, attributes,
// dataspaces and flat-range selections, parallel file access.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/base/errors.hpp"

namespace zeropp::h5 {

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

H5Id vlen_string_type();
void write_attr_string(hid_t obj, const char* name, const std::string& value);
void write_attr_i64(hid_t obj, const char* name, int64_t v);
void write_attr_u64(hid_t obj, const char* name, uint64_t v);

// Attribute readers for possibly foreign files: nullopt when missing or of the wrong kind.
struct ScalarAttr {
  H5Id attr, type;  // the attribute and its file type
};
// The attribute `name` of obj when it exists, holds one element and its type is of class `cls`.
std::optional<ScalarAttr> open_scalar_attr(hid_t obj, const char* name, H5T_class_t cls);
std::optional<std::string> read_attr_string(hid_t obj, const char* name);
template <class T>
std::optional<T> read_attr_int(hid_t obj, const char* name, hid_t mem_type) {
  const auto a = open_scalar_attr(obj, name, H5T_INTEGER);
  T v{};
  if (!a || H5Aread(a->attr.get(), mem_type, &v) < 0) return std::nullopt;
  return v;
}

// Group creation properties: links tracked in creation order, so readers can
// list tensors and state in the order they were written.
H5Id ordered_gcpl();
H5Id create_group(hid_t parent, const std::string& name);

// Dataspace of a logical shape ({} = scalar).
H5Id make_space(const std::vector<int64_t>& shape);

// Selects the flat range [begin, end) of `space` (a dataspace of `shape`).
void select_flat_range(hid_t space, const std::vector<int64_t>& shape, int64_t begin, int64_t end);

// A 1-D memory space of n elements (n == 0: one element, none selected).
H5Id memory_space(int64_t n);

// "float32", "float64", "int64", "uint64", "string", ... for a datatype.
std::string dtype_name(hid_t type);

// File access for collective parallel I/O (MPI-IO hints from ZEROPP_CKPT_MPIIO_HINTS).
H5Id parallel_fapl(MPI_Comm comm);
// File access by one process (POSIX), with parallel_fapl's file layout.
H5Id serial_fapl();

// Dataset transfer: collective, or independent when ZEROPP_CKPT_XFER=independent.
H5Id transfer_plist();

}  // namespace zeropp::h5
