// The median the benches report (their timings are noisy; a median ignores
// the odd preempted repetition).
#pragma once

#include <vector>

namespace zeropp {

// Median (mean of the middle two for an even count); throws Error when v is empty.
double median(std::vector<double> v);

}  // namespace zeropp
