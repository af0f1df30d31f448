// Shared by the engine tests: a synthetic corpus every rank reads, a tiny
// deck on it, and a trainer that records losses, norms and final weights.
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "io/data/token_file.hpp"
#include "src/train/train.hpp"
#include "src/zero/optimizer.hpp"

namespace zeropp::test {

inline int world_size() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

// A token file shared by all ranks (rank 0 writes it once).
inline std::string corpus() {
  static std::string path;
  if (!path.empty()) return path;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int pid = getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  path = "/tmp/zeropp_engine_test_" + std::to_string(pid) + ".bin";
  if (rank == 0) {
    std::vector<uint16_t> t(20000);
    uint64_t x = 88172645463325252ull;
    for (auto& v : t) {  // text-like: a skewed distribution over 64 ids
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v = uint16_t((x % 64) * (x % 64) / 64);
    }
    write_token_file(path, t);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

inline Config tiny(int A, const std::string& dtype) {
  Config c;
  c.model.vocab_size = 64;
  c.model.max_seq_len = 16;
  c.model.n_layer = 2;
  c.model.n_head = 2;
  c.model.n_embd = 24;  // units of odd sizes: padding on every P
  c.train.batch_size = 2;
  c.train.seq_len = 16;
  c.train.grad_accum = A;
  c.train.steps = 4;
  c.optim.lr = 3e-3;
  c.optim.min_lr = 3e-4;
  c.optim.warmup_steps = 1;
  c.optim.grad_clip = 0.5;  // small enough to clip: the global norm path is exercised
  c.data.train = {corpus()};
  c.data.val = {};
  c.data.shuffle = false;
  c.zero.comm_dtype = deck_value<CommDType>(dtype).value();
  return c;
}

struct Trace {
  std::vector<double> losses, norms;
  std::vector<std::vector<float>> weights;  // every unit, full
};

inline Trace train(const Config& c, MPI_Comm base) {
  Run run(c, base);
  Trace t;
  for (int64_t s = 0; s < c.train.steps; ++s) {
    const StepStats st = train_step(run, s, learning_rate(c.optim, s, c.train.steps));
    t.losses.push_back(st.loss);
    t.norms.push_back(st.grad_norm);
  }
  for (size_t u = 0; u < run.model->layout().units.size(); ++u)
    t.weights.push_back(run.engine.gather_master(int(u)));
  return t;
}

// A training run's trace and its last step's mean gradient (every unit, full).
struct TracedRun {
  Trace trace;
  std::vector<std::vector<float>> grads;
};

// Trains c on the world; `after` (if set) runs after every step.
using AfterStep = std::function<void(Run&, int64_t step, const StepStats&)>;
inline TracedRun train_traced(const Config& c, const AfterStep& after = {}) {
  Run run(c, MPI_COMM_WORLD);
  TracedRun r;
  for (int64_t step = 0; step < c.train.steps; ++step) {
    const StepStats st = train_step(run, step, learning_rate(c.optim, step, c.train.steps));
    r.trace.losses.push_back(st.loss);
    r.trace.norms.push_back(st.grad_norm);
    if (after) after(run, step, st);
  }
  for (size_t u = 0; u < run.model->layout().units.size(); ++u) {
    r.trace.weights.push_back(run.engine.gather_master(int(u)));
    r.grads.push_back(run.engine.gather_grad(int(u)));
  }
  return r;
}

// ZeRO++ in full on nodes of X ranks: qwZ, hpZ over the node, qgZ with error feedback.
inline Config zeropp_full(Config c, int X) {
  c.zero.ranks_per_node = X;
  c.zero.quantized_weights = true;
  c.zero.weight_block = 32;
  c.zero.hpz_partition_size = 0;
  c.zero.quantized_gradients = true;
  c.zero.gradient_block = 32;
  c.zero.gradient_error_feedback = true;
  return c;
}

inline double max_rel(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, double(std::abs(a[i] - b[i])));
    scale = std::max(scale, double(std::abs(b[i])));
  }
  return diff / scale;
}

}  // namespace zeropp::test
