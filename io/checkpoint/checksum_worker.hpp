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
  // add() waits while max_queued parts wait for the thread (a bound on the host copies alive).
  ChecksumWorker(std::vector<uint64_t>& sums, size_t max_queued);
  ~ChecksumWorker() { finish(); }
  ChecksumWorker(const ChecksumWorker&) = delete;
  ChecksumWorker& operator=(const ChecksumWorker&) = delete;
  // sums[index] += checksum_part of `part`, the floats from flat index `first` (host memory, owned;
  // a dataset's part may come in several pieces: the checksums of pieces add up).
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
  std::condition_variable cv_;     // a job or done_, for the thread
  std::condition_variable space_;  // room in jobs_, for add()
  size_t max_queued_;
  std::deque<Job> jobs_;
  bool done_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace zeropp::ckpt
