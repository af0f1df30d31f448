// The safetensors reader and writer (io/interop/safetensors.hpp) and llm.c model files
// (io/interop/llmc_model.hpp): written files read back exactly; every malformed header
// is one Error naming the file and what is wrong.
#include <catch2/catch.hpp>
#include <fstream>

#include "io/interop/llmc_model.hpp"
#include "io/interop/safetensors.hpp"
#include "io/io_test_support.hpp"

using namespace zeropp;
using Catch::Matchers::Contains;
using test::error_of;
using test::TempDir;

TEST_CASE("safetensors: written tensors read back exactly", "[io]") {
  TempDir dir("zeropp-st");
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, -7.0f}, b = {42.0f};
  write_safetensors(dir.file("m.safetensors"), {{"a", {2, 3}, a.data()}, {"b", {}, b.data()}},
                    {{"format", "pt"}});
  const SafetensorsHeader h = read_safetensors_header(dir.file("m.safetensors"));
  REQUIRE(h.tensors.size() == 2);
  CHECK(h.metadata.at("format") == "pt");
  CHECK(h.data_start % 8 == 0);
  const SafetensorsEntry* ea = h.find("a");
  REQUIRE(ea);
  CHECK(ea->shape == std::vector<int64_t>{2, 3});
  CHECK(read_safetensors_tensor(dir.file("m.safetensors"), h, *ea) == a);
  CHECK(read_safetensors_tensor(dir.file("m.safetensors"), h, *h.find("b")) == b);
  CHECK(!std::filesystem::exists(dir.file(".m.safetensors.tmp")));
}

TEST_CASE("safetensors: malformed headers are one clear error each", "[io]") {
  const std::string t = R"("t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  const std::pair<std::string, std::string> cases[] = {
      {"{" + t, "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {"{" + t + ", " + t + "}", "key 't' appears twice"},
      {R"({"t": {"dtype": "F17", "shape": [2], "data_offsets": [0, 8]}})", "unknown dtype 'F17'"},
      {R"({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", "needs 12"},
      {R"({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", "shape holds -2"},
      {R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", "begin <= end"},
      {R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 800]}})", "not an integer in [0, 8]"},
      {R"({"t": {"dtype": "F32", "shape": [2]}})", "needs dtype, shape and data_offsets"},
      {R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1}})", "unknown key 'x'"},
      {R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
       "end at data byte 4 but the file holds 8"},
      {R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "u": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
       "expected 4 (tensors overlap or leave a hole)"},
      {R"({"__metadata__": {"format": 1}})", "__metadata__ 'format' is not a string"},
  };
  for (const auto& [json, want] : cases) {
    INFO(json);
    CHECK_THAT(error_of([&] { parse_safetensors_header(json, 8, "F"); }), Contains("F: ") && Contains(want));
  }
  TempDir dir("zeropp-st");
  std::ofstream(dir.file("short")) << "abc";
  CHECK_THAT(error_of([&] { read_safetensors_header(dir.file("short")); }),
             Contains("shorter than the 8-byte"));
  {
    std::ofstream f(dir.file("long"), std::ios::binary);
    const uint64_t n = 1000;
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << "{}";
  }
  CHECK_THAT(error_of([&] { read_safetensors_header(dir.file("long")); }),
             Contains("header length 1000 exceeds"));
}

TEST_CASE("llm.c model files: written arrays read back; bad headers refused", "[io]") {
  TempDir dir("zeropp-llmc");
  LlmcModel m;
  m.header = {kLlmcVersionF32, 4, 5, 1, 2, 4, 8};
  float x = 0.5f;
  for (const LlmcArray& a : llmc_array_shapes(m.header)) {
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = (x *= -1.01f);
    m.arrays.push_back(v);
  }
  write_llmc_model(dir.file("m.bin"), m);
  const LlmcModel back = read_llmc_model(dir.file("m.bin"));
  CHECK(back.arrays == m.arrays);
  CHECK(back.header.padded_vocab_size == 8);

  const std::pair<LlmcHeader, std::string> bad[] = {
      {{4, 4, 5, 1, 2, 4, 8}, "version 4"},
      {{3, 0, 5, 1, 2, 4, 8}, "maxT = 0"},
      {{3, 4, 5, 1, 2, 4, 4}, "Vp = 4 is below V = 5"},
      {{3, 4, 5, 1, 3, 4, 8}, "C = 4 is not a multiple of NH = 3"},
      // L * 4C * C would overflow int64: refused before any product is formed.
      {{3, 4, 5, 1 << 24, 1, 1 << 24, 8}, "more than 2^50 values"},
  };
  for (const auto& [h, want] : bad) CHECK_THAT(error_of([&] { check_llmc_header(h, "F"); }), Contains(want));
}
