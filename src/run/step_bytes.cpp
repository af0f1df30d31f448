#include "src/run/step_bytes.hpp"

#include "src/base/errors.hpp"

namespace zeropp {

std::string step_bytes_line(int64_t step, const ByteCounters& mine, MPI_Comm world) {
  int64_t local[2 * kNumKinds], all[2 * kNumKinds] = {};
  for (int k = 0; k < kNumKinds; ++k) {
    const auto b = mine.of(Kind(k));
    local[2 * k] = b.intra;
    local[2 * k + 1] = b.inter;
  }
  ZCHECK_MPI(MPI_Reduce(local, all, 2 * kNumKinds, MPI_INT64_T, MPI_SUM, 0, world));
  int rank = 0;
  ZCHECK_MPI(MPI_Comm_rank(world, &rank));
  if (rank != 0) return "";
  std::string line = "collective bytes | step " + std::to_string(step) + " | all ranks";
  for (int k = 0; k < kNumKinds; ++k)
    line += std::string(" | ") + name_of(Kind(k)) + " intra " + std::to_string(all[2 * k]) + " inter " +
            std::to_string(all[2 * k + 1]);
  return line;
}

}  // namespace zeropp
