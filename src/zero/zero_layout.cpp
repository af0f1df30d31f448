#include "src/zero/zero_layout.hpp"

#include "src/base/errors.hpp"

namespace zeropp {

int hpz_group_size(const ZeroConfig& z, int P, int X) {
  const int a = z.hpz_partition_size == 0 ? X : z.hpz_partition_size;
  if (a < 1 || a > P || P % a != 0)
    throw Error("zero.hpz_partition_size = " + std::to_string(z.hpz_partition_size) + ": a group of " +
                std::to_string(a) + " ranks does not divide P = " + std::to_string(P));
  return a;
}

int inference_group_size(const ZeroConfig& z, int P, int X) {
  const int a = hpz_group_size(z, P, X);
  return a == 1 ? X : a;
}

}  // namespace zeropp
