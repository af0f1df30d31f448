#include "src/app/ckpt_convert.hpp"

#include <mpi.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"
#include "io/files/atomic_file.hpp"
#include "io/interop/llmc_model.hpp"
#include "io/interop/safetensors.hpp"
#include "src/base/errors.hpp"
#include "src/config/config.hpp"
#include "src/config/hf_config.hpp"
#include "src/models/gpt2/gpt2_interop.hpp"
#include "src/models/gpt2/gpt2_layout.hpp"
#include "src/models/param_layout.hpp"
#include "src/run/build_info.hpp"

namespace zeropp {

namespace {

namespace fs = std::filesystem;

// A GPT-2's weights by Hugging Face name, each row-major in Hugging Face's shape.
struct Weights {
  ModelConfig model;
  std::map<std::string, std::vector<float>> t;
};

// Safetensors and llm.c files hold GPT-2s: another family is refused, not mislabelled.
ParamLayout gpt2_only_layout(const ModelConfig& m) {
  if (m.family != ModelFamily::Gpt2)
    throw Error("ckpt import/export: model.family = \"" + std::string(deck_name(m.family)) +
                "\": only the gpt2 family converts to safetensors and llm.c files");
  return gpt2_layout(m);
}

std::string describe(const ModelConfig& m) {
  return "V=" + std::to_string(m.vocab_size) + " T=" + std::to_string(m.max_seq_len) +
         " L=" + std::to_string(m.n_layer) + " H=" + std::to_string(m.n_head) +
         " C=" + std::to_string(m.n_embd);
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

void refuse_existing(const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec)) throw Error(path + ": exists; remove it or choose another name");
}

// out[c][r] = in[r][c] for in of shape [rows, cols].
void transpose(const float* in, int64_t rows, int64_t cols, float* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

// wte with `rows` rows: rows beyond it dropped, missing ones zero.
void resize_vocab(Weights& w, int rows) {
  w.t.at("wte.weight").resize(size_t(rows) * size_t(w.model.n_embd), 0.0f);
  w.model.vocab_size = rows;
}

// --- Hugging Face ------------------------------------------------------------

Weights read_safetensors_weights(const std::string& source, int* skipped) {
  std::error_code ec;
  const std::string file =
      fs::is_directory(source, ec) ? (fs::path(source) / "model.safetensors").string() : source;
  const fs::path dir = fs::path(file).parent_path();
  const std::string config = ((dir.empty() ? fs::path(".") : dir) / "config.json").string();
  const std::string where = "safetensors file " + file;
  Weights w;
  w.model = read_hf_config(config);
  const SafetensorsHeader h = read_safetensors_header(file);
  const std::string lm = gpt2::kHfPrefix;
  const std::string prefix = h.find("wte.weight") ? "" : h.find(lm + "wte.weight") ? lm : "-";
  if (prefix == "-") throw Error(where + ": no tensor 'wte.weight' or '" + lm + "wte.weight': not a GPT-2");
  const ParamLayout layout = gpt2_only_layout(w.model);
  const SafetensorsEntry* lm_head = nullptr;
  *skipped = 0;
  for (const SafetensorsEntry& e : h.tensors) {
    if (e.name == gpt2::kHfLmHead || e.name == prefix + gpt2::kHfLmHead) {
      lm_head = &e;
      continue;
    }
    const std::string n = e.name.rfind(prefix, 0) == 0 ? e.name.substr(prefix.size()) : "";
    if (gpt2::is_hf_attention_buffer(n)) {
      ++*skipped;
      continue;
    }
    const ParamSpec* p = layout.find(n);
    if (!p)
      throw Error(where + ": tensor '" + e.name + "' is not a parameter of a GPT-2 with " +
                  describe(w.model) + " (" + config + ")");
    if (e.shape != p->shape)
      throw Error(where + ": tensor '" + e.name + "' has shape " + shape_text(e.shape) + "; " + config +
                  " implies " + shape_text(p->shape));
    w.t[n] = read_safetensors_tensor(file, h, e);
  }
  for (const UnitSpec& u : layout.units)
    for (const ParamSpec& p : u.params)
      if (!w.t.count(p.name)) throw Error(where + ": tensor '" + prefix + p.name + "' missing");
  if (lm_head) {
    const std::vector<float> head = read_safetensors_tensor(file, h, *lm_head);
    const std::vector<float>& wte = w.t.at("wte.weight");
    if (lm_head->shape != layout.find("wte.weight")->shape ||
        std::memcmp(head.data(), wte.data(), wte.size() * sizeof(float)) != 0)
      throw Error(where + ": lm_head.weight differs from wte.weight (zeropp's LM head is tied to wte)");
  }
  return w;
}

void write_safetensors_weights(const Weights& w, const std::string& out) {
  const fs::path dir = fs::path(out).parent_path();
  const std::string config = ((dir.empty() ? fs::path(".") : dir) / "config.json").string();
  refuse_existing(out);
  refuse_existing(config);
  const ParamLayout layout = gpt2_only_layout(w.model);
  std::vector<SafetensorsTensor> tensors;
  for (const UnitSpec& u : layout.units)
    for (const ParamSpec& p : u.params) tensors.push_back({p.name, p.shape, w.t.at(p.name).data()});
  write_safetensors(out, tensors, {{"format", "pt"}});
  const std::string text = hf_config_text(w.model);
  AtomicFile f(config);
  f.write(text.data(), text.size());
  f.commit();
}

// --- llm.c ---------------------------------------------------------------------

// Calls f(k, l, our name, llm.c's pointer offset in array k) for every tensor of every layer.
template <class F>
void for_each_llmc_tensor(const LlmcHeader& h, const ParamLayout& layout, F&& f) {
  const std::vector<LlmcArray> arrays = llmc_array_shapes(h);
  for (size_t k = 0; k < arrays.size(); ++k) {
    const gpt2::LlmcArrayName& n = gpt2::llmc_arrays().at(k);
    if (arrays[k].name != n.llmc) throw Error(std::string("internal: llm.c array order: ") + n.llmc);
    if (!n.per_layer) {
      f(k, *layout.find(n.name), 0);
      continue;
    }
    for (int l = 0; l < h.n_layer; ++l) {
      const ParamSpec& p = *layout.find("h." + std::to_string(l) + "." + n.name);
      f(k, p, int64_t(l) * p.numel);
    }
  }
}

Weights from_llmc(const LlmcModel& m) {
  const LlmcHeader& h = m.header;
  Weights w;
  w.model = {h.padded_vocab_size, h.max_seq_len, h.n_layer, h.n_head, h.n_embd};  // every wte row, for now
  const ParamLayout layout = gpt2_only_layout(w.model);
  for_each_llmc_tensor(h, layout, [&](size_t k, const ParamSpec& p, int64_t at) {
    std::vector<float>& dst = w.t[p.name];
    dst.resize(size_t(p.numel));
    const float* src = m.arrays[k].data() + at;
    if (gpt2::llmc_arrays()[k].transposed)
      transpose(src, p.shape[1], p.shape[0], dst.data());  // llm.c's [out, in] = ours [in, out]^T
    else
      std::memcpy(dst.data(), src, dst.size() * sizeof(float));
  });
  return w;
}

LlmcModel to_llmc(Weights w, int header_vocab, bool bf16) {
  LlmcModel m;
  LlmcHeader& h = m.header;
  h.version = bf16 ? kLlmcVersionBF16 : kLlmcVersionF32;
  h.max_seq_len = w.model.max_seq_len;
  h.vocab_size = header_vocab;
  h.n_layer = w.model.n_layer;
  h.n_head = w.model.n_head;
  h.n_embd = w.model.n_embd;
  h.padded_vocab_size = (w.model.vocab_size + 127) / 128 * 128;  // llm.c's padding
  resize_vocab(w, h.padded_vocab_size);
  const ParamLayout layout = gpt2_only_layout(w.model);  // wte with Vp rows, as in the file
  for (const LlmcArray& a : llmc_array_shapes(h)) {
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    m.arrays.emplace_back(size_t(n));
  }
  for_each_llmc_tensor(h, layout, [&](size_t k, const ParamSpec& p, int64_t at) {
    const std::vector<float>& src = w.t.at(p.name);
    float* dst = m.arrays[k].data() + at;
    if (gpt2::llmc_arrays()[k].transposed)
      transpose(src.data(), p.shape[0], p.shape[1], dst);
    else
      std::memcpy(dst, src.data(), size_t(p.numel) * sizeof(float));
  });
  return m;
}

// --- our checkpoints -------------------------------------------------------------

ShardGroups model_group(Weights& w) {
  const ParamLayout layout = gpt2_only_layout(w.model);
  ShardGroups g = {{"model", {}}};
  for (const UnitSpec& u : layout.units)
    for (const ParamSpec& p : u.params) {
      std::vector<float>& v = w.t[p.name];
      v.resize(size_t(p.numel));
      g[0].second.push_back({p.name, p.shape, 0, p.numel, v.data()});
    }
  return g;
}

void write_weights_checkpoint(Weights& w, const std::string& out, const std::string& source) {
  Config cfg;
  cfg.model = w.model;
  CheckpointMeta meta;
  meta.deck_toml = "# imported from " + source + " by zeropp ckpt import\n" + to_toml(cfg);
  meta.code_version = version_line();
  write_checkpoint_file(MPI_COMM_SELF, out, model_group(w), meta);
}

Weights read_weights_checkpoint(const std::string& path) {
  const CheckpointMeta meta = read_checkpoint(MPI_COMM_SELF, path, {});
  Weights w;
  w.model = parse_config_text(meta.deck_toml, path + " (saved deck)").model;
  read_checkpoint(MPI_COMM_SELF, path, model_group(w));
  return w;
}

}  // namespace

WeightsFormat weights_format_of(const std::string& path) {
  std::error_code ec;
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".safetensors" || fs::is_directory(path, ec)) return WeightsFormat::kSafetensors;
  if (ext == ".bin") return WeightsFormat::kLlmc;
  throw Error(path + ": cannot tell the format from the name (.safetensors or .bin): give --format");
}

