// Decks and overrides: every error names the file or flag, the key and value.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <set>

#include "src/base/errors.hpp"
#include "src/config/config.hpp"
#include "src/config/describe.hpp"
#include "src/config/key_value.hpp"
#include "src/config/suggest.hpp"
#include "src/config/toml_value.hpp"

using namespace zeropp;

namespace {
std::string write_deck(const std::string& name, const std::string& text) {
  const std::string path = std::string("/tmp/zeropp_test_") + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}
// The message load_config throws, or "" when it succeeds.
std::string error_of(const std::string& deck, const std::vector<std::string>& ov = {}) {
  try {
    load_config(deck, ov);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("the shipped decks load", "[config]") {
  for (const char* d : {"default", "tiny", "small", "gpt2-124m", "gpt2-350m", "gpt2-774m"}) {
    INFO(d);
    const Config c = load_config(std::string(ZEROPP_SOURCE_DIR) + "/inputs/" + d + ".toml", {});
    CHECK(c.model.n_embd % c.model.n_head == 0);
  }
  const Config small = load_config(std::string(ZEROPP_SOURCE_DIR) + "/inputs/small.toml", {});
  CHECK(small.model.vocab_size == 50304);
  CHECK(small.model.n_layer == 6);
  CHECK(small.train.batch_size == 4);
}

TEST_CASE("a deck sets values over the defaults and overrides beat the deck", "[config]") {
  const auto deck = write_deck("ok.toml", "[model]\nn_layer = 3\n[optim]\nlr = 1\n[data]\nshuffle = true\n");
  const Config c = load_config(deck, {"--model.n_layer=5", "--train.out_dir", "runs/x", "--optim.lr=0.5"});
  CHECK(c.model.n_layer == 5);
  CHECK(c.optim.lr == 0.5);
  CHECK(c.data.shuffle);
  CHECK(c.train.out_dir == "runs/x");
  CHECK(c.model.n_embd == ModelConfig{}.n_embd);
}

TEST_CASE("the resolved configuration reads back to the same values", "[config]") {
  Config c;
  c.optim.lr = 3.0e-4;
  c.optim.beta2 = 0.95;
  c.train.sample_prompt = "quote \" and 'apostrophe', back\\slash, tab\t, newline\n";
  c.train.steps = 1234567890123;
  const auto deck = write_deck("round.toml", to_toml(c));
  const Config r = load_config(deck, {});
  CHECK(to_toml(r) == to_toml(c));
  CHECK(r.optim.lr == c.optim.lr);
  CHECK(r.train.sample_prompt == c.train.sample_prompt);
  CHECK(r.train.steps == c.train.steps);
}

TEST_CASE("bad decks and flags give one line naming the file, key and value", "[config]") {
  CHECK_THAT(error_of("/nonexistent/deck.toml"),
             Catch::Contains("/nonexistent/deck.toml") && Catch::Contains("cannot read deck"));
  const auto unknown = write_deck("unknown.toml", "[model]\nn_layer = 2\nn_heads = 4\n");
  CHECK_THAT(error_of(unknown),
             Catch::Contains(unknown + ":3") && Catch::Contains("unknown key 'model.n_heads'"));
  const auto section = write_deck("section.toml", "[modle]\nn_layer = 2\n");
  CHECK_THAT(error_of(section), Catch::Contains("unknown key 'modle.n_layer'"));
  const auto type = write_deck("type.toml", "[train]\nbatch_size = \"eight\"\n");
  CHECK_THAT(error_of(type),
             Catch::Contains(type + ":2") && Catch::Contains("'train.batch_size' must be an integer"));
  const auto ftype = write_deck("ftype.toml", "[optim]\nlr = true\n");
  CHECK_THAT(error_of(ftype), Catch::Contains("'optim.lr' must be a number, got a boolean"));
  const auto syntax = write_deck("syntax.toml", "[model]\nn_layer = = 2\n");
  CHECK_THAT(error_of(syntax), Catch::Contains(syntax + ":2"));
  const auto ok = write_deck("fine.toml", "");
  CHECK(error_of(ok).empty());
  CHECK_THAT(error_of(ok, {"--model.n_head=3"}),
             Catch::Contains("model.n_head = 3") && Catch::Contains("must divide model.n_embd = 256"));
  CHECK_THAT(error_of(ok, {"--train.seq_len=512"}),
             Catch::Contains("train.seq_len = 512") && Catch::Contains("position table"));
  CHECK_THAT(error_of(ok, {"--train.batch_size=0"}), Catch::Contains("train.batch_size = 0"));
  CHECK_THAT(error_of(ok, {"--optim.lr=-1e-3"}), Catch::Contains("optim.lr = -0.001"));
  CHECK_THAT(error_of(ok, {"--zero.comm_dtype=fp16"}), Catch::Contains("zero.comm_dtype = \"fp16\""));
  // An enum key's unknown spelling is refused as it is read: the deck's file and line, the choices.
  const auto fp16 = write_deck("fp16.toml", "[zero]\ncomm_dtype = \"fp16\"\n");
  CHECK_THAT(error_of(fp16), Catch::StartsWith(fp16 + ":2: zero.comm_dtype = \"fp16\"") &&
                                 Catch::EndsWith("must be \"bf16\" or \"fp32\""));
  CHECK_THAT(error_of(ok, {"--comm.backend=gloo"}),
             Catch::Contains("comm.backend = \"gloo\"") && Catch::Contains("\"auto\", \"mpi\" or \"nccl\""));
  CHECK_THAT(error_of(ok, {"--zero.inference_weights=int2"}),
             Catch::Contains("zero.inference_weights = \"int2\""));
  const Config fp32 = load_config(ok, {"--zero.comm_dtype=fp32", "--model.recompute=layer"});
  CHECK(fp32.zero.comm_dtype == CommDType::FP32);
  CHECK(fp32.model.recompute == Recompute::Layer);
  CHECK_THAT(error_of(ok, {"--zero.inter_node_gradient_bits=2"}),
             Catch::Contains("zero.inter_node_gradient_bits = 2") && Catch::Contains("must be 4 or 8"));
  CHECK(error_of(ok, {"--zero.inter_node_gradient_bits=8"}).empty());
  CHECK_THAT(error_of(ok, {"--train.steps=ten"}),
             Catch::Contains("--train.steps: expected an integer, got 'ten'"));
  CHECK_THAT(error_of(ok, {"--train.stepz=10"}), Catch::Contains("unknown option --train.stepz"));
  CHECK_THAT(error_of(ok, {"--train.steps"}), Catch::Contains("--train.steps needs a value"));
  CHECK_THAT(error_of(ok, {"--model.n_layer=99999999999"}), Catch::Contains("out of range"));
  // A newline the TOML parser quotes in its message is an escape: the message stays one line.
  const auto nan = write_deck("nan.toml", "[optim]\nlr = n\n");
  CHECK_THAT(error_of(nan), Catch::Contains(nan + ":2") && Catch::Contains("saw 'n\\n'"));
}

TEST_CASE("train.device and train.tf32: the choices and the rules between keys", "[config]") {
  const auto ok = write_deck("device.toml", "");
  CHECK(load_config(ok, {}).train.device == Device::Host);
  CHECK_THAT(error_of(ok, {"--train.device=gpu"}),
             Catch::Contains("train.device = \"gpu\"") && Catch::Contains("\"host\" or \"cuda\""));
  // Validation is about the deck: a CUDA build or a device is checked when a run starts.
  CHECK(error_of(ok, {"--train.device=cuda"}).empty());  // comm.backend auto: nccl or staged mpi
  CHECK(error_of(ok, {"--train.device=cuda", "--comm.backend=nccl"}).empty());
  CHECK_THAT(
      error_of(ok, {"--train.device=cuda", "--comm.backend=mpi"}),
      Catch::Contains("comm.device_staging = false") && Catch::Contains("comm.backend = \"mpi\" needs true"));
  CHECK(error_of(ok, {"--train.device=cuda", "--comm.backend=mpi", "--comm.device_staging=true"}).empty());
  CHECK_THAT(error_of(ok, {"--train.tf32=true"}),
             Catch::Contains("train.tf32 = true") && Catch::Contains("needs train.device = \"cuda\""));
  CHECK(error_of(ok, {"--train.tf32=true", "--train.device=cuda"}).empty());
}

TEST_CASE("edit distance and the closest key", "[config]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("batchsize", "batch_size") == 1);  // insertion
  CHECK(edit_distance("n_haed", "n_head") == 1);         // neighbours swapped
  CHECK(edit_distance("stepz", "steps") == 1);           // substitution
  const std::vector<std::string> known = {"model.n_layer", "model.n_head", "train.batch_size",
                                          "train.steps",   "optim.lr",     "log.every"};
  CHECK(closest_key("train.batchsize", known) == "train.batch_size");
  CHECK(closest_key("model.n_heads", known) == "model.n_head");
  CHECK(closest_key("modle.n_layer", known) == "model.n_layer");  // the section misspelt
  CHECK(closest_key("train.lr", known) == "optim.lr");            // the wrong section
  CHECK(closest_key("n_layer", known) == "model.n_layer");        // outside any section
  CHECK(closest_key("train.completely_else", known).empty());     // nothing close: no guess
  CHECK(closest_key("log.xyz", known).empty());
}

TEST_CASE("unknown keys and flags get the closest key", "[config]") {
  const auto deck = write_deck("typo.toml", "[train]\nbatchsize = 4\n");
  CHECK_THAT(error_of(deck), Catch::Contains(deck + ":2: unknown key 'train.batchsize' (did you mean "
                                                    "'train.batch_size'?)"));
  const auto ok = write_deck("typo_ok.toml", "");
  CHECK_THAT(error_of(ok, {"--train.stepz=10"}),
             Catch::Contains("unknown option --train.stepz (did you mean --train.steps?)"));
  CHECK_THAT(error_of(ok, {"--nothing.like_it=1"}),
             Catch::Contains("unknown option --nothing.like_it") && !Catch::Contains("did you mean"));
  // Test-only keys are accepted but never suggested.
  CHECK(error_of(ok, {"--comm.fault_stall_rank=-1"}).empty());
  CHECK_THAT(error_of(ok, {"--comm.fault_stall_rnk=1"}), !Catch::Contains("did you mean"));
}

TEST_CASE("the key table: unique keys, defaults that pass their checks, shown unless test-only", "[config]") {
  std::set<std::string> names;
  for (const auto& k : config_table()) {
    INFO(k.full_name());
    CHECK(names.insert(k.full_name()).second);
    CHECK(!k.help.empty());
    for (const auto& check : k.checks) CHECK(check.ok(k.get(Config{})));
    const bool in_help = keys_help().find("  " + k.full_name() + " = ") != std::string::npos;
    const bool in_markdown = keys_markdown().find("| `" + k.full_name() + "` |") != std::string::npos;
    CHECK(in_help == !k.hidden);
    CHECK(in_markdown == !k.hidden);
  }
  CHECK(find_key("checkpoint.fault_kill_rank")->hidden);
  CHECK_NOTHROW(validate(Config{}));
  CHECK_THAT(keys_help(), Catch::Contains("  zero.comm_dtype = \"bf16\"  (string, \"bf16\" or \"fp32\")"));
  CHECK_THAT(keys_markdown(), Catch::Contains("| `optim.beta2` | number | `0.95` | in [0, 1) | "));
}

TEST_CASE("key values as text: lists, choices, shortest round-tripping numbers", "[config]") {
  using List = std::vector<std::string>;
  CHECK(value_from_text(KeyType::StringList, "a.bin,data/*.bin") == KeyValue(List{"a.bin", "data/*.bin"}));
  CHECK(value_from_text(KeyType::StringList, "") == KeyValue(List{}));
  CHECK(toml_text(List{"a.bin", "q\"uote"}) == "[\"a.bin\", \"q\\\"uote\"]");
  CHECK(toml_text(List{}) == "[]");
  CHECK(toml_text(3e-4) == "0.0003");
  CHECK(toml_text(1.0) == "1.0");
  CHECK(toml_text(int64_t(-3)) == "-3");
  CHECK(!value_from_text(KeyType::Int, "3.5"));
  CHECK(!value_from_text(KeyType::Float, "1e400"));
  CHECK(!value_from_text(KeyType::Bool, "yes"));
  const KeyCheck backend = one_of({"auto", "mpi", "nccl"});
  CHECK(backend.rule == "\"auto\", \"mpi\" or \"nccl\"");
  CHECK(backend.ok(std::string("nccl")));
  CHECK(!backend.ok(std::string("gloo")));
  const KeyCheck bits = one_of({4, 8});
  CHECK(bits.rule == "4 or 8");
  CHECK(!bits.ok(int64_t(6)));
  CHECK(!not_empty().ok(List{}));
  CHECK(not_empty().ok(List{"x"}));
  CHECK(power_of_two().ok(int64_t(256)));
  CHECK(!power_of_two().ok(int64_t(96)));
}

TEST_CASE("list keys read TOML arrays of strings, one string, or an empty array", "[config]") {
  using List = std::vector<std::string>;
  const auto deck = toml::parse(
      "arr = [\"a.bin\", \"shards/*.bin\"]\none = \"x.bin\"\nempty = \"\"\nnone = []\nmixed = [\"a\", "
      "1]\nnum = 3\n");
  CHECK(value_from_toml(KeyType::StringList, *deck.get("arr")) == KeyValue(List{"a.bin", "shards/*.bin"}));
  CHECK(value_from_toml(KeyType::StringList, *deck.get("one")) == KeyValue(List{"x.bin"}));
  CHECK(value_from_toml(KeyType::StringList, *deck.get("none")) == KeyValue(List{}));
  CHECK(value_from_toml(KeyType::StringList, *deck.get("empty")) == KeyValue(List{}));
  CHECK(!value_from_toml(KeyType::StringList, *deck.get("mixed")));
  CHECK(!value_from_toml(KeyType::StringList, *deck.get("num")));
  CHECK(!value_from_toml(KeyType::String, *deck.get("arr")));
  CHECK(value_from_toml(KeyType::Float, *deck.get("num")) == KeyValue(3.0));
  // What to_toml writes for a list reads back as the same list.
  const List files = {"a \"quoted\" name.bin", "b.bin"};
  const auto back = toml::parse("k = " + toml_text(files));
  CHECK(value_from_toml(KeyType::StringList, *back.get("k")) == KeyValue(files));
}

TEST_CASE("data.train and data.val take a string or an array of strings", "[config]") {
  const auto deck =
      write_deck("files.toml", "[data]\ntrain = [\"a/train_*.bin\", \"b.bin\"]\nval = \"v.bin\"\n");
  const Config c = load_config(deck, {});
  CHECK(c.data.train == std::vector<std::string>{"a/train_*.bin", "b.bin"});
  CHECK(c.data.val == std::vector<std::string>{"v.bin"});
  CHECK(parse_config_text(to_toml(c), "resolved").data.train == c.data.train);
  CHECK_THAT(error_of(write_deck("files_bad.toml", "[data]\ntrain = [\"a,b\"]\n")),
             Catch::Contains("data.train") && Catch::Contains("entries without commas"));
  CHECK_THAT(error_of(write_deck("files_num.toml", "[data]\ntrain = [1]\n")), Catch::Contains("data.train"));
  std::remove(deck.c_str());
}
