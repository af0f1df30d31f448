#include "io/checkpoint/checkpoint_locate.hpp"

#include <filesystem>

#include "io/checkpoint/checkpoint.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace fs = std::filesystem;

std::string locate_checkpoint(const std::string& arg) {
  std::error_code ec;
  const fs::path p(arg);
  if (!fs::exists(p, ec)) throw Error(arg + ": no such checkpoint, checkpoint folder or run folder");
  fs::path dir;
  if (fs::is_directory(p, ec)) {
    // A run folder holds config.toml and checkpoints/, a checkpoint folder neither.
    const bool run_folder = fs::is_directory(p / "checkpoints", ec) && fs::exists(p / "config.toml", ec);
    dir = run_folder ? p / "checkpoints" : p;
  } else if (p.filename() == "latest") {
    dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  } else {
    return arg;
  }
  const std::string found = resolve_checkpoint(dir.string(), dir.string());
  if (found.empty()) {
    // A run folder whose checkpoint.dir points elsewhere has config.toml but no checkpoints/.
    const bool other_dir = dir == p && fs::exists(p / "config.toml", ec);
    throw Error(arg + ": no checkpoint in " + dir.string() +
                (other_dir ? " (a run folder with checkpoint.dir elsewhere? give that folder)" : ""));
  }
  return found;
}

}  // namespace zeropp