WeightsFormat parse_weights_format(const std::string& name) {
  if (name == "safetensors") return WeightsFormat::kSafetensors;
  if (name == "llmc") return WeightsFormat::kLlmc;
  throw Error("--format " + name + ": expected safetensors or llmc");
}

std::string import_weights(const std::string& source, WeightsFormat format, const std::string& out,
                           const ImportOptions& opt) {
  refuse_existing(out);
  if (opt.vocab_size < 0)
    throw Error("--vocab-size " + std::to_string(opt.vocab_size) + ": must be positive");
  Weights w;
  std::string what;
  if (format == WeightsFormat::kSafetensors) {
    int skipped = 0;
    w = read_safetensors_weights(source, &skipped);
    what = "safetensors, " + std::to_string(skipped) + " attention-mask buffers skipped";
  } else {
    const LlmcModel m = read_llmc_model(source);
    w = from_llmc(m);
    resize_vocab(w, m.header.vocab_size);  // the padding rows go unless asked for below
    what = std::string("llm.c ") + (m.header.version == kLlmcVersionBF16 ? "bf16" : "fp32") + ", Vp " +
           std::to_string(m.header.padded_vocab_size);
  }
  const int own = w.model.vocab_size;
  if (opt.vocab_size > 0) resize_vocab(w, opt.vocab_size);
  if (w.model.vocab_size != own)
    what += ", wte " + std::to_string(own) + " -> " + std::to_string(w.model.vocab_size) + " rows";
  write_weights_checkpoint(w, out, source);
  return "imported " + source + " (" + what + ") into " + out + ": GPT-2 " + describe(w.model);
}

