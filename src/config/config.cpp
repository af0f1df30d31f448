#include "src/config/config.hpp"

#include <toml++/toml.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {

enum class Kind { Int, Float, Bool, String };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Int:
      return "an integer";
    case Kind::Float:
      return "a number";
    case Kind::Bool:
      return "a boolean";
    case Kind::String:
      return "a string";
  }
  return "?";
}

// One key of the deck, bound to a field of a particular Config.
struct Field {
  std::string key;  // "section.name"
  Kind kind;
  void* ptr;
  bool is64 = false;  // int64_t rather than int
};

std::vector<Field> fields(Config& c) {
  auto I = [](const char* k, int& v) { return Field{k, Kind::Int, &v}; };
  auto L = [](const char* k, int64_t& v) { return Field{k, Kind::Int, &v, true}; };
  auto F = [](const char* k, double& v) { return Field{k, Kind::Float, &v}; };
  auto B = [](const char* k, bool& v) { return Field{k, Kind::Bool, &v}; };
  auto S = [](const char* k, std::string& v) { return Field{k, Kind::String, &v}; };
  return {
      I("model.vocab_size", c.model.vocab_size),
      I("model.max_seq_len", c.model.max_seq_len),
      I("model.n_layer", c.model.n_layer),
      I("model.n_head", c.model.n_head),
      I("model.n_embd", c.model.n_embd),
      I("train.batch_size", c.train.batch_size),
      I("train.seq_len", c.train.seq_len),
      I("train.grad_accum", c.train.grad_accum),
      L("train.steps", c.train.steps),
      L("train.seed", c.train.seed),
      I("train.val_every", c.train.val_every),
      I("train.val_batches", c.train.val_batches),
      I("train.sample_tokens", c.train.sample_tokens),
      S("train.sample_prompt", c.train.sample_prompt),
      S("train.out_dir", c.train.out_dir),
      F("train.max_runtime", c.train.max_runtime),
      S("train.precision", c.train.precision),
      F("optim.lr", c.optim.lr),
      F("optim.min_lr", c.optim.min_lr),
      I("optim.warmup_steps", c.optim.warmup_steps),
      F("optim.weight_decay", c.optim.weight_decay),
      F("optim.beta1", c.optim.beta1),
      F("optim.beta2", c.optim.beta2),
      F("optim.eps", c.optim.eps),
      F("optim.grad_clip", c.optim.grad_clip),
      S("data.train", c.data.train),
      S("data.val", c.data.val),
      B("data.shuffle", c.data.shuffle),
      I("log.every", c.log.every),
      I("zero.ranks_per_node", c.zero.ranks_per_node),
      S("zero.comm_dtype", c.zero.comm_dtype),
      B("zero.quantized_weights", c.zero.quantized_weights),
      I("zero.weight_bits", c.zero.weight_bits),
      I("zero.weight_block", c.zero.weight_block),
      B("zero.quantized_weights_backward", c.zero.quantized_weights_backward),
      I("zero.hpz_partition_size", c.zero.hpz_partition_size),
      B("zero.quantized_gradients", c.zero.quantized_gradients),
      I("zero.gradient_block", c.zero.gradient_block),
      I("zero.intra_node_gradient_bits", c.zero.intra_node_gradient_bits),
      B("zero.gradient_error_feedback", c.zero.gradient_error_feedback),
      F("zero.error_feedback_beta", c.zero.error_feedback_beta),
      I("zero.error_feedback_reset", c.zero.error_feedback_reset),
      S("checkpoint.dir", c.checkpoint.dir),
      I("checkpoint.every", c.checkpoint.every),
      I("checkpoint.keep", c.checkpoint.keep),
      B("checkpoint.at_start", c.checkpoint.at_start),
      B("checkpoint.at_end", c.checkpoint.at_end),
      I("checkpoint.fault_kill_rank", c.checkpoint.fault_kill_rank),
      L("checkpoint.fault_kill_step", c.checkpoint.fault_kill_step),
      I("checkpoint.fault_kill_after", c.checkpoint.fault_kill_after),
      F("comm.timeout_s", c.comm.timeout_s),
      F("comm.internode_gbps", c.comm.internode_gbps),
      I("comm.fault_stall_rank", c.comm.fault_stall_rank),
      L("comm.fault_stall_step", c.comm.fault_stall_step),
  };
}

Field* find(std::vector<Field>& fs, const std::string& key) {
  for (auto& f : fs)
    if (f.key == key) return &f;
  return nullptr;
}

