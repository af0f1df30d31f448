// The run configuration: what a deck (TOML) and command-line overrides set.
//
// A deck has sections [model], [train], [optim], [data], [log], [zero],
// [checkpoint], [comm] and [rlhf]; every key is a field below (with its default) and
// one entry of the key table (src/config/keys.cpp: type, help, checks). Decks
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
  int vocab_size = 256;                    // V
  int max_seq_len = 256;                   // rows of the position table
  int n_layer = 4;                         // L
  int n_head = 4;                          // H
  int n_embd = 256;                        // C
  ModelFamily family = ModelFamily::Gpt2;  // src/models/
  int ffn_hidden = 0;                      // llama: SwiGLU hidden size (0: 4·n_embd)
  Recompute recompute = Recompute::None;   // activation recomputation
};

struct TrainConfig {
  int batch_size = 8;       // B: sequences per micro-batch per rank
  int seq_len = 256;        // T: tokens per sequence (<= model.max_seq_len)
  int grad_accum = 1;       // A: micro-batches per optimizer step
  int64_t steps = 100;      // optimizer steps
  int64_t seed = 1337;      // initialisation and shuffling
  int val_every = 0;        // validation every N steps (0: only at the end)
  int val_batches = 4;      // micro-batches per validation
  int sample_tokens = 128;  // tokens generated at the end (0: none)
  std::string sample_prompt = "And God said";
  std::string out_dir = "runs/default";
  double max_runtime = 0;                 // seconds; save and stop before this much wall time (0: no limit)
  Precision precision = Precision::FP32;  // operands of the model's matrix products
  // Threads per rank of the GEMM libraries (0: their own settings).
  int threads = 0;
  BatchedKernel batched_gemm =
      BatchedKernel::Auto;       // the attention's batched GEMMs (kernels/gemm_batched.hpp)
  Device device = Device::Host;  // where the step computes (src/run/device_run.hpp)
  // cuBLAS may run fp32 GEMMs on TF32 tensor cores (train.device = "cuda" only).
  bool tf32 = false;
};

struct OptimConfig {
  double lr = 3e-4;
  double min_lr = 3e-5;  // floor of the cosine decay
  int warmup_steps = 10;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;  // max global norm (0: no clipping)
};

struct DataConfig {
  // Token files: paths or globs, read as one sequence (io/token_files.hpp).
  std::vector<std::string> train = {"data/kjv/train.bin"};
  std::vector<std::string> val = {"data/kjv/val.bin"};
  bool shuffle = false;
};

struct LogConfig {
  int every = 1;  // print one line every N steps
};

struct ZeroConfig {
  int ranks_per_node = 0;                  // 0: detect nodes; X > 0: emulate nodes of X ranks
  CommDType comm_dtype = CommDType::BF16;  // dtype of gathered weights and reduced gradients
  // ZeRO++ (docs in README.md); each independent, all on = ZeRO++.
  bool quantized_weights = false;                  // qwZ: blockwise-quantized weight all-gathers
  WeightFormat weight_format = WeightFormat::Int;  // qwZ's element
  int weight_bits = 8;                             // 8 or 4
  int weight_block = 256;                          // elements per fp32 scale (a power of two)
  // qwZ in the backward's gathers too (false: in comm_dtype, other weights than the forward's)
  bool quantized_weights_backward = true;
  int hpz_partition_size = 1;            // hpZ: 1 off, 0 the node (X), alpha: groups of alpha ranks
  bool quantized_gradients = false;      // qgZ: two-hop all-to-all int4 reduce-scatter
  int gradient_block = 128;              // elements per fp32 scale (a power of two)
  int intra_node_gradient_bits = 4;      // 4, or 8 inside the node (SDP4Bit)
  int inter_node_gradient_bits = 4;      // 4, or 8 across nodes (qgZ's second hop)
  bool gradient_error_feedback = false;  // LoCo-style error compensation per hop
  double error_feedback_beta = 0.8;
  int error_feedback_reset = 1024;  // zero the error buffers every N steps
  int prefetch_depth = 1;           // units gathered ahead (gather slots = depth + 1)
  bool overlap = true;              // nonblocking gradient reduction, progress between kernels
  WeightSource inference_weights = WeightSource::Zero3;  // how generation gets the weights
};

struct CheckpointConfig {
  std::string dir;         // "": <train.out_dir>/checkpoints
  int every = 0;           // save every N steps (0: only at the end / on signals)
  int keep = 3;            // keep the newest K checkpoints (0: all)
  bool at_start = false;   // save before the first step
  bool at_end = true;      // save after the last step
  bool async = false;      // snapshot, then write on a background thread (io/checkpoint_async.hpp)
  double timeout_s = 900;  // a longer save, resume or weights read ends the job (CheckpointDeadline)
  // Fault injection (crash tests): this rank is killed (SIGKILL) in the middle
  // of the save at step fault_kill_step, after writing fault_kill_after datasets.
  int fault_kill_rank = -1;
  int64_t fault_kill_step = 0;
  int fault_kill_after = 1;
  bool fault_stall = false;  // ... or instead hangs there (its process alive)
};

struct CommConfig {
  CommBackend backend = CommBackend::Auto;  // src/comm/make_communicator.hpp
  double timeout_s = 600;                   // a collective that takes longer aborts the job
  // The mpi backend over device buffers staged through pinned host memory
  // (src/comm/staging_communicator.hpp); CUDA builds only.
  bool device_staging = false;
  // Emulated links, per rank (src/comm/link_emulator.hpp); 0: no such term.
  double internode_gbps = 0;
  double internode_latency_us = 0;
  double intranode_gbps = 0;
  double intranode_latency_us = 0;
  // Fault injection (tests of the watchdog): this rank stalls forever before
  // its first collective of this step. -1: off.
  int fault_stall_rank = -1;
  int64_t fault_stall_step = 0;
};

// `zeropp rlhf` (src/rlhf/rlhf.hpp): the policy-gradient loop's own keys.
struct RlhfConfig {
  std::string init_from;  // checkpoint of the actor's (and reference's) start ("": train.seed's init)
  std::vector<std::string> prompts;  // token files the prompts are cut from (empty: data.train)
  int batch_size = 8;                // prompts per rank per iteration
  int prompt_len = 32;               // tokens per prompt
  int completion_len = 32;           // tokens sampled after each prompt
  double temperature = 1.0;          // sampling temperature (> 0)
  double beta = 0.05;                // weight of the KL penalty to the reference
  double lr = 1e-4;                  // constant AdamW learning rate
  int64_t iterations = 50;           // generate + update rounds
  std::string reward_word = "LORD";  // the rule-based reward counts it in the completion
  int reward_clip = 4;               // at most this many occurrences count
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
