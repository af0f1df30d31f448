// The engine against the model alone, for every family: on one rank with
// fp32 communication the gradient the engine reduces for a micro-batch is
// the model's gradient on full weights (tests/models/full_weights.hpp). This
// guards what the engine takes from the model's description: GPT-2's tied
// embeddings (a shared unit, whose gradient comes from two places in the
// backward) and LLaMA's untied head (no shared unit).
#include <catch2/catch.hpp>

#include "models/full_weights.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEST_CASE("the engine's one-rank gradient is the model's on full weights, for every family", "[engine]") {
  for (const std::string family : {"gpt2", "llama"}) {
    Config c = tiny(1, "fp32");
    c.model.family = deck_value<ModelFamily>(family).value();
    Run run(c, MPI_COMM_SELF);
    const std::vector<MicroBatch> mb = micro_batches(*run.train, 0, 1);
    run.engine.train_step(0, mb, 0.0);
    const auto model = make_model<float>(c.model, c.train.batch_size, c.train.seq_len);
    FullWeights<float> src(*model, uint64_t(c.train.seed));
    src.zero_grad();
    const int64_t bt = int64_t(c.train.batch_size) * c.train.seq_len;
    model->forward(CVec<int32_t>(mb[0].tokens.data(), bt), CVec<int32_t>(mb[0].targets.data(), bt),
                   c.train.batch_size, c.train.seq_len, src);
    model->backward(1.0f / float(bt), src);
    for (size_t u = 0; u < src.g.size(); ++u) {
      const std::vector<float> g = run.engine.gather_grad(int(u));
      const std::vector<float> want(src.g[u].data(), src.g[u].data() + src.g[u].size());
      INFO(family << " unit " << u);
      CHECK(max_rel(g, want) < 1e-6);
    }
  }
}
