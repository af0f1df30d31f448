// Rotary position embedding on the GPU (kernels/ops/rope.hpp is the contract): one
// thread per (row, channel pair) of q and k, rotating by theta = t *
// 10000^(-2i/hs) with the host's float expression (t = pos0 + the row's
// position for rope_forward_at, generation after pos0 cached tokens), and one
// thread per v channel, copied (forward) or accumulated (backward, which
// rotates by -theta; copied too with GradMode::Overwrite). theta reaches pos0 + Tn radians and the device's
// powf is within 4 ulp (cosf, sinf 2 ulp) of the true value, the host's within 1: agreement within absolute
// 1e-6 * (pos0 + Tn) of inputs of magnitude 1 (plus relative 1e-5), v bit for bit.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {
constexpr float kBase = 10000.0f;

// Rows of 3C (q | k | v); 2C threads a row: C pairs of q and k, then C of v.
void rope_rows(float* y, const float* x, int B, int Tn, int C, int NH, int pos0, float sign, bool acc,
               cudaStream_t stream) {
  const int hs = C / NH;
  detail::for_each_index(int64_t(B) * Tn * 2 * C, stream, [=] __device__(int64_t k) {
    const int64_t bt = k / (2 * C);
    const int r = int(k % (2 * C));
    const float* xr = x + bt * 3 * C;
    float* yr = y + bt * 3 * C;
    if (r >= C) {  // v
      const int j = 2 * C + (r - C);
      yr[j] = acc ? yr[j] + xr[j] : xr[j];
      return;
    }
    const int j = 2 * r, i = (j % hs) / 2;
    const float theta = float(pos0 + int(bt % Tn)) * powf(kBase, -float(2 * i) / float(hs));
    const float c = cosf(theta), s = sign * sinf(theta);
    const float a = xr[j] * c - xr[j + 1] * s, b = xr[j] * s + xr[j + 1] * c;
    yr[j] = acc ? yr[j] + a : a;
    yr[j + 1] = acc ? yr[j + 1] + b : b;
  });
}
}  // namespace

void rope_forward(float* out, const float* inp, int B, int Tn, int C, int NH, cudaStream_t stream) {
  rope_forward_at(out, inp, B, Tn, C, NH, 0, stream);
}

void rope_forward_at(float* out, const float* inp, int B, int Tn, int C, int NH, int pos0,
                     cudaStream_t stream) {
  rope_rows(out, inp, B, Tn, C, NH, pos0, 1.0f, false, stream);
}

void rope_backward(float* dinp, const float* dout, int B, int Tn, int C, int NH, GradMode dinp_mode,
                   cudaStream_t stream) {
  rope_rows(dinp, dout, B, Tn, C, NH, 0, -1.0f, dinp_mode == GradMode::Accumulate, stream);
}

}  // namespace zeropp::cuda