void set_int(Field& f, int64_t v, const std::string& where) {
  if (f.is64) {
    *static_cast<int64_t*>(f.ptr) = v;
    return;
  }
  if (v < INT32_MIN || v > INT32_MAX)
    throw Error(where + ": key '" + f.key + "' value " + std::to_string(v) + " is out of range");
  *static_cast<int*>(f.ptr) = int(v);
}

// A deck value of any TOML type into the field, or an error naming both.
void set_from_toml(Field& f, const toml::node& n, const std::string& where) {
  const auto wrong = [&](const char* got) {
    return Error(where + ": key '" + f.key + "' must be " + kind_name(f.kind) + ", got " + got);
  };
  const char* got = n.is_integer()          ? "an integer"
                    : n.is_floating_point() ? "a floating-point number"
                    : n.is_boolean()        ? "a boolean"
                    : n.is_string()         ? "a string"
                    : n.is_table()          ? "a table"
                    : n.is_array()          ? "an array"
                                            : "a date/time";
  switch (f.kind) {
    case Kind::Int:
      if (!n.is_integer()) throw wrong(got);
      set_int(f, *n.value<int64_t>(), where);
      break;
    case Kind::Float:
      if (!n.is_floating_point() && !n.is_integer()) throw wrong(got);
      *static_cast<double*>(f.ptr) = *n.value<double>();
      break;
    case Kind::Bool:
      if (!n.is_boolean()) throw wrong(got);
      *static_cast<bool*>(f.ptr) = *n.value<bool>();
      break;
    case Kind::String:
      if (!n.is_string()) throw wrong(got);
      *static_cast<std::string*>(f.ptr) = *n.value<std::string>();
      break;
  }
}

// A command-line value (text) into the field.
void set_from_text(Field& f, const std::string& text, const std::string& flag) {
  const auto bad = [&] {
    return Error("command line: " + flag + ": expected " + kind_name(f.kind) + ", got '" + text + "'");
  };
  size_t used = 0;
  try {
    switch (f.kind) {
      case Kind::Int: {
        const long long v = std::stoll(text, &used);
        if (used != text.size()) throw bad();
        set_int(f, v, "command line");
        break;
      }
      case Kind::Float: {
        const double v = std::stod(text, &used);
        if (used != text.size()) throw bad();
        *static_cast<double*>(f.ptr) = v;
        break;
      }
      case Kind::Bool:
        if (text == "true" || text == "1")
          *static_cast<bool*>(f.ptr) = true;
        else if (text == "false" || text == "0")
          *static_cast<bool*>(f.ptr) = false;
        else
          throw bad();
        break;
      case Kind::String:
        *static_cast<std::string*>(f.ptr) = text;
        break;
    }
  } catch (const std::logic_error&) {  // stoll/stod: invalid or out of range
    throw bad();
  }
}

void walk(const toml::table& t, const std::string& prefix, std::vector<Field>& fs, const std::string& file) {
  for (auto&& [k, node] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (node.is_table() && prefix.empty()) {
      walk(*node.as_table(), key, fs, file);
      continue;
    }
    Field* f = find(fs, key);
    if (!f) {
      const auto line = node.source().begin.line;
      throw Error(file + ":" + std::to_string(line) + ": unknown key '" + key + "'");
    }
    set_from_toml(*f, node, file + ":" + std::to_string(node.source().begin.line));
  }
}

std::string fmt_double(double v) {
  // Shortest text that reads back as the same double.
  std::string r;
  for (int prec = 6; prec <= 17; ++prec) {
    std::ostringstream s;
    s.precision(prec);
    s << v;
    r = s.str();
    if (std::stod(r) == v) break;
  }
  // TOML needs a '.' or exponent to read a float back as a float.
  if (r.find_first_of(".eEn") == std::string::npos) r += ".0";
  return r;
}

}  // namespace

void apply_overrides(Config& c, const std::vector<std::string>& overrides) {
  auto fs = fields(c);
  for (size_t i = 0; i < overrides.size(); ++i) {
    const std::string& arg = overrides[i];
    if (arg.rfind("--", 0) != 0) throw Error("command line: unexpected argument '" + arg + "'");
    std::string key = arg.substr(2), value;
    const auto eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < overrides.size()) {
      value = overrides[++i];
    } else {
      throw Error("command line: --" + key + " needs a value");
    }
    Field* f = find(fs, key);
    if (!f) throw Error("command line: unknown option --" + key);
    set_from_text(*f, value, "--" + key);
  }
}

