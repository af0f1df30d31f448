// Decks and overrides: every error names the file or flag, the key and value.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "src/base/errors.hpp"
#include "src/config/config.hpp"

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
  for (const char* d : {"default", "tiny", "small", "gpt2-124m"}) {
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
  c.train.sample_prompt = "quote \" and 'apostrophe'";
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
  CHECK_THAT(error_of(ok, {"--train.steps=ten"}),
             Catch::Contains("--train.steps: expected an integer, got 'ten'"));
  CHECK_THAT(error_of(ok, {"--train.stepz=10"}), Catch::Contains("unknown option --train.stepz"));
  CHECK_THAT(error_of(ok, {"--train.steps"}), Catch::Contains("--train.steps needs a value"));
  CHECK_THAT(error_of(ok, {"--model.n_layer=99999999999"}), Catch::Contains("out of range"));
}

TEST_CASE("data.train and data.val take a string or an array of strings", "[config]") {
  const auto deck =
      write_deck("files.toml", "[data]\ntrain = [\"a/train_*.bin\", \"b.bin\"]\nval = \"v.bin\"\n");
  const Config c = load_config(deck, {});
  CHECK(c.data.train == "a/train_*.bin,b.bin");
  CHECK(c.data.val == "v.bin");
  CHECK(parse_config_text(to_toml(c), "resolved").data.train == c.data.train);
  CHECK_THAT(error_of(write_deck("files_bad.toml", "[data]\ntrain = [\"a,b\"]\n")),
             Catch::Contains("data.train") && Catch::Contains("without commas"));
  CHECK_THAT(error_of(write_deck("files_num.toml", "[data]\ntrain = [1]\n")), Catch::Contains("data.train"));
  std::remove(deck.c_str());
}
