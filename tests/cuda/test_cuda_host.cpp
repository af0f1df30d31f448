// Host-side checks of the CUDA path: what runs without a GPU (device selection
// and its errors, argument checks of the kernel launchers, the cuBLAS backend's
// name). On a machine with a GPU the same cases pass; the device-side checks
// are tools/gpu_check (scripts/gpu-check).
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/comm_kernels.cuh"
#include "kernels/cuda/gemm_cublas.hpp"
#include "kernels/cuda/quantize.cuh"
#include "kernels/gemm/rounded_operand.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/runtime/device_context.hpp"
#include "src/device/cuda_device.hpp"

namespace zc = zeropp::cuda;

TEST_CASE("device_count never throws and explains a zero", "[cuda-host]") {
  std::string why;
  const int n = zc::device_count(&why);
  REQUIRE(n >= 0);
  if (n == 0) {
    INFO(why);
    REQUIRE(!why.empty());
    REQUIRE((why.find("driver") != std::string::npos || why.find("device") != std::string::npos));
  }
  REQUIRE(zc::device_count() == n);  // a failed first call leaves no sticky error behind
}

TEST_CASE("device_for_local_rank: one GPU per local rank, clear errors otherwise", "[cuda-host]") {
  REQUIRE(zc::device_for_local_rank(0, 1, 1) == 0);
  REQUIRE(zc::device_for_local_rank(3, 4, 8) == 3);
  REQUIRE(zc::device_for_local_rank(7, 8, 8) == 7);
  REQUIRE_THROWS_WITH(zc::device_for_local_rank(1, 4, 2),
                      Catch::Contains("4 ranks per node but only 2 visible CUDA device(s)"));
  REQUIRE_THROWS_AS(zc::device_for_local_rank(0, 1, 0), zc::DeviceError);
  REQUIRE_THROWS_AS(zc::device_for_local_rank(2, 2, 4), zc::DeviceError);
  REQUIRE_THROWS_AS(zc::device_for_local_rank(-1, 2, 4), zc::DeviceError);
}

TEST_CASE("device_for_local_rank shared (comm.device_staging): ranks wrap around the devices",
          "[cuda-host]") {
  REQUIRE(zc::device_for_local_rank(1, 2, 1, true) == 0);  // gpu-check part 3: 2 x 2 ranks on one GPU
  REQUIRE(zc::device_for_local_rank(3, 4, 2, true) == 1);
  REQUIRE(zc::device_for_local_rank(2, 4, 8, true) == 2);  // enough devices: the unshared choice
  REQUIRE_THROWS_AS(zc::device_for_local_rank(0, 1, 0, true), zc::DeviceError);
  REQUIRE_THROWS_AS(zc::device_for_local_rank(2, 2, 1, true), zc::DeviceError);
}

TEST_CASE("select_device: a DeviceError naming the rank when CUDA is unusable", "[cuda-host]") {
  const int n = zc::device_count();
  if (n == 0) {
    REQUIRE_THROWS_WITH(zc::select_device(0, 1), Catch::Contains("local rank 0: CUDA was requested but"));
    REQUIRE_THROWS_AS(zc::select_device(1, 2), zc::DeviceError);
  } else {
    const zc::DeviceInfo d = zc::select_device(0, 1);
    REQUIRE(d.ordinal == 0);
    REQUIRE(!d.name.empty());
    REQUIRE(d.describe().find("device 0: ") == 0);
    REQUIRE_THROWS_AS(zc::select_device(0, n + 1), zc::DeviceError);
  }
}

