// A harness's corpus replayed as a test: every file in the folders given goes
// once through LLVMFuzzerTestOneInput, in name order, as libFuzzer's -runs=0
// would, so that every build (not only scripts/fuzz's clang one) runs the seeds
// and the inputs of past findings. A finding aborts inside the harness (its
// rule), which fails the ctest entry; the input being read is printed first.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> inputs_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER...\n", argv[0]);
    return 2;
  }
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (!std::filesystem::is_directory(argv[i], ec)) {
      std::fprintf(stderr, "%s: not a folder\n", argv[i]);
      return 1;
    }
    for (const std::filesystem::path& file : inputs_in(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.is_open() || in.bad()) {
        std::fprintf(stderr, "%s: cannot read it\n", file.c_str());
        return 1;
      }
      std::fprintf(stderr, "input %s (%zu bytes)\n", file.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "no inputs in the corpus folders given\n");
    return 1;
  }
  std::printf("replayed %zu inputs\n", replayed);
  return 0;
}
