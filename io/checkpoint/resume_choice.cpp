#include "io/checkpoint/resume_choice.hpp"

#include <filesystem>
#include <optional>

#include "io/checkpoint/checkpoint.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace {

// Why `path` cannot be resumed from, or "" when every checksum matches.
std::string verify_problem(const std::string& path) {
  try {
    const CheckpointReport r = inspect_checkpoint(path);
    for (const auto& d : r.datasets)
      if (!d.checksum_ok) return d.path + ": " + (d.problem.empty() ? "checksum mismatch" : d.problem);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

ResumeChoice choose_resume_checkpoint(MPI_Comm comm, const std::string& which, const std::string& dir) {
  int rank = 0;
  ZCHECK_MPI(MPI_Comm_rank(comm, &rank));
  std::error_code ec;
  const bool search = which == "auto" || std::filesystem::is_directory(which, ec);
  if (!search) return {collectively(comm, [&] { return resolve_checkpoint(which, dir); }), {}};
  ResumeChoice c;
  std::optional<std::string> err;
  if (rank == 0) {
    const std::string d = which == "auto" ? dir : which;
    for (const std::string& p : checkpoint_candidates(d)) {
      const std::string problem = verify_problem(p);
      if (problem.empty()) {
        c.path = p;
        break;
      }
      c.skipped.push_back(std::filesystem::path(p).filename().string() + " (" + problem + ")");
    }
    if (c.path.empty() && !c.skipped.empty()) {
      std::string all;
      for (const auto& s : c.skipped) all += (all.empty() ? "" : "; ") + s;
      err = "resume: no checkpoint in " + d + " verifies: " + all;
    }
  }
  agree_on_error(comm, err);
  int len = int(c.path.size());
  ZCHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
  c.path.resize(size_t(len));
  ZCHECK_MPI(MPI_Bcast(c.path.data(), len, MPI_CHAR, 0, comm));
  return c;
}

}  // namespace zeropp