std::string export_weights(const std::string& checkpoint, WeightsFormat format, const std::string& out,
                           const ExportOptions& opt) {
  refuse_existing(out);
  if (format == WeightsFormat::kSafetensors && (opt.bf16 || opt.vocab_size))
    throw Error("--dtype bf16 and --vocab-size are for llm.c files; safetensors are written in float32");
  Weights w = read_weights_checkpoint(checkpoint);
  const std::string model = describe(w.model);
  if (format == WeightsFormat::kSafetensors) {
    write_safetensors_weights(w, out);
    return "exported " + checkpoint + " (GPT-2 " + model + ") to " + out + " and config.json beside it";
  }
  const int v = opt.vocab_size ? opt.vocab_size : w.model.vocab_size;
  if (v <= 0 || v > w.model.vocab_size)
    throw Error("--vocab-size " + std::to_string(v) + ": must be in [1, " +
                std::to_string(w.model.vocab_size) + "], the checkpoint's vocabulary");
  const LlmcModel m = to_llmc(std::move(w), v, opt.bf16);
  write_llmc_model(out, m);
  return "exported " + checkpoint + " (GPT-2 " + model + ") to " + out + " (llm.c " +
         (opt.bf16 ? "bf16" : "fp32") + ", V " + std::to_string(v) + ", Vp " +
         std::to_string(m.header.padded_vocab_size) + ")";
}

}  // namespace zeropp
