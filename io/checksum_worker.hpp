// Checksums of tensor parts computed on a helper thread (no MPI, no HDF5)
// while the caller reads or writes the file and waits for the disk.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace zeropp::ckpt {

class ChecksumWorker {
 public:
  explicit ChecksumWorker(std::vector<uint64_t>& sums);
  ~ChecksumWorker() { finish(); }
  ChecksumWorker(const ChecksumWorker&) = delete;
  ChecksumWorker& operator=(const ChecksumWorker&) = delete;
  // sums[index] = checksum_part of `part`, the floats from flat index `first` (host memory, owned).
  void add(size_t index, int64_t first, std::vector<float> part);
  // Waits for every part added (also on the way out of an exception).
  void finish();

 private:
  struct Job {
    size_t index;
    int64_t first;
    std::vector<float> part;
  };
  void run();
  std::vector<uint64_t>& sums_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool done_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace zeropp::ckpt
