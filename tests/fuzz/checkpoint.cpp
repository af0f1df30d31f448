// Damaged checkpoint files as `zeropp ckpt verify` and `--resume auto` read
// them: scanned in a child process, as zeropp does (HDF5 can crash on damaged
// metadata). Where the child survived, the scan runs again in this process,
// which is where the coverage that guides the fuzzer is counted and where the
// sanitizers watch our own code.
#include <cstdint>

#include "io/checkpoint/checkpoint_isolated.hpp"
#include "io/hdf5/h5_util.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::string path = fuzz::write_scratch("step_00000001.h5", std::string(data, data + size));
  const ckpt::IsolatedScan isolated = ckpt::scan_file_isolated(path, true);
  if (!isolated.error.empty()) fuzz::expect_one_line(Error(isolated.error), {path});
  if (isolated.child_died) return 0;
  h5::QuietHdf5 quiet;
  try {
    ckpt::scan_file(path, true);
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {path});
  }
  return 0;
}
