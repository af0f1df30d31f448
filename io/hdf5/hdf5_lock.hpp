// One lock for the process's HDF5 calls. The library is built without its
// thread-safety option, and an asynchronous checkpoint save makes HDF5 calls
// on rank 0's background thread (io/checkpoint/checkpoint_async.hpp) while the main
// thread may write metrics.h5: each holds this lock around all of its HDF5
// calls, identifiers' closes included.
#pragma once

#include <mutex>

namespace zeropp::h5 {

inline std::mutex& library_mutex() {
  static std::mutex m;
  return m;
}

// Holds library_mutex() while alive.
class LibraryLock {
 public:
  LibraryLock() : lock_(library_mutex()) {}

 private:
  std::lock_guard<std::mutex> lock_;
};

}  // namespace zeropp::h5
