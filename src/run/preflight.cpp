#include "src/run/preflight.hpp"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "io/checkpoint/checkpoint.hpp"
#include "io/files/run_dir.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"

namespace zeropp {

namespace {

// ", KV cache and decode 1.00 MiB" ... for the parts beyond training's that a run needs.
std::string inference_parts(const MemoryEstimate& e) {
  std::string s;
  const std::pair<const char*, int64_t> parts[] = {{"KV cache and decode", e.decode},
                                                   {"inference weights", e.inference_weights},
                                                   {"rlhf reference", e.reference},
                                                   {"checkpoint snapshot", e.checkpoint_snapshot}};
  for (const auto& [name, bytes] : parts)
    if (bytes > 0) s += std::string(", ") + name + " " + human_bytes(double(bytes));
  return s;
}

// "host 1.00 MiB (MPI staging ..., checkpoint chunks ..., data ...)": a device run's host part.
std::string device_run_host_part(const MemorySplit& s) {
  return "host " + human_bytes(double(s.host)) + " (MPI staging " + human_bytes(double(s.staging)) +
         ", checkpoint chunks " + human_bytes(double(s.checkpoint)) + ", data " +
         human_bytes(double(s.data)) + ")";
}

}  // namespace

std::string memory_summary(const MemoryCheck& m) {
  const MemoryReport& s = m.need.states;
  char buf[384];
  std::snprintf(
      buf, sizeof buf,
      "%s%s (master %s, grad %s, adam %s, gather slots %s, full grads %s, hpZ secondary %s, qgZ %s, "
      "activations %s",
      m.split.device > 0 ? "device " : "", human_bytes(double(m.need.total())).c_str(),
      human_bytes(double(s.master)).c_str(), human_bytes(double(s.grad)).c_str(),
      human_bytes(double(s.adam)).c_str(), human_bytes(double(s.gather)).c_str(),
      human_bytes(double(s.grad_full)).c_str(), human_bytes(double(s.secondary)).c_str(),
      human_bytes(double(s.qgz)).c_str(), human_bytes(double(m.need.activations)).c_str());
  const std::string host = m.split.device > 0 ? "; " + device_run_host_part(m.split) : "";
  return buf + inference_parts(m.need) + ")" + host + "; node offers " + human_bytes(double(m.node.bytes)) +
         " (" + m.node.source + ") for " + std::to_string(m.ranks_on_node) + " ranks";
}

std::optional<std::string> memory_refusal(const MemoryCheck& m, const Config& cfg) {
  const int64_t share = m.node.bytes / m.ranks_on_node;
  const MemorySplit split = split_memory(m.need, cfg);
  if (split.host <= share) return std::nullopt;
  const std::string offer = " but this node offers " + human_bytes(double(m.node.bytes)) + " (" +
                            m.node.source + ") for " + std::to_string(m.ranks_on_node) + " ranks, " +
                            human_bytes(double(share)) + " each; use ";
  if (split.device > 0)  // the model lives on the GPU: only staging can be large here
    return "memory: each rank of this train.device = \"cuda\" run needs " + device_run_host_part(split) +
           offer + "comm.backend = \"nccl\" (no host staging), fewer ranks per node or a smaller model";
  const auto& t = cfg.train;
  std::string knobs = "more nodes (model states are split over all ranks), a smaller " + m.need.batch_keys +
                      " (activations" + (m.need.decode > 0 ? ", KV cache" : "") + ")";
  if (m.need.states.secondary > 0) knobs += ", zero.hpz_partition_size = 1 (hpZ secondaries)";
  if (m.need.states.qgz > 0) knobs += ", zero.quantized_gradients = false (qgZ buffers)";
  if (m.need.checkpoint_snapshot > 0) knobs += ", checkpoint.async = false (its snapshot)";
  if (m.need.inference_weights > 0 && cfg.zero.inference_weights != WeightSource::Zero3)
    knobs += ", zero.inference_weights = zero3 (no copy of the weights)";
  knobs += " or a smaller model";
  return "memory: each rank needs " + human_bytes(double(m.need.total())) + " (model states " +
         human_bytes(double(m.need.states.total())) + ", activations for B=" + std::to_string(t.batch_size) +
         " T=" + std::to_string(t.seq_len) + " " + human_bytes(double(m.need.activations)) +
         inference_parts(m.need) + ")" + offer + knobs;
}

MemoryCheck check_memory(const MemoryEstimate& need, const Config& cfg, const Topology& topo) {
  MemoryCheck m;
  m.need = need;
  m.split = split_memory(need, cfg);
  // Emulated nodes share one machine: count the processes that really do.
  MPI_Comm shared = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_split_type(topo.world.get(), MPI_COMM_TYPE_SHARED, topo.rank, MPI_INFO_NULL, &shared));
  const UniqueComm owned(shared);
  ZCHECK_MPI(MPI_Comm_size(shared, &m.ranks_on_node));
  collectively(topo.world.get(), [&] {
    m.node = node_memory();
    if (const auto refusal = memory_refusal(m, cfg)) throw Error(*refusal);
  });
  return m;
}

void check_run_folders(const Config& cfg, RunFolderUse use) {
  const bool own_ckpt_dir = !cfg.checkpoint.dir.empty();
  check_writable_dir(cfg.train.out_dir, "train.out_dir");
  check_writable_dir(checkpoint_dir(cfg), own_ckpt_dir ? "checkpoint.dir" : "checkpoint folder");
  if (use != RunFolderUse::New) return;
  std::string key = "train.out_dir", dir = cfg.train.out_dir, found = dir + "/metrics.h5";
  std::error_code ec;
  if (!std::filesystem::exists(found, ec)) {
    found = resolve_checkpoint("auto", checkpoint_dir(cfg));
    if (found.empty()) return;
    if (own_ckpt_dir) key = "checkpoint.dir", dir = cfg.checkpoint.dir;
  }
  throw Error(key + " '" + dir + "': a previous run is there (" + found +
              "); continue it with --resume auto, replace it with --overwrite, or choose another " + key);
}

void remove_previous_run(const Config& cfg) {
  const std::string dir = checkpoint_dir(cfg);
  std::vector<std::string> doomed = {cfg.train.out_dir + "/metrics.h5", dir + "/latest"};
  std::error_code ec;
  for (const auto& f : doomed)
    if (!std::filesystem::remove(f, ec) && ec) throw Error(f + ": cannot remove: " + ec.message());
  // resolve_checkpoint yields the highest step left until none is.
  for (std::string f; !(f = resolve_checkpoint("auto", dir)).empty();)
    if (!std::filesystem::remove(f, ec)) throw Error(f + ": cannot remove: " + ec.message());
}

}  // namespace zeropp
