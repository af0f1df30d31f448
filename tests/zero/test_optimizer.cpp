#include <catch2/catch.hpp>
#include <cmath>

#include "src/models/gpt2/gpt2_layout.hpp"
#include "src/zero/optimizer.hpp"

using namespace zeropp;

TEST_CASE("learning rate: linear warm-up, cosine decay to the floor", "[model]") {
  OptimConfig o;
  o.lr = 1e-3;
  o.min_lr = 1e-4;
  o.warmup_steps = 10;
  CHECK(learning_rate(o, 0, 110) == Approx(1e-4));
  CHECK(learning_rate(o, 9, 110) == Approx(1e-3));
  CHECK(learning_rate(o, 10, 110) == Approx(1e-3));
  CHECK(learning_rate(o, 109, 110) == Approx(1e-4));
  const double mid = learning_rate(o, 59, 110);
  CHECK(mid < 1e-3);
  CHECK(mid > 1e-4);
  for (int s = 11; s < 110; ++s) CHECK(learning_rate(o, s, 110) <= learning_rate(o, s - 1, 110));
  o.warmup_steps = 0;
  CHECK(learning_rate(o, 0, 1) == Approx(1e-3));
}

TEST_CASE("decay segments split a shard at parameter boundaries", "[model]") {
  ModelConfig m;
  m.vocab_size = 10;
  m.max_seq_len = 4;
  m.n_layer = 1;
  m.n_head = 1;
  m.n_embd = 2;
  const ParamLayout L = gpt2_layout(m);
  const UnitSpec& blk = L.units[1];  // ln_1.w[2] ln_1.b[2] c_attn.w[12] ...
  const auto segs = decay_segments(blk, 1, 10);
  REQUIRE(segs.size() == 2);
  CHECK((segs[0].begin == 1 && segs[0].end == 4 && !segs[0].decay));
  CHECK((segs[1].begin == 4 && segs[1].end == 10 && segs[1].decay));
  const auto tail = decay_segments(blk, blk.numel - 1, blk.numel + 3);  // padding past the unit
  REQUIRE(tail.size() == 2);
  CHECK((tail[1].begin == blk.numel && tail[1].end == blk.numel + 3 && !tail[1].decay));
}
