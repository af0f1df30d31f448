#include "src/run/run_folder.hpp"

#include "io/run_dir.hpp"
#include "src/base/errors.hpp"
#include "src/run/build_info.hpp"

namespace zeropp {

MetricsWriter open_run_folder(const Topology& topo, const Config& cfg, const std::string& deck_toml,
                              RunFolderUse use, bool resuming, const ResumePoint& from, LogFile& log,
                              const std::string& log_name) {
  collectively(topo.world.get(), [&] {
    if (topo.rank != 0) return;
    if (use == RunFolderUse::Overwrite) remove_previous_run(cfg);
    make_run_dir(cfg.train.out_dir);
    write_text_atomic(cfg.train.out_dir, "config.toml", deck_toml);
    log.open(cfg.train.out_dir + "/" + log_name, resuming);
  });
  MetricsOptions o;
  o.resume = !from.path.empty();
  o.resume_step = from.step;
  return MetricsWriter(topo.world.get(), cfg.train.out_dir,
                       RunInfo{deck_toml, topo.P, topo.X, topo.Y, version_line(), {}}, o);
}

}  // namespace zeropp
