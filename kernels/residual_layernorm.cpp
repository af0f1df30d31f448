#include "kernels/residual_layernorm.hpp"

#include "kernels/layernorm.hpp"
#include "kernels/layernorm_row.hpp"
#include "kernels/residual.hpp"

namespace zeropp {

template <class T>
void residual_layernorm_forward(Vec<T> res, Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> a, CVec<T> b,
                                CVec<T> weight, CVec<T> bias, int N, int C) {
  Kokkos::parallel_for(
      "residual_layernorm_forward", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        T* rr = res.data() + n * C;
        for (int c = 0; c < C; ++c) rr[c] = a(n * C + c) + b(n * C + c);
        // The row is still in cache for the statistics and the normalisation.
        const auto [m, s] = layernorm_row<T>(rr, out.data() + n * C, weight.data(), bias.data(), C);
        mean(n) = m;
        rstd(n) = s;
      });
}

template <class T>
void residual_layernorm_forward_reference(Vec<T> res, Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> a,
                                          CVec<T> b, CVec<T> weight, CVec<T> bias, int N, int C) {
  residual_forward_reference<T>(res, a, b, int64_t(N) * C);
  layernorm_forward_reference<T>(out, mean, rstd, res, weight, bias, N, C);
}

#define ZEROPP_INSTANTIATE_RESIDUAL_LAYERNORM(T)                                                          \
  template void residual_layernorm_forward<T>(Vec<T>, Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>,  \
                                              CVec<T>, int, int);                                         \
  template void residual_layernorm_forward_reference<T>(Vec<T>, Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, \
                                                        CVec<T>, CVec<T>, int, int);
ZEROPP_INSTANTIATE_RESIDUAL_LAYERNORM(float)
ZEROPP_INSTANTIATE_RESIDUAL_LAYERNORM(double)

}  // namespace zeropp