Config parse_config_text(const std::string& text, const std::string& origin) {
  Config c;
  auto fs = fields(c);
  toml::table deck;
  try {
    deck = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw Error(origin + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  walk(deck, "", fs, origin);
  return c;
}

std::vector<std::string> config_differences(const Config& a, const Config& b) {
  // Compare through the TOML text of each key: one code path for every type.
  std::istringstream ta(to_toml(a)), tb(to_toml(b));
  std::vector<std::string> out;
  std::string la, lb, section;
  while (std::getline(ta, la) && std::getline(tb, lb)) {
    if (!la.empty() && la[0] == '[') section = la.substr(1, la.size() - 2);
    if (la == lb) continue;
    const auto eq = la.find(" = ");
    out.push_back(section + "." + la.substr(0, eq) + ": " + la.substr(eq + 3) + " -> " + lb.substr(eq + 3));
  }
  return out;
}

std::string checkpoint_dir(const Config& c) {
  return c.checkpoint.dir.empty() ? c.train.out_dir + "/checkpoints" : c.checkpoint.dir;
}

Config load_config(const std::string& deck_path, const std::vector<std::string>& overrides) {
  std::ifstream in(deck_path, std::ios::binary);
  if (!in) throw Error(deck_path + ": cannot read deck: " + std::strerror(errno));
  if (std::filesystem::is_directory(deck_path)) throw Error(deck_path + ": cannot read deck: it is a folder");
  std::ostringstream text;
  text << in.rdbuf();
  Config c = parse_config_text(text.str(), deck_path);
  apply_overrides(c, overrides);
  try {
    validate(c);
  } catch (const Error& e) {
    throw Error(deck_path + ": " + e.what());
  }
  return c;
}

void validate(const Config& c) {
  const auto need = [](bool ok, const std::string& key, const std::string& value, const std::string& why) {
    if (!ok) throw Error("invalid configuration: " + key + " = " + value + ": " + why);
  };
  const auto& m = c.model;
  const auto& t = c.train;
  const auto& o = c.optim;
  need(m.vocab_size > 0 && m.vocab_size <= 65536, "model.vocab_size", std::to_string(m.vocab_size),
       "must be in 1..65536 (tokens are stored as uint16)");
  need(m.max_seq_len > 0, "model.max_seq_len", std::to_string(m.max_seq_len), "must be positive");
  need(m.n_layer > 0, "model.n_layer", std::to_string(m.n_layer), "must be positive");
  need(m.n_head > 0, "model.n_head", std::to_string(m.n_head), "must be positive");
  need(m.n_embd > 0, "model.n_embd", std::to_string(m.n_embd), "must be positive");
  need(m.n_embd % m.n_head == 0, "model.n_head", std::to_string(m.n_head),
       "must divide model.n_embd = " + std::to_string(m.n_embd));
  need(t.batch_size > 0, "train.batch_size", std::to_string(t.batch_size), "must be positive");
  need(t.seq_len > 0, "train.seq_len", std::to_string(t.seq_len), "must be positive");
  need(t.seq_len <= m.max_seq_len, "train.seq_len", std::to_string(t.seq_len),
       "is longer than the position table (model.max_seq_len = " + std::to_string(m.max_seq_len) + ")");
  need(t.grad_accum > 0, "train.grad_accum", std::to_string(t.grad_accum), "must be positive");
  need(t.steps >= 0, "train.steps", std::to_string(t.steps), "must not be negative");
  need(t.val_every >= 0, "train.val_every", std::to_string(t.val_every), "must not be negative");
  need(t.val_batches >= 0, "train.val_batches", std::to_string(t.val_batches), "must not be negative");
  need(t.sample_tokens >= 0, "train.sample_tokens", std::to_string(t.sample_tokens), "must not be negative");
  need(!t.out_dir.empty(), "train.out_dir", "\"\"", "must name a folder");
  need(o.lr >= 0 && std::isfinite(o.lr), "optim.lr", fmt_double(o.lr), "must be a non-negative number");
  need(o.min_lr >= 0 && o.min_lr <= o.lr, "optim.min_lr", fmt_double(o.min_lr), "must be in [0, optim.lr]");
  need(o.warmup_steps >= 0, "optim.warmup_steps", std::to_string(o.warmup_steps), "must not be negative");
  need(o.weight_decay >= 0, "optim.weight_decay", fmt_double(o.weight_decay), "must not be negative");
  need(o.beta1 >= 0 && o.beta1 < 1, "optim.beta1", fmt_double(o.beta1), "must be in [0, 1)");
  need(o.beta2 >= 0 && o.beta2 < 1, "optim.beta2", fmt_double(o.beta2), "must be in [0, 1)");
  need(o.eps > 0, "optim.eps", fmt_double(o.eps), "must be positive");
  need(o.grad_clip >= 0, "optim.grad_clip", fmt_double(o.grad_clip), "must not be negative (0: off)");
  need(!c.data.train.empty(), "data.train", "\"\"", "must name a token file");
  need(c.log.every > 0, "log.every", std::to_string(c.log.every), "must be positive");
  need(c.zero.ranks_per_node >= 0, "zero.ranks_per_node", std::to_string(c.zero.ranks_per_node),
       "must not be negative (0: detect)");
  need(c.zero.comm_dtype == "bf16" || c.zero.comm_dtype == "fp32", "zero.comm_dtype",
       "\"" + c.zero.comm_dtype + "\"", "must be \"bf16\" or \"fp32\"");
  const auto& z = c.zero;
  const auto pow2 = [](int v) { return v >= 2 && (v & (v - 1)) == 0; };
  need(z.weight_bits == 8 || z.weight_bits == 4, "zero.weight_bits", std::to_string(z.weight_bits),
       "must be 8 or 4");
  need(pow2(z.weight_block), "zero.weight_block", std::to_string(z.weight_block),
       "must be a power of two >= 2 (blocks tile every padded slice)");
  need(z.hpz_partition_size >= 0, "zero.hpz_partition_size", std::to_string(z.hpz_partition_size),
       "must be 1 (off), 0 (the node) or a group size");
  need(pow2(z.gradient_block), "zero.gradient_block", std::to_string(z.gradient_block),
       "must be a power of two >= 2 (int4 packs two values per byte; blocks tile every slice)");
  need(z.intra_node_gradient_bits == 4 || z.intra_node_gradient_bits == 8, "zero.intra_node_gradient_bits",
       std::to_string(z.intra_node_gradient_bits), "must be 4 or 8");
  need(z.error_feedback_beta >= 0 && z.error_feedback_beta < 1, "zero.error_feedback_beta",
       fmt_double(z.error_feedback_beta), "must be in [0, 1)");
  need(z.error_feedback_reset > 0, "zero.error_feedback_reset", std::to_string(z.error_feedback_reset),
       "must be positive");
  need(!z.gradient_error_feedback || z.quantized_gradients, "zero.gradient_error_feedback", "true",
       "needs zero.quantized_gradients = true");
  need(t.precision == "fp32" || t.precision == "bf16", "train.precision", "\"" + t.precision + "\"",
       "must be \"fp32\" or \"bf16\"");
  need(t.max_runtime >= 0, "train.max_runtime", fmt_double(t.max_runtime),
       "must not be negative (0: no limit)");
  need(c.checkpoint.every >= 0, "checkpoint.every", std::to_string(c.checkpoint.every),
       "must not be negative (0: off)");
  need(c.checkpoint.keep >= 0, "checkpoint.keep", std::to_string(c.checkpoint.keep),
       "must not be negative (0: keep all)");
  need(c.comm.internode_gbps >= 0, "comm.internode_gbps", fmt_double(c.comm.internode_gbps),
       "must not be negative (0: no emulation)");
  need(c.comm.timeout_s > 0, "comm.timeout_s", fmt_double(c.comm.timeout_s), "must be positive");
}

std::string to_toml(const Config& cin) {
  Config c = cin;  // fields() binds mutable pointers
  std::ostringstream out;
  std::string section;
  for (const auto& f : fields(c)) {
    const auto dot = f.key.find('.');
    const std::string sec = f.key.substr(0, dot), name = f.key.substr(dot + 1);
    if (sec != section) {
      out << (section.empty() ? "" : "\n") << "[" << sec << "]\n";
      section = sec;
    }
    out << name << " = ";
    switch (f.kind) {
      case Kind::Int:
        out << (f.is64 ? *static_cast<int64_t*>(f.ptr) : *static_cast<int*>(f.ptr));
        break;
      case Kind::Float:
        out << fmt_double(*static_cast<double*>(f.ptr));
        break;
      case Kind::Bool:
        out << (*static_cast<bool*>(f.ptr) ? "true" : "false");
        break;
      case Kind::String: {
        std::ostringstream q;
        q << toml::value<std::string>(*static_cast<std::string*>(f.ptr));
        out << q.str();
        break;
      }
    }
    out << "\n";
  }
  return out.str();
}

std::vector<std::string> config_keys() {
  Config c;
  std::vector<std::string> keys;
  for (const auto& f : fields(c)) keys.push_back(f.key);
  return keys;
}

}  // namespace zeropp
