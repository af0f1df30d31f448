// Window selection and copying for DataLoader; the formulas are in data_loader.hpp.
#include "io/data/data_loader.hpp"

#include <algorithm>
#include <limits>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {

uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    state += 0x9E3779B97F4A7C15ULL;
    return splitmix64_mix(state);
  }
  // Uniform in [0, n) without modulo bias: accept x < 2^64 − (2^64 mod n),
  // i.e. x ≤ UINT64_MAX − r with r = 2^64 mod n = (−n) mod n in uint64 arithmetic.
  uint64_t below(uint64_t n) {
    const uint64_t r = (0 - n) % n;
    uint64_t x;
    do x = next();
    while (x > std::numeric_limits<uint64_t>::max() - r);
    return x % n;
  }
};

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error("data file " + path + ": " + what);
}

}  // namespace

std::vector<int64_t> shuffle_windows(int64_t W, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> p(size_t(std::max<int64_t>(W, 0)));
  for (int64_t i = 0; i < W; ++i) p[size_t(i)] = i;
  SplitMix64 rng{splitmix64_mix(seed ^ splitmix64_mix(uint64_t(epoch) + 0x9E3779B97F4A7C15ULL))};
  for (int64_t i = W - 1; i > 0; --i) {
    const auto j = int64_t(rng.below(uint64_t(i) + 1));
    std::swap(p[size_t(i)], p[size_t(j)]);
  }
  return p;
}

DataLoader::DataLoader(const std::string& path, int B, int T, int rank, int world_size, int accum_steps,
                       int vocab_size, bool shuffle, uint64_t seed)
    : files_(path),
      B_(B),
      T_(T),
      rank_(rank),
      world_size_(world_size),
      accum_steps_(accum_steps),
      shuffle_(shuffle),
      seed_(seed) {
  // Arguments come from a validated config; these guard the arithmetic below.
  if (B < 1 || T < 1)
    bad(path, "batch size " + std::to_string(B) + " and sequence length " + std::to_string(T) +
                  " must be at least 1");
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    bad(path, "rank " + std::to_string(rank) + " outside world size " + std::to_string(world_size));
  }
  if (accum_steps < 1) bad(path, "accumulation steps " + std::to_string(accum_steps) + " must be at least 1");
  if (vocab_size < 1) bad(path, "vocabulary size " + std::to_string(vocab_size) + " must be at least 1");
  const int64_t n = files_.size(), bt = tokens_per_batch();
  if (n < bt + 1) {
    bad(path,
        "too short for one window: " + std::to_string(n) + " tokens, need B*T+1 = " + std::to_string(bt + 1));
  }
  files_.check_vocab(vocab_size);
  windows_ = n / bt;
}

DataLoader DataLoader::validation(const std::string& path, int B, int T, int rank, int world_size,
                                  int vocab_size) {
  return DataLoader(path, B, T, rank, world_size, 1, vocab_size, false, 0);
}

int64_t DataLoader::global_window(int64_t step, int micro) const {
  if (step < 0 || micro < 0 || micro >= accum_steps_) {
    throw Error("data file " + path() + ": bad batch index step " + std::to_string(step) + ", micro-batch " +
                std::to_string(micro) + " (of " + std::to_string(accum_steps_) + ")");
  }
  return (step * accum_steps_ + micro) * world_size_ + rank_;
}

int64_t DataLoader::epoch(int64_t step, int micro) const { return global_window(step, micro) / windows_; }

int64_t DataLoader::window_start(int64_t step, int micro) const {
  const int64_t g = global_window(step, micro);
  const int64_t n = num_tokens(), bt = tokens_per_batch();
  if (!shuffle_) {
    // (g·B·T) mod N without overflow (N may pass 2^32 over many files).
    return int64_t((unsigned __int128)(g % n) * uint64_t(bt % n) % uint64_t(n));
  }
  const int64_t e = g / windows_;
  if (e != cached_epoch_) {
    cached_perm_ = shuffle_windows(windows_, seed_, e);
    cached_epoch_ = e;
  }
  return cached_perm_[size_t(g % windows_)] * bt;
}

void DataLoader::batch(int64_t step, int micro, int32_t* inputs, int32_t* targets) const {
  const int64_t bt = tokens_per_batch();
  // B·T < N, so the window wraps at most once.
  window_.resize(std::size_t(bt + 1));
  files_.read(window_start(step, micro), bt + 1, window_.data());
  for (int64_t i = 0; i < bt; ++i) {
    inputs[i] = window_[std::size_t(i)];
    targets[i] = window_[std::size_t(i + 1)];
  }
}

}  // namespace zeropp
