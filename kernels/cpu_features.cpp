#include "kernels/cpu_features.hpp"

#include <stdexcept>
#include <string>

namespace zeropp {

void require_quant_isa(const char* who) {
#if defined(__x86_64__) && defined(__GNUC__)
  // Compiled without -march: safe to run on any x86-64 CPU.
  static const bool ok = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
  if (!ok)
    throw std::runtime_error(std::string(who) +
                             ": this build's quantization kernels need an x86-64-v2 CPU (SSE4.2, POPCNT); "
                             "this CPU lacks them");
#else
  (void)who;
#endif
}

}  // namespace zeropp
