// Saving and resuming a run: what goes into a checkpoint besides the
// tensors, and what a resume may and may not change.
//
// The file layer (io/checkpoint/checkpoint.hpp) writes and reads tensors and metadata;
// this layer fills them from the engine's neutral shard views, the model's
// description and the loop's own state. Everything a step depends on is restored:
// master weights and Adam moments (any P or node layout: the file holds the
// logical tensors, each rank reads its own ranges), the step (from which the
// learning-rate schedule and the data position follow: both are pure
// functions of the step), the seed, and qgZ's error-feedback buffers when the
// layout they belong to (P, nodes, unit padding, gradient quantization:
// zero_layout.hpp) is unchanged, else they restart from zero, reported.
// hpZ secondaries are never saved: they are rebuilt by the first forward.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "io/checkpoint/checkpoint.hpp"
#include "src/base/deadline.hpp"
#include "src/base/tensor_shard.hpp"
#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/models/model.hpp"
#include "src/zero/engine.hpp"

namespace zeropp {

// The loop's position when it saves.
struct SavePoint {
  int64_t step = 0, tokens_seen = 0;
  int64_t data_next_window = 0;  // first token of rank 0's next window (for the record)
};

// What a checkpoint after at.step steps holds besides the tensors.
CheckpointMeta checkpoint_meta(const Topology& topo, const Config& cfg, const SavePoint& at);
// "checkpoint step N: refusing to save non-finite values (...)" when this
// rank's shards hold a NaN or inf, else nothing. One process; `on_host`: the
// shards' data is host memory (first_non_finite_on_host).
std::optional<std::string> non_finite_refusal(const ShardGroups& shards, int64_t step, bool on_host);
// Fault injection (checkpoint.fault_kill_*): arms it when `step` is the save to fail.
void arm_checkpoint_fault(const Config& cfg, int64_t step);

// checkpoint.timeout_s over a save's or a load's collective I/O and agreements
// (src/base/deadline.hpp), in the watchdog's order: rank 0 gives up first, each
// other node's first rank one limit later, every other rank two. The rank that
// gives up says what stalled (`what`: "checkpoint save of step 10") and exits.
class CheckpointDeadline : public Deadline {
 public:
  CheckpointDeadline(const Topology& topo, const Config& cfg, const std::string& what);
};

// Collective. Writes checkpoint_dir(cfg)/step_<step>.h5 after `step` steps
// with the tensors of `shards` (Engine::checkpoint_shards) and returns its
// path. Refuses (Error) weights or moments that are not finite.
std::string save_checkpoint(const Topology& topo, const ShardGroups& shards, const Config& cfg,
                            const SavePoint& at);

struct ResumePoint {
  int64_t step = 0, tokens_seen = 0;
  std::string path;  // "" when starting from scratch
};

// Collective. `which` is "auto" (the newest checkpoint in checkpoint_dir(cfg),
// or none) or a checkpoint file. Refuses (Error) a checkpoint whose model
// differs from `model` (the descriptions' identities; a saved deck without
// model.family is GPT-2), listing what differs; logs every other changed key.
ResumePoint resume_run(const Topology& topo, Engine& engine, const ModelDescription& model, const Config& cfg,
                       const std::string& which);

// Collective. Reads only the model weights of checkpoint `path` into the engine's master
// shards (refusing another model: "refusing to <what> a different model");
// the checkpoint's step. Under cfg's checkpoint.timeout_s, as a resume is.
int64_t load_model_weights(const Topology& topo, Engine& engine, const ModelDescription& model,
                           const Config& cfg, const std::string& path, const std::string& what);

// Collective. Fine-tuning: loads only the model weights of the checkpoint file
// `path` (e.g. one `zeropp ckpt import` made) into the engine's master shards;
// the run starts at step 0 with fresh optimizer state. Refuses (Error) a
// checkpoint whose model shape or vocabulary differs from cfg.
void init_from_checkpoint(const Topology& topo, Engine& engine, const ModelDescription& model,
                          const Config& cfg, const std::string& path);

}  // namespace zeropp
