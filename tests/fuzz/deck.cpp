// Decks with command-line overrides as `zeropp train DECK --section.key=value`
// reads them: the input is the deck, then (after a NUL) one argument a line.
// A deck that loads must come back the same from the TOML that zeropp saves
// in each checkpoint (to_toml).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "src/config/config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::vector<std::string> parts = fuzz::split_input(data, size, 2);
  const std::string path = fuzz::write_scratch("deck.toml", parts[0]);
  std::vector<std::string> args;
  std::istringstream lines(parts[1]);
  for (std::string line; std::getline(lines, line);) args.push_back(line);
  try {
    const Config c = load_config(path, args);
    const std::vector<std::string> diff = config_differences(c, parse_config_text(to_toml(c), "saved deck"));
    if (!diff.empty()) {
      std::fprintf(stderr, "the saved deck differs: %s\n", diff[0].c_str());
      std::abort();
    }
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {path, "command line"});
  }
  return 0;
}
