#include "src/run/micro_batches.hpp"

namespace zeropp {

namespace {
MicroBatch read(const DataLoader& loader, int64_t step, int micro) {
  MicroBatch mb;
  mb.tokens.resize(size_t(loader.tokens_per_batch()));
  mb.targets.resize(size_t(loader.tokens_per_batch()));
  loader.batch(step, micro, mb.tokens.data(), mb.targets.data());
  return mb;
}
}  // namespace

std::vector<MicroBatch> micro_batches(const DataLoader& loader, int64_t step, int count) {
  std::vector<MicroBatch> out;
  for (int m = 0; m < count; ++m) out.push_back(read(loader, step, m));
  return out;
}

std::vector<MicroBatch> validation_batches(const DataLoader& val, int count) {
  std::vector<MicroBatch> out;
  for (int i = 0; i < count; ++i) out.push_back(read(val, i, 0));
  return out;
}

}  // namespace zeropp
