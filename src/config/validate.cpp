// Validation: each key's own checks (the table), then the rules between keys.
#include "src/base/build_features.hpp"
#include "src/base/errors.hpp"
#include "src/config/config.hpp"
#include "src/config/key_value.hpp"

namespace zeropp {

namespace {

constexpr const char* kNoOneDnn =
    "needs oneDNN, and this build has none (configured with -DZEROPP_WITH_ONEDNN=OFF)";

// A rule between keys (or between a key and the build), reported against `key`.
struct Rule {
  const char* key;
  bool (*ok)(const Config&);
  std::string (*why)(const Config&);
};

const Rule kRules[] = {
    {"model.n_head", [](const Config& c) { return c.model.n_embd % c.model.n_head == 0; },
     [](const Config& c) { return "must divide model.n_embd = " + std::to_string(c.model.n_embd); }},
    {"model.n_head",
     [](const Config& c) {
       return c.model.family != ModelFamily::Llama || (c.model.n_embd / c.model.n_head) % 2 == 0;
     },
     [](const Config& c) {
       return "must leave an even head size for llama's rotary positions (model.n_embd = " +
              std::to_string(c.model.n_embd) + ")";
     }},
    {"train.seq_len", [](const Config& c) { return c.train.seq_len <= c.model.max_seq_len; },
     [](const Config& c) {
       return "is longer than the position table (model.max_seq_len = " +
              std::to_string(c.model.max_seq_len) + ")";
     }},
    {"optim.min_lr", [](const Config& c) { return c.optim.min_lr <= c.optim.lr; },
     [](const Config& c) { return "must not exceed optim.lr = " + toml_text(c.optim.lr); }},
    {"zero.weight_format",
     [](const Config& c) { return c.zero.weight_format != WeightFormat::FP8 || c.zero.weight_bits == 8; },
     [](const Config& c) {
       return "needs zero.weight_bits = 8 (an e4m3 element is one byte), not " +
              std::to_string(c.zero.weight_bits);
     }},
    {"zero.gradient_error_feedback",
     [](const Config& c) { return !c.zero.gradient_error_feedback || c.zero.quantized_gradients; },
     [](const Config&) { return std::string("needs zero.quantized_gradients = true"); }},
    // Required, not implied: the copies through host memory cost time, so the deck says so.
    {"comm.device_staging",
     [](const Config& c) {
       return c.train.device != Device::Cuda || c.comm.backend != CommBackend::Mpi || c.comm.device_staging;
     },
     [](const Config&) {
       return std::string(
           "train.device = \"cuda\" with comm.backend = \"mpi\" needs true (MPI gets the device buffers "
           "through pinned host copies), or use comm.backend = \"nccl\"");
     }},
    // The recompute runs on the backward's weights: they must be the forward's.
    {"model.recompute",
     [](const Config& c) {
       return c.model.recompute == Recompute::None || !c.zero.quantized_weights ||
              c.zero.quantized_weights_backward;
     },
     [](const Config&) {
       return std::string(
           "needs the backward to gather the forward's weights: with zero.quantized_weights, keep "
           "zero.quantized_weights_backward = true");
     }},
    {"train.tf32", [](const Config& c) { return !c.train.tf32 || c.train.device == Device::Cuda; },
     [](const Config&) { return std::string("applies to cuBLAS only: needs train.device = \"cuda\""); }},
    // Refused, never replaced: a deck asking for oneDNN's kernels gets them or stops.
    {"train.precision",
     [](const Config& c) { return c.train.precision != Precision::BF16 || onednn_in_build(); },
     [](const Config&) { return std::string(kNoOneDnn) + "; use \"fp32\""; }},
    {"train.batched_gemm",
     [](const Config& c) { return c.train.batched_gemm != BatchedKernel::OneDnn || onednn_in_build(); },
     [](const Config&) { return std::string(kNoOneDnn) + "; use \"auto\" or \"blas\""; }},
};

[[noreturn]] void invalid(const Key& k, const Config& c, const std::string& why) {
  throw Error("invalid configuration: " + k.full_name() + " = " + toml_text(k.get(c)) + ": " + why);
}

}  // namespace

void validate(const Config& c) {
  for (const auto& k : config_table())
    for (const auto& check : k.checks)
      if (!check.ok(k.get(c))) invalid(k, c, "must be " + check.rule);
  for (const auto& r : kRules)
    if (!r.ok(c)) invalid(*find_key(r.key), c, r.why(c));
}

}  // namespace zeropp
