// Shared helpers for the kernel tests: random buffers, elementwise
// comparison, a central-finite-difference gradient checker (double precision)
// and a check that a backward pass accumulates into its gradients.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/runtime/common.hpp"

namespace zeropp::test {

template <class T>
Buf<T> random_buf(int64_t n, std::mt19937& rng, double lo = -1, double hi = 1) {
  Buf<T> b("random", n);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < n; ++i) b(i) = T(u(rng));
  return b;
}

inline Buf<int32_t> random_ints(int64_t n, int32_t hi, std::mt19937& rng) {
  Buf<int32_t> b("ints", n);
  std::uniform_int_distribution<int32_t> u(0, hi - 1);
  for (int64_t i = 0; i < n; ++i) b(i) = u(rng);
  return b;
}

template <class T>
Buf<T> copy_of(CVec<T> v) {
  Buf<T> b("copy", v.size());
  for (size_t i = 0; i < v.size(); ++i) b(i) = v(i);
  return b;
}

// Tolerance for comparing a fast kernel with its reference in precision T.
template <class T>
constexpr double ref_tol() {
  return sizeof(T) == 4 ? 2e-5 : 1e-12;
}

// |a - b| <= tol * (1 + |b|) elementwise, reporting the first mismatch.
template <class T>
void require_close(CVec<T> a, CVec<T> b, double tol, const std::string& what) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a(i), y = b(i);
    if (!(std::fabs(x - y) <= tol * (1 + std::fabs(y)))) {
      INFO(what << "[" << i << "]: " << x << " vs " << y);
      REQUIRE(std::fabs(x - y) <= tol * (1 + std::fabs(y)));
    }
  }
}

// a and b hold the same bits (the sign of zero and NaNs included), reporting
// the first difference.
template <class T>
void require_same_bits(CVec<T> a, CVec<T> b, const std::string& what) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a(i), &b(i), sizeof(T)) != 0) {
      INFO(what << "[" << i << "]: " << a(i) << " vs " << b(i));
      REQUIRE(std::memcmp(&a(i), &b(i), sizeof(T)) == 0);
    }
}

template <class T>
Buf<T> nan_buf(int64_t n) {
  Buf<T> b("nan", n);
  Kokkos::deep_copy(b, std::numeric_limits<T>::quiet_NaN());
  return b;
}

// L = sum(out ⊙ R): the scalar loss whose gradient w.r.t. out is R.
inline double dot(CVec<double> a, CVec<double> b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a(i) * b(i);
  return s;
}

// Compares grad with the central finite difference of loss() w.r.t. every
// element of x (x is perturbed in place and restored).
inline void check_gradient(const std::string& name, Vec<double> x, CVec<double> grad,
                           const std::function<double()>& loss, double eps = 1e-6, double rtol = 1e-6,
                           double atol = 1e-8) {
  REQUIRE(x.size() == grad.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double x0 = x(i);
    x(i) = x0 + eps;
    const double lp = loss();
    x(i) = x0 - eps;
    const double lm = loss();
    x(i) = x0;
    const double fd = (lp - lm) / (2 * eps), an = grad(i);
    const double err = std::fabs(fd - an), bound = rtol * std::max(std::fabs(fd), std::fabs(an)) + atol;
    if (!(err <= bound)) {
      INFO("d/d" << name << "[" << i << "]: analytic " << an << ", finite difference " << fd);
      REQUIRE(err <= bound);
    }
  }
}

// Fills grads with random values, runs backward twice, and requires that the
// second call adds exactly what the first did (so backward accumulates with +=
// and neither overwrites nor ignores what was there). The increment must be
// non-zero somewhere in each gradient.
inline void check_accumulates(std::vector<Buf<double>> grads, const std::function<void()>& backward) {
  std::mt19937 rng(99);
  std::vector<Buf<double>> g0, g1;
  for (auto& g : grads) {
    Buf<double> r = random_buf<double>(g.size(), rng);
    Kokkos::deep_copy(g, r);
    g0.push_back(r);
  }
  backward();
  for (auto& g : grads) g1.push_back(copy_of<double>(g));
  backward();
  for (size_t k = 0; k < grads.size(); ++k) {
    double max_inc = 0;
    for (size_t i = 0; i < grads[k].size(); ++i) {
      const double inc1 = g1[k](i) - g0[k](i), inc2 = grads[k](i) - g1[k](i);
      max_inc = std::max(max_inc, std::fabs(inc1));
      if (!(std::fabs(inc2 - inc1) <= 1e-12 * (1 + std::fabs(inc1)))) {
        INFO("gradient " << k << "[" << i << "]: first increment " << inc1 << ", second " << inc2);
        REQUIRE(std::fabs(inc2 - inc1) <= 1e-12 * (1 + std::fabs(inc1)));
      }
    }
    INFO("gradient " << k << " received no increment");
    REQUIRE(max_inc > 0);
  }
}

}  // namespace zeropp::test
