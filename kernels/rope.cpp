#include "kernels/rope.hpp"

#include <cmath>

namespace zeropp {

namespace {
constexpr double kBase = 10000.0;

// Rotates every (q and k) pair of row bt by +theta (sign 1) or -theta (sign
// -1), from x into y (accumulating when acc); copies (or adds) v.
template <class T>
KOKKOS_INLINE_FUNCTION void rotate_row(T* y, const T* x, int t, int C, int hs, T sign, bool acc) {
  for (int h = 0; h < 2 * C / hs; ++h)
    for (int i = 0; i < hs / 2; ++i) {
      const T theta = T(t) * Kokkos::Experimental::pow(T(kBase), -T(2 * i) / T(hs));
      const T c = Kokkos::Experimental::cos(theta), s = sign * Kokkos::Experimental::sin(theta);
      const int j = h * hs + 2 * i;
      const T a = x[j] * c - x[j + 1] * s, b = x[j] * s + x[j + 1] * c;
      y[j] = acc ? y[j] + a : a;
      y[j + 1] = acc ? y[j + 1] + b : b;
    }
  for (int j = 2 * C; j < 3 * C; ++j) y[j] = acc ? y[j] + x[j] : x[j];
}
}  // namespace

template <class T>
void rope_forward(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH) {
  T* o = out.data();
  const T* x = inp.data();
  const int hs = C / NH;
  Kokkos::parallel_for(
      "rope_forward", Range(0, int64_t(B) * Tn), KOKKOS_LAMBDA(const int64_t bt) {
        rotate_row(o + bt * 3 * C, x + bt * 3 * C, int(bt % Tn), C, hs, T(1), false);
      });
}

template <class T>
void rope_backward(Vec<T> dinp, CVec<T> dout, int B, int Tn, int C, int NH) {
  T* dx = dinp.data();
  const T* dy = dout.data();
  const int hs = C / NH;
  Kokkos::parallel_for(
      "rope_backward", Range(0, int64_t(B) * Tn), KOKKOS_LAMBDA(const int64_t bt) {
        rotate_row(dx + bt * 3 * C, dy + bt * 3 * C, int(bt % Tn), C, hs, T(-1), true);
      });
}

template <class T>
void rope_forward_reference(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH) {
  const int hs = C / NH;
  for (int64_t bt = 0; bt < int64_t(B) * Tn; ++bt) {
    const double t = double(bt % Tn);
    const int64_t row = bt * 3 * C;
    for (int j = 0; j < 3 * C; ++j) out(row + j) = inp(row + j);
    for (int j = 0; j < 2 * C; j += 2) {
      const int i = (j % hs) / 2;
      const double theta = t / std::pow(kBase, 2.0 * i / hs);
      const double x0 = inp(row + j), x1 = inp(row + j + 1);
      out(row + j) = T(x0 * std::cos(theta) - x1 * std::sin(theta));
      out(row + j + 1) = T(x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  }
}

template <class T>
void rope_backward_reference(Vec<T> dinp, CVec<T> dout, int B, int Tn, int C, int NH) {
  const int hs = C / NH;
  for (int64_t bt = 0; bt < int64_t(B) * Tn; ++bt) {
    const double t = double(bt % Tn);
    const int64_t row = bt * 3 * C;
    for (int j = 2 * C; j < 3 * C; ++j) dinp(row + j) += dout(row + j);
    for (int j = 0; j < 2 * C; j += 2) {
      const int i = (j % hs) / 2;
      const double theta = t / std::pow(kBase, 2.0 * i / hs);
      const double d0 = dout(row + j), d1 = dout(row + j + 1);
      dinp(row + j) += T(d0 * std::cos(theta) + d1 * std::sin(theta));
      dinp(row + j + 1) += T(-d0 * std::sin(theta) + d1 * std::cos(theta));
    }
  }
}

#define ZEROPP_INSTANTIATE_ROPE(T)                                              \
  template void rope_forward<T>(Vec<T>, CVec<T>, int, int, int, int);           \
  template void rope_backward<T>(Vec<T>, CVec<T>, int, int, int, int);          \
  template void rope_forward_reference<T>(Vec<T>, CVec<T>, int, int, int, int); \
  template void rope_backward_reference<T>(Vec<T>, CVec<T>, int, int, int, int);
ZEROPP_INSTANTIATE_ROPE(float)
ZEROPP_INSTANTIATE_ROPE(double)

}  // namespace zeropp
