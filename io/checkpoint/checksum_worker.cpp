#include "io/checkpoint/checksum_worker.hpp"

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp::ckpt {

ChecksumWorker::ChecksumWorker(std::vector<uint64_t>& sums, size_t max_queued)
    : sums_(sums), max_queued_(max_queued), thread_([this] { run(); }) {}

void ChecksumWorker::add(size_t index, int64_t first, std::vector<float> part) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] { return jobs_.size() < max_queued_; });
    jobs_.push_back({index, first, std::move(part)});
  }
  cv_.notify_one();
}

void ChecksumWorker::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void ChecksumWorker::run() {
  while (true) {
    Job j;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return !jobs_.empty() || done_; });
      if (jobs_.empty()) return;
      j = std::move(jobs_.front());
      jobs_.pop_front();
    }
    space_.notify_one();
    sums_[j.index] += checksum_part(j.part.data(), j.first, int64_t(j.part.size()));
  }
}

}  // namespace zeropp::ckpt
