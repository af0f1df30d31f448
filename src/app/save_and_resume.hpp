// Saving and resuming a run: what goes into a checkpoint besides the
// tensors, and what a resume may and may not change.
//
// The file layer (io/checkpoint.hpp) writes and reads tensors and metadata;
// this layer fills them from a Run. Everything a step depends on is restored:
// master weights and Adam moments (any P or node layout: the file holds the
// logical tensors, each rank reads its own ranges), the step (from which the
// learning-rate schedule and the data position follow: both are pure
// functions of the step), the seed, and qgZ's error-feedback buffers when the
// layout they belong to (P, nodes, unit padding, gradient quantization:
// zero_layout.hpp) is unchanged, else they restart from zero, reported.
// hpZ secondaries are never saved: they are rebuilt by the first forward.
#pragma once

#include <cstdint>
#include <string>

#include "src/app/train.hpp"
#include "src/config/config.hpp"

namespace zeropp {

// Collective. Writes checkpoint_dir(cfg)/step_<step>.h5 after `step` steps and
// returns its path. Refuses (Error) weights or moments that are not finite.
std::string save_checkpoint(Run& run, const Config& cfg, int64_t step, int64_t tokens_seen);

struct ResumePoint {
  int64_t step = 0, tokens_seen = 0;
  std::string path;  // "" when starting from scratch
};

// Collective. `which` is "auto" (the newest checkpoint in checkpoint_dir(cfg),
// or none) or a checkpoint file. Refuses (Error) a checkpoint whose model
// shape or vocabulary differs from cfg; logs every other changed key.
ResumePoint resume_run(Run& run, const Config& cfg, const std::string& which);

// Collective. Fine-tuning: loads only the model weights of the checkpoint file
// `path` (e.g. one `zeropp ckpt import` made) into the engine's master shards;
// the run starts at step 0 with fresh optimizer state. Refuses (Error) a
// checkpoint whose model shape or vocabulary differs from cfg.
void init_from_checkpoint(Run& run, const Config& cfg, const std::string& path);

}  // namespace zeropp
