// A frozen engine (rlhf's reference, generate, eval: never stepped) holds no
// gradient shards, full-unit gradient buffers, qgZ staging or Adam moments:
// its model states are the training engine's less 12 bytes per element of
// this rank's shards and the gradient buffers, and it serves the same weights
// (bitwise the same probabilities from the same initialisation).
#include <catch2/catch.hpp>

#include "kernels/runtime/device_memory.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEST_CASE("a frozen engine allocates no gradients or Adam moments and serves the same weights", "[engine]") {
  Config c = tiny(1, "fp32");
  c.zero.quantized_gradients = true;  // qgZ's staging: a gradient buffer too
  Run run(c);
  run.engine.init_weights(uint64_t(c.train.seed));
  const auto model = make_model<float>(c.model, c.train.batch_size, c.train.seq_len);
  Engine frozen(c, run.topo, *run.comm, *model, true);
  frozen.init_weights(uint64_t(c.train.seed));
  const MemoryReport live = run.engine.memory(), cold = frozen.memory();
  int64_t shard_elems = 0;
  for (size_t u = 0; u < run.model->layout().units.size(); ++u)
    shard_elems += run.engine.padded(int(u)) / run.topo.P;
  CHECK(live.adam == 8 * shard_elems);
  CHECK(live.grad == 4 * shard_elems);
  CHECK(live.grad_full > 0);
  CHECK(live.qgz > 0);
  CHECK(cold.adam == 0);
  CHECK(cold.grad == 0);
  CHECK(cold.grad_full == 0);
  CHECK(cold.qgz == 0);
  CHECK(cold.master == live.master);
  CHECK(cold.total() == live.total() - live.adam - live.grad - live.grad_full - live.qgz);
  const std::vector<int32_t> tokens = micro_batches(*run.train, 0, 1)[0].tokens;
  const int B = c.train.batch_size, T = c.train.seq_len;
  std::vector<float> want(size_t(B) * T * size_t(c.model.vocab_size)), got(want.size());
  copy_to_host(run.engine.probs(tokens, B, T), want.data());  // device memory: an explicit transfer
  copy_to_host(frozen.probs(tokens, B, T), got.data());
  int64_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += got[i] != want[i];
  CHECK(differ == 0);
}
