// What the device kernel tests share (tests/cuda/test_cuda_kernels.cpp): a
// device copy of a host vector, the skip when no device is usable, and the
// comparison of a device result with its host twin's, bit for bit or within
// a stated tolerance.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cuda/check.hpp"
#include "kernels/runtime/common.hpp"
#include "src/device/cuda_device.hpp"

namespace zeropp::test {

// True with a usable device; otherwise says "SKIPPED: ..." (the ctest entry's
// skip pattern) and the case returns. Either every case runs or every one skips.
inline bool device_or_skip() {
  static std::string why;
  static const int n = cuda::device_count(&why);
  if (n == 0) WARN("SKIPPED: no usable CUDA device (" << why << ")");
  return n > 0;
}

// A device copy of a host vector, freed at scope exit.
template <class T>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<T>& h) : n_(h.size()) {
    ZCHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<size_t>(n_, 1) * sizeof(T)));
    ZCHECK_CUDA(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceCopy() { cudaFree(p_); }  // a failure here would only hide the test's own error
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  T* get() const { return p_; }
  // Waits for the device, then copies back.
  std::vector<T> host() const {
    ZCHECK_CUDA(cudaDeviceSynchronize());
    std::vector<T> h(n_);
    ZCHECK_CUDA(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  T* p_ = nullptr;
  size_t n_;
};

// Views of host vectors (the host kernels' arguments).
template <class T>
Vec<T> view(std::vector<T>& v) {
  return Vec<T>(v.data(), v.size());
}
template <class T>
CVec<T> cview(const std::vector<T>& v) {
  return CVec<T>(v.data(), v.size());
}

inline std::vector<float> random_floats(size_t n, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Device outputs start as NaN: an element a kernel fails to write cannot match.
inline std::vector<float> nan_filled(size_t n) { return std::vector<float>(n, std::nanf("")); }

inline std::vector<int32_t> random_tokens(size_t n, int32_t hi, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> u(0, hi - 1);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Agreement of a device result with the host's: bit for bit, or within
// |dev - host| <= rtol * |host| + atol. NaN only matches NaN.
struct Tolerance {
  double rtol = 0, atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};
constexpr Tolerance kBitExact{};

// The first element outside the tolerance ("" when all agree), and the count.
inline std::string first_mismatch(const std::vector<float>& dev, const std::vector<float>& host,
                                  Tolerance tol) {
  if (dev.size() != host.size()) return "sizes differ";
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < dev.size(); ++i) {
    bool ok;
    if (tol.exact()) {
      ok = std::memcmp(&dev[i], &host[i], sizeof(float)) == 0;
    } else if (std::isnan(host[i]) || std::isnan(dev[i])) {
      ok = std::isnan(host[i]) && std::isnan(dev[i]);
    } else {
      ok = std::fabs(double(dev[i]) - host[i]) <= tol.rtol * std::fabs(double(host[i])) + tol.atol;
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  std::ostringstream s;
  s.precision(9);
  s << bad << " of " << dev.size() << " differ; first [" << first << "]: device " << dev[first] << ", host "
    << host[first];
  return s.str();
}

#define REQUIRE_AGREES(what, dev, host, tol)                      \
  do {                                                            \
    const std::string mismatch_ = first_mismatch(dev, host, tol); \
    INFO(what << ": " << mismatch_);                              \
    REQUIRE(mismatch_.empty());                                   \
  } while (0)

}  // namespace zeropp::test
