#include "kernels/ops/sum_squares.hpp"

#include <type_traits>
#include <vector>

#include "kernels/ops/lane_sum.hpp"
#include "kernels/runtime/device_context.hpp"
#include "kernels/runtime/parallel_chunks.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/ops.hpp"
#endif

namespace zeropp {

namespace {

template <class T>
struct SumSquares {
  static ZEROPP_SIMD_INLINE double run(const T* x, int64_t n) {
    return lane_sum<double>(n,
                            [x](int64_t i) ZEROPP_SIMD_INLINE_LAMBDA { return double(x[i]) * double(x[i]); });
  }
};

}  // namespace

template <class T>
double sum_squares(CVec<T> x, int64_t n) {
  ZEROPP_ON_DEVICE(T, "sum_squares", cuda::sum_squares(x.data(), n, ZD->stream));
  // One partial per fixed chunk, added in chunk order: the same sum on any thread count.
  std::vector<double> partial(size_t(chunk_count(n, kChunkElements)));
  parallel_chunks(n, kChunkElements, [&](int64_t i, int64_t b, int64_t e) {
    partial[size_t(i)] = simd_dispatch<SumSquares<T>>(x.data() + b, e - b);
  });
  double total = 0;
  for (const double p : partial) total += p;
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
