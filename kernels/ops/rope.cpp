#include "kernels/ops/rope.hpp"

#include <cmath>

#include "kernels/runtime/device_dispatch.hpp"

namespace zeropp {

namespace {
constexpr double kBase = 10000.0;

// Rotates every (q and k) pair of row bt by +theta (sign 1) or -theta (sign
// -1), from x into y (accumulating when acc); copies (or adds) v.
template <class T>
KOKKOS_INLINE_FUNCTION void rotate_row(T* y, const T* x, int t, int C, int hs, T sign, bool acc) {
  for (int h = 0; h < 2 * C / hs; ++h)
    for (int i = 0; i < hs / 2; ++i) {
      const T theta = T(t) * std::pow(T(kBase), -T(2 * i) / T(hs));
      const T c = std::cos(theta), s = sign * std::sin(theta);
      const int j = h * hs + 2 * i;
      const T a = x[j] * c - x[j + 1] * s, b = x[j] * s + x[j + 1] * c;
      y[j] = acc ? y[j] + a : a;
      y[j + 1] = acc ? y[j + 1] + b : b;
    }
  for (int j = 2 * C; j < 3 * C; ++j) y[j] = acc ? y[j] + x[j] : x[j];
}
}  // namespace

namespace {
// Every row of x rotated by sign·theta into y (added to y when acc).
template <class T>
void rope_rows(const char* name, T* y, const T* x, int B, int Tn, int C, int NH, T sign, bool acc, int pos0) {
  const int hs = C / NH;
  Kokkos::parallel_for(
      name, Range(0, int64_t(B) * Tn), KOKKOS_LAMBDA(const int64_t bt) {
        rotate_row(y + bt * 3 * C, x + bt * 3 * C, pos0 + int(bt % Tn), C, hs, sign, acc);
      });
}

// The same in plain double arithmetic per element, the tests' reference.
template <class T>
void rope_rows_reference(Vec<T> y, CVec<T> x, int B, int Tn, int C, int NH, double sign, bool acc, int pos0) {
  const int hs = C / NH;
  for (int64_t bt = 0; bt < int64_t(B) * Tn; ++bt) {
    const double t = double(pos0 + bt % Tn);
    const int64_t row = bt * 3 * C;
    for (int j = 0; j < 3 * C; j += 2) {
      double a = x(row + j), b = x(row + j + 1);
      if (j < 2 * C) {  // q and k rotate, v passes through
        const double theta = t / std::pow(kBase, 2.0 * ((j % hs) / 2) / hs);
        const double c = std::cos(theta), s = sign * std::sin(theta);
        const double a0 = a;
        a = a0 * c - b * s;
        b = a0 * s + b * c;
      }
      y(row + j) = acc ? y(row + j) + T(a) : T(a);
      y(row + j + 1) = acc ? y(row + j + 1) + T(b) : T(b);
    }
  }
}
}  // namespace

template <class T>
void rope_forward(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH) {
  ZEROPP_ON_DEVICE(T, "rope_forward", cuda::rope_forward(out.data(), inp.data(), B, Tn, C, NH, ZD->stream));
  rope_forward_at<T>(out, inp, B, Tn, C, NH, 0);
}

template <class T>
void rope_forward_at(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH, int pos0) {
  ZEROPP_ON_DEVICE(T, "rope_forward_at",
                   cuda::rope_forward_at(out.data(), inp.data(), B, Tn, C, NH, pos0, ZD->stream));
  rope_rows("rope_forward", out.data(), inp.data(), B, Tn, C, NH, T(1), false, pos0);
}

template <class T>
void rope_backward(Vec<T> dinp, CVec<T> dout, int B, int Tn, int C, int NH, GradMode dinp_mode) {
  ZEROPP_ON_DEVICE(T, "rope_backward",
                   cuda::rope_backward(dinp.data(), dout.data(), B, Tn, C, NH, dinp_mode, ZD->stream));
  rope_rows("rope_backward", dinp.data(), dout.data(), B, Tn, C, NH, T(-1), dinp_mode == GradMode::Accumulate,
            0);
}

template <class T>
void rope_forward_reference(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH) {
  rope_forward_at_reference<T>(out, inp, B, Tn, C, NH, 0);
}

template <class T>
void rope_forward_at_reference(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH, int pos0) {
  rope_rows_reference(out, inp, B, Tn, C, NH, 1.0, false, pos0);
}

template <class T>
void rope_backward_reference(Vec<T> dinp, CVec<T> dout, int B, int Tn, int C, int NH, GradMode dinp_mode) {
  rope_rows_reference(dinp, dout, B, Tn, C, NH, -1.0, dinp_mode == GradMode::Accumulate, 0);
}

#define ZEROPP_INSTANTIATE_ROPE(T)                                                         \
  template void rope_forward<T>(Vec<T>, CVec<T>, int, int, int, int);                      \
  template void rope_backward<T>(Vec<T>, CVec<T>, int, int, int, int, GradMode);           \
  template void rope_forward_reference<T>(Vec<T>, CVec<T>, int, int, int, int);            \
  template void rope_backward_reference<T>(Vec<T>, CVec<T>, int, int, int, int, GradMode); \
  template void rope_forward_at<T>(Vec<T>, CVec<T>, int, int, int, int, int);              \
  template void rope_forward_at_reference<T>(Vec<T>, CVec<T>, int, int, int, int, int);
ZEROPP_INSTANTIATE_ROPE(float)
ZEROPP_INSTANTIATE_ROPE(double)

}  // namespace zeropp
