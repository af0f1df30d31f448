#include "src/serve/inference_run.hpp"

#include "io/checkpoint/checkpoint.hpp"
#include "io/checkpoint/checkpoint_locate.hpp"
#include "src/base/errors.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/memory/inference_memory.hpp"
#include "src/run/device_run.hpp"
#include "src/run/save_and_resume.hpp"

namespace zeropp {

namespace {

// The checkpoint ARG leads to (rank 0 looks; every rank gets its answer).
std::string located(const std::string& arg) {
  std::string path =
      collectively(MPI_COMM_WORLD, [&] { return world_rank() == 0 ? locate_checkpoint(arg) : ""; });
  int n = int(path.size());
  ZCHECK_MPI(MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD));
  path.resize(size_t(n));
  ZCHECK_MPI(MPI_Bcast(path.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD));
  return path;
}

Config saved_config(const std::string& path, const std::vector<std::string>& overrides, int batch,
                    int seq_len) {
  const CheckpointMeta saved = read_checkpoint(MPI_COMM_WORLD, path, {});
  Config c = parse_config_text(saved.deck_toml, path + " (saved deck)");
  // Where the checkpoint was trained does not carry over: generate and eval compute on the host.
  c.train.device = Device::Host;
  c.train.tf32 = false;
  collectively(MPI_COMM_WORLD, [&] {
    apply_overrides(c, overrides);
    if (batch > 0) c.train.batch_size = batch;
    if (seq_len != 0) c.train.seq_len = seq_len > 0 ? seq_len : c.model.max_seq_len;
    validate(c);
    require_host(c, "generate/eval");
  });
  return c;
}

}  // namespace

InferenceRun::InferenceRun(const std::string& arg, const std::vector<std::string>& overrides, int batch,
                           int seq_len, std::optional<Decoding> generating)
    : path(located(arg)),
      cfg(saved_config(path, overrides, batch, seq_len)),
      topo(cfg.zero.ranks_per_node, MPI_COMM_WORLD),
      memory(check_memory(generating ? estimate_generate_memory(cfg, topo.P, topo.X, *generating)
                                     : estimate_frozen_memory(cfg, topo.P, topo.X),
                          cfg, topo)),
      comm(collectively(topo.world.get(),
                        [&] {
                          return make_communicator(cfg.comm.backend, topo, cfg.comm.timeout_s, false,
                                                   cfg.comm.device_staging);
                        })),
      model(make_model<float>(cfg.model, cfg.train.batch_size, cfg.train.seq_len)),
      engine(cfg, topo, *comm, *model, true) {
  model->set_precision(cfg.train.precision);
  step = load_model_weights(topo, engine, model->describe(), cfg, path, "load");
}

}  // namespace zeropp
