#include "src/bench.hpp"
// placeholder until the engine lands
namespace zeropp { int run_bench_step(const Config&, int) { return 0; } }
