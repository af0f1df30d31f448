// The collective-bytes line at the end of training (gpu-check part 3 compares two runs' lines).
#include <catch2/catch.hpp>

#include "src/run/step_bytes.hpp"

using namespace zeropp;

TEST_CASE("step_bytes_line: every kind, intra and inter, summed over the ranks", "[step-bytes]") {
  ByteCounters b;
  b.at(Kind::AllGather, Purpose::FwdGather) = {100, 7};
  b.at(Kind::AllGather, Purpose::BwdGather) = {20, 1};
  b.at(Kind::AllReduce, Purpose::Other) = {0, 48};
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string line = step_bytes_line(5, b, MPI_COMM_WORLD);
  if (rank != 0) {
    CHECK(line.empty());
    return;
  }
  const auto n = [P](int64_t x) { return std::to_string(x * P); };
  CHECK(line ==
        "collective bytes | step 5 | all ranks | all-gather intra " + n(120) + " inter " + n(8) +
            " | reduce-scatter intra 0 inter 0 | all-to-all intra 0 inter 0 | all-reduce intra 0 inter " +
            n(48) + " | broadcast intra 0 inter 0");
}
