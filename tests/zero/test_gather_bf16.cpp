// The bf16 wire's gathers hand the model exactly bf16(master) as fp32, for
// every unit, pass and micro-batch, at every step: at P = 1 decode rounds the
// master itself (src/zero/engine_gather.cpp, Route::Local), later than the
// cast it replaces, so this also holds for the gathers a step's end starts
// for the next one (zero.overlap, prefetch_depth >= 1) and for the unit that
// stays resident from the forward into the backward. At P > 1 the same
// checks cover the wire's cast and widening.
#include <catch2/catch.hpp>
#include <cstring>

#include "src/base/bf16.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEST_CASE("bf16 gathers hand the model bf16(master) bit for bit after steps and across carried gathers",
          "[engine]") {
  const int P = world_size();
  struct Schedule {
    int depth;
    bool overlap;
  };
  for (const Schedule s : {Schedule{0, false}, Schedule{1, true}, Schedule{2, true}})
    for (double clip : {0.5, 0.0}) {  // 0: each unit's AdamW (and its carried gather) before the norm
      Config c = tiny(2, "bf16");
      c.train.steps = 3;
      c.optim.grad_clip = clip;
      c.zero.prefetch_depth = s.depth;
      c.zero.overlap = s.overlap;
      Run run(c);
      const int units = int(run.model->layout().units.size());
      for (int64_t step = 0; step < c.train.steps; ++step) {
        std::vector<std::vector<float>> want;  // this step's weights: the master after the last update
        for (int u = 0; u < units; ++u) {
          want.push_back(run.engine.gather_master(u));
          round_to_bf16(want.back().data(), int64_t(want.back().size()));
        }
        int seen = 0, wrong = 0;
        std::string first_wrong;
        run.engine.watch_weights([&](Pass pass, int u, const float* w, int64_t n) {
          ++seen;
          const auto& e = want[size_t(u)];
          if (size_t(n) == e.size() && std::memcmp(w, e.data(), e.size() * sizeof(float)) == 0) return;
          if (wrong++ == 0)
            first_wrong =
                std::string(pass == Pass::Forward ? "forward" : "backward") + " unit " + std::to_string(u);
        });
        train_step(run, step, learning_rate(c.optim, step, c.train.steps));
        run.engine.watch_weights({});
        INFO("P=" << P << " depth " << s.depth << (s.overlap ? " overlap" : "") << " clip " << clip
                  << " step " << step << ": first differing acquire: " << first_wrong);
        CHECK(seen == 2 * (units + 1) + 2 * (units - 1));  // as in test_qwz.cpp: two micro-batches
        CHECK(wrong == 0);
      }
    }
}
