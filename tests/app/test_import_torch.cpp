// `zeropp ckpt import` of a GPT-2 saved as Hugging Face does (transformer.
// prefix, attention-mask buffers, tied lm_head) and as llm.c does (matrices
// [out, in], padded vocabulary); tests/torch/gpt2_safetensors.py makes both
// with the same random weights, and PyTorch's next-token probabilities. Read
// back from the HDF5 checkpoint, each gives PyTorch's probabilities (softmax
// of the logits) and loss within 1e-5 relative, through the forward and
// through generation's KV-cache decode alike.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/checkpoint/checkpoint.hpp"
#include "models/full_weights.hpp"
#include "src/app/ckpt_convert.hpp"
#include "src/models/gpt2/gpt2.hpp"

using namespace zeropp;
using test::FullWeights;

namespace {

struct ImportReference {
  int B = 0, T = 0, V = 0;
  std::vector<int32_t> tokens, targets;
  std::vector<double> probs;
  double loss = 0;
};

ImportReference load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) FAIL("cannot open " << path << " (run the torch_import_dump test first)");
  auto bytes = [&](void* p, size_t n) {
    if (!f.read(static_cast<char*>(p), std::streamsize(n))) FAIL(path << " ends early");
  };
  char magic[8];
  bytes(magic, 8);
  REQUIRE(std::memcmp(magic, "ZPPIMP01", 8) == 0);
  ImportReference r;
  int32_t h[3];
  bytes(h, sizeof h);
  r.B = h[0], r.T = h[1], r.V = h[2];
  const size_t n = size_t(r.B) * size_t(r.T);
  r.tokens.resize(n);
  r.targets.resize(n);
  r.probs.resize(n * size_t(r.V));
  bytes(r.tokens.data(), n * 4);
  bytes(r.targets.data(), n * 4);
  bytes(r.probs.data(), r.probs.size() * 8);
  bytes(&r.loss, 8);
  bytes(magic, 8);
  REQUIRE(std::memcmp(magic, "ZPPIEND1", 8) == 0);
  return r;
}

// Imports `source`, runs our forward on the reference batch, compares.
void check_import(const std::string& source, WeightsFormat format, const ImportReference& ref) {
  const std::string h5 = (std::filesystem::temp_directory_path() / "zeropp_import_torch.h5").string();
  std::filesystem::remove(h5);
  INFO(import_weights(source, format, h5, {}));

  // The checkpoint's model, read the way a run reads it (whole tensors on one process).
  const CheckpointMeta meta = read_checkpoint(MPI_COMM_SELF, h5, {});
  const ModelConfig cfg = parse_config_text(meta.deck_toml, h5).model;
  REQUIRE(cfg.vocab_size == ref.V);
  GPT<float> model(cfg, ref.B, ref.T);
  const ParamLayout& layout = model.layout();
  FullWeights<float> w(model, 1);
  ShardGroups groups = {{"model", {}}};
  for (size_t u = 0; u < layout.units.size(); ++u)
    for (const ParamSpec& p : layout.units[u].params)
      groups[0].second.push_back({p.name, p.shape, 0, p.numel, w.w[u].data() + p.offset});
  read_checkpoint(MPI_COMM_SELF, h5, groups);
  std::filesystem::remove(h5);

  const int n = ref.B * ref.T;
  model.forward(CVec<int32_t>(ref.tokens.data(), n), CVec<int32_t>(nullptr, 0), ref.B, ref.T, w);
  const CVec<float> probs = model.probs();
  REQUIRE(size_t(probs.size()) == ref.probs.size());
  double worst = 0;
  for (size_t i = 0; i < ref.probs.size(); ++i) {
    const double err = std::abs(double(probs(int64_t(i))) - ref.probs[i]) / ref.probs[i];
    worst = std::max(worst, err);
    if (!(err <= 1e-5))  // also catches NaN
      FAIL("probability " << i << ": ours " << probs(int64_t(i)) << ", torch " << ref.probs[i]
                          << " (relative error " << err << ")");
  }
  // Generation's path: a prefill of 4 tokens, then one token at a time with the KV cache.
  model.decode_reset(ref.B);
  double worst_decode = 0;
  std::vector<int32_t> step(size_t(ref.B) * ref.T);
  for (int pos = 0, Tn = 4; pos < ref.T; pos += Tn, Tn = 1) {
    for (int b = 0; b < ref.B; ++b)
      for (int t = 0; t < Tn; ++t) step[size_t(b * Tn + t)] = ref.tokens[size_t(b * ref.T + pos + t)];
    const CVec<float> logits = model.decode(CVec<int32_t>(step.data(), ref.B * Tn), ref.B, Tn, pos, w);
    for (int b = 0; b < ref.B; ++b) {
      const float* l = logits.data() + int64_t(b) * ref.V;
      double mx = l[0], z = 0;
      for (int v = 0; v < ref.V; ++v) mx = std::max(mx, double(l[v]));
      for (int v = 0; v < ref.V; ++v) z += std::exp(double(l[v]) - mx);
      for (int v = 0; v < ref.V; ++v) {
        const double want = ref.probs[(size_t(b) * ref.T + size_t(pos + Tn - 1)) * ref.V + size_t(v)];
        const double err = std::abs(std::exp(double(l[v]) - mx) / z - want) / want;
        worst_decode = std::max(worst_decode, err);
        if (!(err <= 1e-5))
          FAIL("decode: sequence " << b << " position " << pos + Tn - 1 << " token " << v
                                   << ": relative error " << err);
      }
    }
  }
  WARN(source << ": decode with the KV cache, worst probability relative error " << worst_decode);
  const double loss = model.forward(CVec<int32_t>(ref.tokens.data(), n), CVec<int32_t>(ref.targets.data(), n),
                                    ref.B, ref.T, w);
  WARN(source << ": worst probability relative error " << worst << "; loss " << loss << " vs torch "
              << ref.loss);
  CHECK(std::abs(loss - ref.loss) / ref.loss <= 1e-5);
}

}  // namespace

TEST_CASE("imported GPT-2 (safetensors, llm.c) gives PyTorch's probabilities", "[torch-import]") {
  const char* dir = std::getenv("ZEROPP_TORCH_IMPORT");
  if (!dir)
    FAIL("ZEROPP_TORCH_IMPORT is not set: point it at the folder tests/torch/gpt2_safetensors.py writes");
  const ImportReference ref = load(std::string(dir) + "/reference.bin");
  check_import(dir, WeightsFormat::kSafetensors, ref);
  check_import(std::string(dir) + "/gpt2_llmc.bin", WeightsFormat::kLlmc, ref);
}
