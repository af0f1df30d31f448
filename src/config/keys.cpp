// The table of every deck key. Everything else about keys — reading decks and
// --section.key=value overrides, validation, to_toml, config_differences,
// `zeropp train --help`, `zeropp help keys` and the README's key table
// (scripts/readme-keys) — is generated from it.
//
// Adding a key is one line in its section below, after adding the field (with
// its default) to the struct in src/config/config.hpp:
//   model.add("n_layer", &ModelConfig::n_layer, "L: transformer blocks", {positive()});
// The field's C++ type sets the key's type: int, int64_t, double, bool,
// std::string, std::vector<std::string> (a list: a TOML array of strings, or
// one string; on the command line comma-separated), or an enum with its
// deck_names() (src/config/config.hpp): a string in the deck, its choices the
// key's check. Checks (src/config/key.hpp) say what other values are allowed:
//   zero.add("inter_node_gradient_bits", &ZeroConfig::inter_node_gradient_bits, "...", {one_of({4, 8})});
// Test-only keys (fault injection) use test_only(): accepted, never shown.
// After adding a key run scripts/readme-keys (README.md's table); the config
// test runs every key's checks on its default, which catches a check of the
// wrong type (e.g. one_of({4, 8}) on a string).
// Rules between keys (heads dividing n_embd, ...) are in src/config/validate.cpp.
#include <type_traits>

#include "src/base/errors.hpp"
#include "src/config/key.hpp"
#include "src/config/key_value.hpp"

namespace zeropp {

namespace {

template <class T>
KeyType type_of() {
  if constexpr (std::is_same_v<T, int>)
    return KeyType::Int;
  else if constexpr (std::is_same_v<T, int64_t>)
    return KeyType::Int64;
  else if constexpr (std::is_same_v<T, double>)
    return KeyType::Float;
  else if constexpr (std::is_same_v<T, bool>)
    return KeyType::Bool;
  else if constexpr (std::is_same_v<T, std::string>)
    return KeyType::String;
  else
    return KeyType::StringList;
}

template <class T>
KeyValue to_value(const T& v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return KeyValue(int64_t(v));
  else
    return KeyValue(v);
}

template <class T>
T from_value(const KeyValue& v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(std::get<int64_t>(v));  // store() has range-checked Int keys
  else
    return std::get<T>(v);
}

// Adds the keys of one section (struct S, the member `sec` of Config).
template <class S>
struct Section {
  std::vector<Key>& table;
  const char* name;
  S Config::*sec;

