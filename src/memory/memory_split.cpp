#include "src/memory/memory_split.hpp"

#include "io/checkpoint/shard_staging.hpp"

namespace zeropp {

MemorySplit split_memory(const MemoryEstimate& e, const Config& cfg) {
  MemorySplit s;
  if (cfg.train.device != Device::Cuda) {
    s.host = e.total();
    return s;
  }
  s.device = e.total() - e.checkpoint_snapshot;  // a host copy
  const MemoryReport& r = e.states;
  if (cfg.comm.device_staging) s.staging = r.gather + r.grad_full + r.qgz + r.secondary;
  s.checkpoint = e.checkpoint_snapshot > 0 ? e.checkpoint_snapshot : kShardStagingHostBytes;
  s.data = 8 * int64_t(cfg.train.batch_size) * cfg.train.seq_len;  // int32 inputs and targets
  s.host = s.staging + s.checkpoint + s.data;
  return s;
}

}  // namespace zeropp
