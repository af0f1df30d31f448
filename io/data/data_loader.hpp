// Data loader: micro-batches of B sequences of T tokens from token files.
//
// The data is one sequence of N tokens: a single file, or several files
// concatenated in order (a list, a glob such as llm.c's "fineweb_train_*.bin";
// io/data/token_files.hpp). Everything below refers to positions in that sequence,
// so windows run across file boundaries exactly as within one file.
//
// Every micro-batch is one window of B·T+1 consecutive tokens (consecutive
// circularly: reading past the last token continues at token 0 of the first file):
//   inputs  = window[0 .. B·T)      targets = window[1 .. B·T]
// so targets are the inputs shifted by one. Row b of the [B, T] batch is
// inputs[b·T .. b·T+T).
//
// Which window is a pure function of (step, micro), so resuming from a
// checkpoint needs only the step. With N tokens in the file, P ranks, A
// accumulation micro-batches per optimizer step, rank r, optimizer step s
// (from 0) and micro-batch m (0 .. A−1), let the global window index be
//   g = (s·A + m)·P + r.
// shuffle = false: the window starts at token (g·B·T) mod N.
// shuffle = true:  the W = floor(N / (B·T)) aligned windows (window k starts at
//   token k·B·T) are visited once per epoch in a seeded order: epoch e = g / W,
//   k = g mod W, and the window starts at token perm_e[k]·B·T, where perm_e is
//   a permutation of 0 .. W−1 from shuffle_windows(W, seed, e) below (own
//   Fisher–Yates and generator, so every standard library gives the same order).
//   When N is a multiple of B·T the last aligned window's final target wraps to token 0.
// Validation: a loader on the validation file with A = 1 and shuffle = false;
// validation batch i on rank r is batch(i, 0), i.e. starts at ((i·P + r)·B·T) mod N.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/data/token_files.hpp"

namespace zeropp {

// The permutation of 0 .. W−1 used for epoch `epoch`: start from p = 0 .. W−1,
// then Fisher–Yates from the top (for i = W−1 down to 1: swap p[i] and p[j],
// j uniform in 0 .. i), with j drawn by rejection (x = next() until
// x < 2^64 − (2^64 mod (i+1)); j = x mod (i+1)) from splitmix64, all uint64:
//   mix(z):  z = (z ^ z>>30)·0xBF58476D1CE4E5B9; z = (z ^ z>>27)·0x94D049BB133111EB; z ^ z>>31
//   next():  state += 0x9E3779B97F4A7C15; return mix(state)
//   initial state = mix(seed ^ mix(epoch + 0x9E3779B97F4A7C15)).
// (shuffle_windows(10, 1234, 0) = {6, 8, 0, 5, 1, 9, 3, 4, 7, 2}, pinned by a test.)
std::vector<int64_t> shuffle_windows(int64_t W, uint64_t seed, int64_t epoch);

class DataLoader {
 public:
  // Opens and validates the files of `spec` (see TokenFiles), checks every
  // token < vocab_size and that they hold at least one window (N ≥ B·T+1).
  // Throws zeropp::Error naming the file (or spec) and the problem.
  DataLoader(const std::string& spec, int B, int T, int rank, int world_size, int accum_steps, int vocab_size,
             bool shuffle, uint64_t seed);

  // The validation loader of the header comment (A = 1, no shuffle).
  static DataLoader validation(const std::string& spec, int B, int T, int rank, int world_size,
                               int vocab_size);

  // Fills inputs[B·T] and targets[B·T] for optimizer step `step` and
  // micro-batch `micro` (0 .. A−1) of this rank.
  void batch(int64_t step, int micro, int32_t* inputs, int32_t* targets) const;

  // First token of that window (the formula above); for tests and logs.
  int64_t window_start(int64_t step, int micro) const;
  // Epoch that (step, micro) of this rank falls in: g / W (also without shuffle).
  int64_t epoch(int64_t step, int micro) const;

  const std::string& path() const { return files_.spec(); }
  int64_t num_tokens() const { return files_.size(); }
  int64_t windows_per_epoch() const { return windows_; }
  int B() const { return B_; }
  int T() const { return T_; }
  int64_t tokens_per_batch() const { return int64_t(B_) * T_; }

 private:
  int64_t global_window(int64_t step, int micro) const;

  TokenFiles files_;
  int B_, T_, rank_, world_size_, accum_steps_;
  bool shuffle_;
  uint64_t seed_;
  int64_t windows_;  // W = floor(N / (B·T))
  // Permutation of the last epoch asked for: batches walk epochs in order, so
  // one cached epoch makes the shuffle O(1) per batch after the first.
  mutable int64_t cached_epoch_ = -1;
  mutable std::vector<int64_t> cached_perm_;
  mutable std::vector<uint16_t> window_;  // B·T+1 tokens of the current batch
};

}  // namespace zeropp
