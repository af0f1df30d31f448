// A checkpoint's model on P ranks for `generate` and `eval`: the saved deck
// (with the command line's "--section.key=value" overrides) decides the model
// and the engine, the weights are sharded as in training in a frozen engine
// (no gradients, no optimizer states), and only the model weights are read.
// The memory the run will need is checked before anything is allocated.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/generate/generate.hpp"
#include "src/models/model.hpp"
#include "src/run/preflight.hpp"
#include "src/zero/engine.hpp"

namespace zeropp {

struct InferenceRun {
  std::string path;  // the checkpoint file ARG led to
  Config cfg;
  Topology topo;
  MemoryCheck memory;  // checked before the model and the engine allocate
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Model<float>> model;
  Engine engine;
  int64_t step = 0;  // the checkpoint's

  // arg: a checkpoint file or folder, or a run folder (locate_checkpoint).
  // batch and seq_len size the model's buffers (0: the saved deck's; seq_len
  // -1: the whole position table, model.max_seq_len). generating: how
  // `generate` will decode (its KV cache or probabilities counted in the
  // memory check); nullopt for eval.
  // Collective; Error (the same on every rank) for a missing or foreign
  // file, or when the run would not fit in this node's memory.
  InferenceRun(const std::string& arg, const std::vector<std::string>& overrides, int batch, int seq_len,
               std::optional<Decoding> generating);
  InferenceRun(const InferenceRun&) = delete;
  InferenceRun& operator=(const InferenceRun&) = delete;
};

}  // namespace zeropp
