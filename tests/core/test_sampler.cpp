#include <catch2/catch.hpp>

#include "src/sampler.hpp"

using namespace zeropp;

TEST_CASE("sampling draws from the distribution, deterministically per seed", "[model]") {
  CHECK(sample_index({0.0f, 1.0f, 0.0f}, 0.5) == 1);
  CHECK(sample_index({0.25f, 0.25f, 0.5f}, 0.3) == 1);
  CHECK(sample_index({0.25f, 0.25f, 0.49f}, 0.999) == 2);  // cdf short of 1: last index
  const NextTokenProbs next = [](const std::vector<int32_t>& ctx) {
    std::vector<float> p(256, 0.0f);
    p[size_t('a' + int(ctx.size()) % 3)] = 1.0f;
    return p;
  };
  const auto toks = sample_tokens(next, "xy", 4, 3, 1);
  CHECK(decode_bytes(toks) == "xycaaa");  // the context is capped at 3 tokens
  CHECK(decode_bytes(sample_tokens(next, "xy", 4, 8, 1)) == "xycabc");
  CHECK(sample_tokens(next, "xy", 4, 8, 9) == sample_tokens(next, "xy", 4, 8, 9));
  CHECK(decode_bytes({65, 7, 300, 10}) == "A?<300>\n");
}