  template <class T>
  void add(const char* key, T S::*field, const char* help, std::vector<KeyCheck> checks = {},
           bool hidden = false) {
    if constexpr (std::is_enum_v<T>)
      add_enum(key, field, help, std::move(checks), hidden);
    else
      add_plain(key, field, help, std::move(checks), hidden);
  }
  template <class T>
  void add_plain(const char* key, T S::*field, const char* help, std::vector<KeyCheck> checks, bool hidden) {
    static_assert(std::is_same_v<T, int> || std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
                      std::is_same_v<T, bool> || std::is_same_v<T, std::string> ||
                      std::is_same_v<T, std::vector<std::string>>,
                  "a key's field is int, int64_t, double, bool, std::string or std::vector<std::string>");
    const auto s = sec;
    table.push_back(Key{name, key, type_of<T>(), help, std::move(checks), hidden,
                        [s, field](const Config& c) { return to_value(c.*s.*field); },
                        [s, field](Config& c, const KeyValue& v) { c.*s.*field = from_value<T>(v); }});
  }
  // An enum: its deck spellings are the key's first check, enforced as the
  // value is stored, since a field of enum type cannot hold another.
  template <class E>
  void add_enum(const char* key, E S::*field, const char* help, std::vector<KeyCheck> checks, bool hidden) {
    std::vector<std::string> names;
    for (const auto& n : deck_names(E{})) names.push_back(n.name);
    checks.insert(checks.begin(), one_of(names));
    const auto s = sec;
    const std::string full = std::string(name) + "." + key, rule = checks.front().rule;
    table.push_back(Key{name, key, KeyType::String, help, std::move(checks), hidden,
                        [s, field](const Config& c) { return KeyValue(std::string(deck_name(c.*s.*field))); },
                        [s, field, full, rule](Config& c, const KeyValue& v) {
                          const std::optional<E> e = deck_value<E>(std::get<std::string>(v));
                          if (!e) throw Error(full + " = " + toml_text(v) + ": must be " + rule);
                          c.*s.*field = *e;
                        }});
  }
  template <class T>
  void test_only(const char* key, T S::*field, const char* help) {
    add(key, field, help, {}, true);
  }
};

// The [model] keys.
void add_model_keys(std::vector<Key>& t) {
  Section<ModelConfig> model{t, "model", &Config::model};
  model.add("vocab_size", &ModelConfig::vocab_size, "V: tokens in the vocabulary (token files hold uint16)",
            {in_range(1, 65536)});
  model.add("max_seq_len", &ModelConfig::max_seq_len, "rows of the position table", {positive()});
  model.add("n_layer", &ModelConfig::n_layer, "L: transformer blocks", {positive()});
  model.add("n_head", &ModelConfig::n_head, "H: attention heads (divides n_embd)", {positive()});
  model.add("n_embd", &ModelConfig::n_embd, "C: embedding width", {positive()});
  model.add("family", &ModelConfig::family,
            "gpt2, or llama (RMSNorm, rotary positions, SwiGLU, untied head; src/models/README.md)");
  model.add("ffn_hidden", &ModelConfig::ffn_hidden, "llama's SwiGLU hidden size (0: 4·n_embd)",
            {non_negative()});
  model.add("recompute", &ModelConfig::recompute,
            "activation recomputation: none (keep every block's activations), or layer (keep each block's "
            "input, rerun the block's forward just before its backward: bitwise the same gradients, about "
            "a fifth more compute, no extra communication)");
}

// The [train] keys.
void add_train_keys(std::vector<Key>& t) {
  Section<TrainConfig> train{t, "train", &Config::train};
  train.add("batch_size", &TrainConfig::batch_size, "B: sequences per micro-batch per rank", {positive()});
  train.add("seq_len", &TrainConfig::seq_len, "T: tokens per sequence (<= model.max_seq_len)", {positive()});
  train.add("grad_accum", &TrainConfig::grad_accum, "A: micro-batches per optimizer step", {positive()});
  train.add("steps", &TrainConfig::steps, "optimizer steps", {non_negative()});
  train.add("seed", &TrainConfig::seed, "initialisation, shuffling, sampling");
  train.add("val_every", &TrainConfig::val_every, "validation every N steps (0: only at the end)",
            {non_negative()});
  train.add("val_batches", &TrainConfig::val_batches, "micro-batches per rank per validation",
            {non_negative()});
  train.add("sample_tokens", &TrainConfig::sample_tokens, "tokens of the sample printed at the end (0: none)",
            {non_negative()});
  train.add("sample_prompt", &TrainConfig::sample_prompt, "the sample's prompt");
  train.add("out_dir", &TrainConfig::out_dir, "run folder (config.toml, train.log, metrics.h5, checkpoints/)",
            {not_empty()});
  train.add("max_runtime", &TrainConfig::max_runtime,
            "seconds: save and stop (status 3) before this much wall time has passed (0: no limit)",
            {non_negative()});
  train.add("precision", &TrainConfig::precision,
            "operands of the model's matrix products: fp32, or bf16 with fp32 accumulation (oneDNN: not in "
            "builds configured with ZEROPP_WITH_ONEDNN=OFF; master weights, Adam moments, norms, softmax and "
            "loss stay fp32)");
  train.add("threads", &TrainConfig::threads,
            "threads per rank of the GEMM libraries (OpenBLAS, oneDNN) and of the elementwise kernels "
            "(OpenMP; bitwise the same results on any count). 0: the libraries' own settings "
            "(OPENBLAS_NUM_THREADS, OMP_NUM_THREADS), elementwise kernels on one thread",
            {non_negative()});
  train.add(
      "batched_gemm", &TrainConfig::batched_gemm,
      "kernel of the attention's batched fp32 GEMMs: auto (oneDNN's matmul where oneDNN has AVX-512 and the "
      "GEMMs run one thread, else the BLAS), blas (one call per product) or onednn (not in builds "
      "configured with ZEROPP_WITH_ONEDNN=OFF)");
  train.add("device", &TrainConfig::device,
            "where the step computes: host (the CPU), or cuda (one GPU per rank, chosen by the rank's index "
            "among the processes on its machine, also with emulated nodes; weights, activations, gradients "
            "and optimizer states in device memory; a CUDA build; "
            "comm.backend nccl, or mpi with comm.device_staging = true). zeropp train only");
  train.add("tf32", &TrainConfig::tf32,
            "fp32 GEMMs on TF32 tensor cores (10-bit mantissa inputs, fp32 accumulation); cuBLAS only, so "
            "train.device = \"cuda\"");
}

// The [optim] keys.
void add_optim_keys(std::vector<Key>& t) {
  Section<OptimConfig> optim{t, "optim", &Config::optim};
  optim.add("lr", &OptimConfig::lr, "peak learning rate: linear warm-up, then cosine decay to min_lr",
            {non_negative(), finite()});
  optim.add("min_lr", &OptimConfig::min_lr, "floor of the cosine decay (<= lr)", {non_negative()});
  optim.add("warmup_steps", &OptimConfig::warmup_steps, "steps of linear warm-up", {non_negative()});
  optim.add("weight_decay", &OptimConfig::weight_decay, "AdamW (decoupled), matrices and embeddings only",
            {non_negative()});
  optim.add("beta1", &OptimConfig::beta1, "Adam's first-moment decay", {in_unit_interval()});
  optim.add("beta2", &OptimConfig::beta2, "Adam's second-moment decay", {in_unit_interval()});
  optim.add("eps", &OptimConfig::eps, "Adam's epsilon", {positive()});
  optim.add("grad_clip", &OptimConfig::grad_clip, "global-norm clipping (0: off)", {non_negative()});
}

// The [data] keys.
void add_data_keys(std::vector<Key>& t) {
  Section<DataConfig> data{t, "data", &Config::data};
  data.add("train", &DataConfig::train, "training token files: paths or globs, read as one sequence",
           {not_empty(), no_commas()});
  data.add("val", &DataConfig::val, "validation token files (empty: no validation)", {no_commas()});
  data.add("shuffle", &DataConfig::shuffle, "visit the file's windows in a seeded order per epoch");
}

// The [log] keys.
void add_log_keys(std::vector<Key>& t) {
  Section<LogConfig> log{t, "log", &Config::log};
  log.add("every", &LogConfig::every, "print one line every N steps", {positive()});
}

// The [zero] keys.
void add_zero_keys(std::vector<Key>& t) {
  Section<ZeroConfig> zero{t, "zero", &Config::zero};
  zero.add("ranks_per_node", &ZeroConfig::ranks_per_node,
           "0: detect nodes (MPI_COMM_TYPE_SHARED); X: emulate nodes of X ranks (rank = node*X + local)",
           {non_negative()});
  zero.add("comm_dtype", &ZeroConfig::comm_dtype, "dtype of gathered weights and reduced gradients");
  zero.add("quantized_weights", &ZeroConfig::quantized_weights,
           "qwZ: the weight all-gathers send each slice blockwise-quantized");
  zero.add(
      "weight_format", &ZeroConfig::weight_format,
      "qwZ element: int (symmetric integers of weight_bits) or fp8 (e4m3, 8 bits, the error relative per "
      "element)");
  zero.add("weight_bits", &ZeroConfig::weight_bits, "qwZ width", {one_of({8, 4})});
  zero.add("weight_block", &ZeroConfig::weight_block, "qwZ elements per fp32 scale", {power_of_two()});
  zero.add("quantized_weights_backward", &ZeroConfig::quantized_weights_backward,
           "qwZ also in the backward's gathers, so that forward and backward use the same weights (false: "
           "the backward gathers in comm_dtype)");
  zero.add("hpz_partition_size", &ZeroConfig::hpz_partition_size,
           "hpZ: 1 off, 0 the node, a: groups of a consecutive ranks (a divides P)", {non_negative()});
  zero.add("quantized_gradients", &ZeroConfig::quantized_gradients,
           "qgZ: two-hop all-to-all int4 gradient reduce-scatter");
  zero.add("gradient_block", &ZeroConfig::gradient_block, "qgZ elements per fp32 scale", {power_of_two()});
  zero.add("intra_node_gradient_bits", &ZeroConfig::intra_node_gradient_bits,
           "qgZ's first hop (inside the node): 4, or 8 (SDP4Bit)", {one_of({4, 8})});
  zero.add("inter_node_gradient_bits", &ZeroConfig::inter_node_gradient_bits,
           "qgZ's second hop (across nodes; with one rank per node its only hop): 4 or 8", {one_of({4, 8})});
  zero.add("gradient_error_feedback", &ZeroConfig::gradient_error_feedback,
           "qgZ's per-hop error compensation (LoCo; needs quantized_gradients)");
  zero.add("error_feedback_beta", &ZeroConfig::error_feedback_beta, "decay of the error feedback",
           {in_unit_interval()});
  zero.add("error_feedback_reset", &ZeroConfig::error_feedback_reset,
           "zero the error-feedback buffers every N steps", {positive()});
  zero.add("prefetch_depth", &ZeroConfig::prefetch_depth,
           "units gathered ahead of the one computing (each a gather slot); 0: gather when acquired",
           {in_range(0, 8)});
  zero.add("overlap", &ZeroConfig::overlap,
           "gradient reduce-scatter (qgZ: its hops) in flight during the next unit's backward, collectives "
           "progressed between kernels (false: reduced in place, progressed at unit boundaries)");
  zero.add(
      "inference_weights", &ZeroConfig::inference_weights,
      "generation's weights: zero3 gathers every unit per use; full gathers every unit once into an fp32 "
      "copy on every rank (4 bytes per parameter); hpz gathers once into the hpZ group "
      "(hpz_partition_size, the node when 0 or 1), then inside it; int8/int4 build a quantized full copy "
      "once (weight_block); hpz+int8/hpz+int4 partition that copy over the hpZ group");
}

// The [checkpoint] keys.
void add_checkpoint_keys(std::vector<Key>& t) {
  Section<CheckpointConfig> ckpt{t, "checkpoint", &Config::checkpoint};
  ckpt.add("dir", &CheckpointConfig::dir, "where checkpoints go (\"\": checkpoints/ in train.out_dir)");
  ckpt.add("every", &CheckpointConfig::every, "save every N steps (0: only at the end and on signals)",
           {non_negative()});
  ckpt.add("keep", &CheckpointConfig::keep, "keep the newest K checkpoints (0: all)", {non_negative()});
  ckpt.add("at_start", &CheckpointConfig::at_start, "also save before the first step");
  ckpt.add("at_end", &CheckpointConfig::at_end, "save after the last step");
  ckpt.add(
      "async", &CheckpointConfig::async,
      "copy the state into host memory (as much as this rank's weights, Adam moments and error feedback) "
      "and write it on a background thread while training goes on; at most one save in flight");
  ckpt.add(
      "timeout_s", &CheckpointConfig::timeout_s,
      "a save, resume or weights read that takes longer (a rank or node lost inside its collective I/O, "
      "which comm.timeout_s does not see) ends the job with a message; the last complete checkpoint stays",
      {positive()});
  ckpt.test_only("fault_kill_rank", &CheckpointConfig::fault_kill_rank, "this rank is killed during a save");
  ckpt.test_only("fault_kill_step", &CheckpointConfig::fault_kill_step, "... in the save at this step");
  ckpt.test_only("fault_kill_after", &CheckpointConfig::fault_kill_after, "... after this many datasets");
  ckpt.test_only("fault_stall", &CheckpointConfig::fault_stall, "... or instead hangs there");
}

// The [comm] keys.
void add_comm_keys(std::vector<Key>& t) {
  Section<CommConfig> comm{t, "comm", &Config::comm};
  comm.add(
      "backend", &CommConfig::backend,
      "collectives through mpi (host buffers) or nccl (device buffers: a CUDA build and a GPU per rank); "
      "auto: nccl where both hold and the engine's buffers are on the device (train.device = cuda), else "
      "mpi");
  comm.add("device_staging", &CommConfig::device_staging,
           "mpi backend over device buffers: copy them through pinned host memory around each collective "
           "(MPI without CUDA support, or ranks sharing a GPU); needs a CUDA build and a device");
  comm.add("timeout_s", &CommConfig::timeout_s,
           "a collective that takes longer aborts the job with a message", {positive()});
  comm.add("internode_gbps", &CommConfig::internode_gbps,
           "emulated inter-node link bandwidth (Gbit/s per rank, shared by its messages; 0: unlimited)",
           {non_negative()});
  comm.add("internode_latency_us", &CommConfig::internode_latency_us,
           "emulated inter-node latency per message (microseconds; 0: none)", {non_negative()});
  comm.add("intranode_gbps", &CommConfig::intranode_gbps,
           "emulated intra-node link bandwidth (Gbit/s per rank, shared by its messages; 0: unlimited)",
           {non_negative()});
  comm.add("intranode_latency_us", &CommConfig::intranode_latency_us,
           "emulated intra-node latency per message (microseconds; 0: none)", {non_negative()});
  comm.test_only("fault_stall_rank", &CommConfig::fault_stall_rank, "this rank stalls forever");
  comm.test_only("fault_stall_step", &CommConfig::fault_stall_step,
                 "... before its first collective of this step");
}

// The [rlhf] keys.
void add_rlhf_keys(std::vector<Key>& t) {
  Section<RlhfConfig> rlhf{t, "rlhf", &Config::rlhf};
  rlhf.add(
      "init_from", &RlhfConfig::init_from,
      "zeropp rlhf: checkpoint whose weights start the actor and its frozen reference (\"\": train.seed's "
      "initialisation)");
  rlhf.add("prompts", &RlhfConfig::prompts, "token files the prompts are cut from (empty: data.train)",
           {no_commas()});
  rlhf.add("batch_size", &RlhfConfig::batch_size, "prompts per rank per iteration", {positive()});
  rlhf.add("prompt_len", &RlhfConfig::prompt_len, "tokens per prompt", {positive()});
  rlhf.add("completion_len", &RlhfConfig::completion_len,
           "tokens sampled after each prompt (prompt_len + completion_len - 1 <= model.max_seq_len)",
           {positive()});
  rlhf.add("temperature", &RlhfConfig::temperature, "sampling temperature", {positive(), finite()});
  rlhf.add("beta", &RlhfConfig::beta, "weight of the per-token KL penalty to the frozen reference",
           {non_negative(), finite()});
  rlhf.add("lr", &RlhfConfig::lr, "constant AdamW learning rate of the actor", {non_negative(), finite()});
  rlhf.add("iterations", &RlhfConfig::iterations, "rounds of generate, score, update", {non_negative()});
  rlhf.add("reward_word", &RlhfConfig::reward_word,
           "the reward is the number of its occurrences in a completion's bytes", {not_empty()});
  rlhf.add("reward_clip", &RlhfConfig::reward_clip, "occurrences beyond this many earn nothing",
           {positive()});
}

std::vector<Key> build_table() {
  std::vector<Key> t;
  add_model_keys(t);
  add_train_keys(t);
  add_optim_keys(t);
  add_data_keys(t);
  add_log_keys(t);
  add_zero_keys(t);
  add_checkpoint_keys(t);
  add_comm_keys(t);
  add_rlhf_keys(t);
  return t;
}

}  // namespace

const std::vector<Key>& config_table() {
  static const std::vector<Key> table = build_table();
  return table;
}

const Key* find_key(const std::string& full_name) {
  for (const auto& k : config_table())
    if (k.full_name() == full_name) return &k;
  return nullptr;
}

}  // namespace zeropp
