#include "src/run/startup_rows.hpp"

#include <cstdio>

#include "src/run/build_info.hpp"

namespace zeropp {

StartupRows common_startup_rows(const std::string& deck, const Topology& topo, const ModelConfig& m,
                                int64_t parameters) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s L=%d C=%d H=%d V=%d T=%d", deck_name(m.family), m.n_layer, m.n_embd,
                m.n_head, m.vocab_size, m.max_seq_len);
  return {{"deck", deck},
          {"version", version_line()},
          {"ranks", topo.describe()},
          {"model", buf},
          {"parameters", std::to_string(parameters)}};
}

}  // namespace zeropp
