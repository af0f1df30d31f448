// The run configuration: what a deck (TOML) and command-line overrides set.
//
// A deck has sections [model], [train], [optim], [data], [log], [zero],
// [checkpoint], [comm] and [rlhf]; every key is a field below (with its default) and
// one entry of the key table (src/config/keys.cpp: type, help, checks). What a
// field means is written once, as its key's help there (`zeropp help keys`,
// the README's key table), not again here. Decks
// are parsed with toml++ (Debian's CLI11 2.1 cannot read nested sections),
// overrides come from the command line as --section.key=value. Unknown keys,
// wrong types and impossible values are errors that name the file or flag,
// the key and value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/base/batched_kernel.hpp"
#include "src/base/comm_backend.hpp"
#include "src/base/deck_enum.hpp"
#include "src/base/precision.hpp"

namespace zeropp {

// Keys that choose one of a few settings hold an enum, spelled in decks as
// its deck_names() say (src/base/deck_enum.hpp).
// model.family: one row each in src/models/model.cpp's family table.
enum class ModelFamily { Gpt2, Llama };
enum class Recompute { None, Layer };
enum class Device { Host, Cuda };
enum class CommDType { BF16, FP32 };
enum class WeightFormat { Int, FP8 };
// zero.inference_weights: how generation gets the weights (src/zero/inference_weights.hpp).
enum class WeightSource { Zero3, Full, Hpz, Int8, Int4, HpzInt8, HpzInt4 };

constexpr std::array<DeckName<ModelFamily>, 2> deck_names(ModelFamily) {
  return {{{ModelFamily::Gpt2, "gpt2"}, {ModelFamily::Llama, "llama"}}};
}
constexpr std::array<DeckName<Recompute>, 2> deck_names(Recompute) {
  return {{{Recompute::None, "none"}, {Recompute::Layer, "layer"}}};
}
constexpr std::array<DeckName<Device>, 2> deck_names(Device) {
  return {{{Device::Host, "host"}, {Device::Cuda, "cuda"}}};
}
constexpr std::array<DeckName<CommDType>, 2> deck_names(CommDType) {
  return {{{CommDType::BF16, "bf16"}, {CommDType::FP32, "fp32"}}};
}
constexpr std::array<DeckName<WeightFormat>, 2> deck_names(WeightFormat) {
  return {{{WeightFormat::Int, "int"}, {WeightFormat::FP8, "fp8"}}};
}
constexpr std::array<DeckName<WeightSource>, 7> deck_names(WeightSource) {
  return {{{WeightSource::Zero3, "zero3"},
           {WeightSource::Full, "full"},
           {WeightSource::Hpz, "hpz"},
           {WeightSource::Int8, "int8"},
           {WeightSource::Int4, "int4"},
           {WeightSource::HpzInt8, "hpz+int8"},
           {WeightSource::HpzInt4, "hpz+int4"}}};
}

struct ModelConfig {
  int vocab_size = 256;
  int max_seq_len = 256;
  int n_layer = 4;
  int n_head = 4;
  int n_embd = 256;
  ModelFamily family = ModelFamily::Gpt2;
  int ffn_hidden = 0;
  Recompute recompute = Recompute::None;
};

struct TrainConfig {
  int batch_size = 8;
  int seq_len = 256;
  int grad_accum = 1;
  int64_t steps = 100;
  int64_t seed = 1337;
  int val_every = 0;
  int val_batches = 4;
  int sample_tokens = 128;
  std::string sample_prompt = "And God said";
  std::string out_dir = "runs/default";
  double max_runtime = 0;
  Precision precision = Precision::FP32;
  int threads = 0;
  BatchedKernel batched_gemm = BatchedKernel::Auto;
  Device device = Device::Host;
  bool tf32 = false;
};

struct OptimConfig {
  double lr = 3e-4;
  double min_lr = 3e-5;
  int warmup_steps = 10;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;
};

struct DataConfig {
  std::vector<std::string> train = {"data/kjv/train.bin"};
  std::vector<std::string> val = {"data/kjv/val.bin"};
  bool shuffle = false;
};

struct LogConfig {
  int every = 1;
};

struct ZeroConfig {
  int ranks_per_node = 0;
  CommDType comm_dtype = CommDType::BF16;
  bool quantized_weights = false;
  WeightFormat weight_format = WeightFormat::Int;
  int weight_bits = 8;
  int weight_block = 256;
  bool quantized_weights_backward = true;
  int hpz_partition_size = 1;
  bool quantized_gradients = false;
  int gradient_block = 128;
  int intra_node_gradient_bits = 4;
  int inter_node_gradient_bits = 4;
  bool gradient_error_feedback = false;
  double error_feedback_beta = 0.8;
  int error_feedback_reset = 1024;
  int prefetch_depth = 1;
  bool overlap = true;
  WeightSource inference_weights = WeightSource::Zero3;
};

struct CheckpointConfig {
  std::string dir;
  int every = 0;
  int keep = 3;
  bool at_start = false;
  bool at_end = true;
  bool async = false;
  double timeout_s = 900;
  int fault_kill_rank = -1;
  int64_t fault_kill_step = 0;
  int fault_kill_after = 1;
  bool fault_stall = false;
};

struct CommConfig {
  CommBackend backend = CommBackend::Auto;
  double timeout_s = 600;
  bool device_staging = false;
  double internode_gbps = 0;
  double internode_latency_us = 0;
  double intranode_gbps = 0;
  double intranode_latency_us = 0;
  int fault_stall_rank = -1;
  int64_t fault_stall_step = 0;
};

// `zeropp rlhf` (src/rlhf/rlhf.hpp): the policy-gradient loop's own keys.
struct RlhfConfig {
  std::string init_from;
  std::vector<std::string> prompts;
  int batch_size = 8;
  int prompt_len = 32;
  int completion_len = 32;
  double temperature = 1.0;
  double beta = 0.05;
  double lr = 1e-4;
  int64_t iterations = 50;
  std::string reward_word = "LORD";
  int reward_clip = 4;
};

struct Config {
  ModelConfig model;
  TrainConfig train;
  OptimConfig optim;
  DataConfig data;
  LogConfig log;
  ZeroConfig zero;
  CheckpointConfig checkpoint;
  CommConfig comm;
  RlhfConfig rlhf;
};

// Where checkpoints go: checkpoint.dir, or <train.out_dir>/checkpoints.
std::string checkpoint_dir(const Config& c);

// Reads a deck from TOML text (a checkpoint's saved deck); `origin` names it
// in errors. No overrides, no validation.
Config parse_config_text(const std::string& text, const std::string& origin);

// "key: old -> new" for every key whose value differs between a and b.
std::vector<std::string> config_differences(const Config& a, const Config& b);

// Reads DECK (TOML) over the defaults, then applies overrides of the form
// "--section.key=value" or "--section.key" "value", then validates.
// Throws zeropp::Error with one line naming the file/flag, key and value.
Config load_config(const std::string& deck_path, const std::vector<std::string>& overrides);

// Applies overrides (load_config without a deck and validation).
void apply_overrides(Config& c, const std::vector<std::string>& overrides);
// Each key's own checks, then the rules between keys (src/config/validate.cpp).
void validate(const Config& c);

// The resolved configuration as a TOML deck that load_config reads back.
std::string to_toml(const Config& c);

}  // namespace zeropp
