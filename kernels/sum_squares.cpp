#include "kernels/sum_squares.hpp"

namespace zeropp {

template <class T>
double sum_squares(CVec<T> x, int64_t n) {
  const T* px = x.data();
  double total = 0;
  Kokkos::parallel_reduce(
      "sum_squares", Range(0, n),
      KOKKOS_LAMBDA(const int64_t i, double& acc) { acc += double(px[i]) * double(px[i]); }, total);
  return total;
}

template <class T>
double sum_squares_reference(CVec<T> x, int64_t n) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += double(x(i)) * double(x(i));
  return total;
}

template double sum_squares<float>(CVec<float>, int64_t);
template double sum_squares<double>(CVec<double>, int64_t);
template double sum_squares_reference<float>(CVec<float>, int64_t);
template double sum_squares_reference<double>(CVec<double>, int64_t);

}  // namespace zeropp