TEST_CASE("CUDA quantization launchers check shapes before touching a device", "[cuda-host]") {
  float* x = nullptr;
  float* s = nullptr;
  int8_t* q8 = nullptr;
  uint8_t* q4 = nullptr;
  REQUIRE_THROWS_WITH(zc::quantize_int8(x, q8, s, 100, 64), Catch::Contains("multiple of block"));
  REQUIRE_THROWS_WITH(zc::quantize_int4(x, q4, s, 12, 3), Catch::Contains("even block"));
  REQUIRE_THROWS_AS(zc::dequantize_int8(q8, s, x, 64, 0), std::invalid_argument);
  REQUIRE_THROWS_AS(zc::dequantize_int4_add(q4, s, x, -2, 2), std::invalid_argument);
  REQUIRE_THROWS_WITH(zc::dequant_sum_requant_int4(q4, s, 0, q4, s, 64, 64),
                      Catch::Contains("k must be at least 1"));
  REQUIRE_THROWS_AS(zc::dequant_sum_requant_int8_to_int4(q8, s, 2, q4, s, 66, 33), std::invalid_argument);
  REQUIRE_THROWS_AS(zc::dequant_sum_int8(q8, s, 0, x, 64, 64), std::invalid_argument);
  // qgZ reorder: n = X*Y*s with s a multiple of block.
  REQUIRE_THROWS_WITH(zc::qgz_reorder_quantize(4, x, q4, s, 6 * 64, 2, 3, 128),
                      Catch::Contains("s a multiple of block"));
  REQUIRE_THROWS_AS(zc::qgz_reorder_quantize(6, x, q4, s, 6 * 64, 2, 3, 64), std::invalid_argument);
  REQUIRE_THROWS_AS(zc::qgz_reorder_quantize(4, x, q4, s, 6 * 64, 0, 3, 64), std::invalid_argument);
  // n = 0 launches nothing, with or without a device.
  REQUIRE_NOTHROW(zc::quantize_int8(x, q8, s, 0, 64));
  REQUIRE_NOTHROW(zc::dequant_sum_int4(q4, s, 3, x, 0, 64));
  REQUIRE_NOTHROW(zc::ring_accumulate(x, false, x, x, 0));
}

// Its own ctest entry (cuda_host_nodevice), which reports the skip.
TEST_CASE("without a usable device a launch fails with an exception, not a crash", "[cuda-host-nodevice]") {
  if (zc::device_count() > 0) {
    WARN("SKIPPED: a device is present (tools/gpu_check covers launches on a GPU)");
    return;
  }
  float* x = nullptr;
  float* s = nullptr;
  int8_t* q8 = nullptr;
  REQUIRE_THROWS_WITH(zc::quantize_int8(x, q8, s, 256, 256), Catch::Contains("kernel launch failed"));
  REQUIRE_THROWS_AS(zc::sum_members(x, 2, x, 16), std::runtime_error);
}

TEST_CASE("cuBLAS backend name", "[cuda-host]") { REQUIRE(zc::gemm_backend_name().rfind("cuBLAS ", 0) == 0); }

TEST_CASE("kernel entry points under a device context: double and host-only paths refuse", "[cuda-host]") {
  using zeropp::CVec;
  using zeropp::Vec;
  const int N = 2, C = 3;
  std::vector<double> in{1, 2, 4, -1, 0, 5}, w{1, 2, 3}, b{0, 1, 0}, out(6), mean(N), rstd(N);
  const auto layernorm = [&] {
    zeropp::layernorm_forward<double>(Vec<double>(out.data(), 6), Vec<double>(mean.data(), N),
                                      Vec<double>(rstd.data(), N), CVec<double>(in.data(), 6),
                                      CVec<double>(w.data(), C), CVec<double>(b.data(), C), N, C);
  };
  REQUIRE(zeropp::device_context() == nullptr);
  {
    // Never dereferenced before the refusals: no device needed.
    zeropp::DeviceContext ctx;
    const zeropp::ScopedDeviceContext installed(&ctx);
    REQUIRE(zeropp::device_context() == &ctx);
    REQUIRE_THROWS_WITH(layernorm(), Catch::Contains("kernel layernorm_forward (double) has no CUDA twin"));
    REQUIRE(out == std::vector<double>(6, 0.0));  // nothing computed on the host either
    std::vector<float> x(4, 1.5f), scratch;
    REQUIRE_THROWS_WITH(zeropp::rounded_operand<float>(zeropp::Precision::BF16, x.data(), 4, scratch),
                        Catch::Contains("rounded_operand"));
    REQUIRE_THROWS_WITH(zeropp::ScopedDeviceContext(&ctx), Catch::Contains("already installed"));
  }
  // Without one the host computes: row 0 normalised is (-1.07, -0.27, 1.34) * w + b.
  REQUIRE(zeropp::device_context() == nullptr);
  layernorm();
  REQUIRE(mean[0] == Approx(7.0 / 3));
  REQUIRE(out[0] == Approx(-1.0690).epsilon(1e-3));
}
