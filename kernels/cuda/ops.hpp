// The model's operations on the GPU: the CUDA twins of kernels/<op>.hpp.
//
// Each function has the host kernel's name, argument order and semantics
// (shapes, overwrite vs accumulate, aliasing) with raw device pointers in place
// of the Views, fp32 only (the model keeps everything but its GEMMs in fp32,
// kernels/precision.hpp), and the stream last. The host header is the
// specification; kernels/cuda/<op>.cu says how the GPU computes it and how
// closely it agrees (tests/cuda/test_cuda_kernels.cpp checks each on the device).
// Calls are asynchronous on `stream`, except sum_squares, which returns its
// value. A failed launch aborts with file:line and rank (kernels/cuda/check.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/comm_kernels.cuh"  // to_bf16 (kernels/ops/convert.hpp) is the collectives'
#include "kernels/cuda/gemm_cublas.hpp"
#include "kernels/runtime/grad_mode.hpp"
#include "src/base/precision.hpp"

namespace zeropp::cuda {

// kernels/ops/encoder.hpp; wpe (and dwpe) nullptr: no position embedding.
void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B, int Tn,
                     int C, cudaStream_t stream = nullptr);
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int Tn,
                      int C, cudaStream_t stream = nullptr);

// kernels/ops/matmul.hpp: the GEMMs through cuBLAS on blas's stream (bf16 ones at
// Precision::BF16); bias nullptr: no bias, dbias nullptr: no bias gradient.
void matmul_forward(Blas& blas, float* out, const float* inp, const float* weight, const float* bias, int N,
                    int C, int OC, Trans wlayout = Trans::N, Precision prec = Precision::FP32);
void matmul_forward_accumulate(Blas& blas, float* out, const float* inp, const float* weight, int N, int C,
                               int OC, Trans wlayout = Trans::N, Precision prec = Precision::FP32);
void matmul_backward(Blas& blas, float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int N, int C, int OC, Trans wlayout = Trans::N,
                     Precision prec = Precision::FP32, GradMode dinp_mode = GradMode::Accumulate);

// kernels/ops/layernorm.hpp
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C, cudaStream_t stream = nullptr);
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C,
                        cudaStream_t stream = nullptr);

// kernels/ops/attention.hpp: cuBLAS batched GEMMs on blas's stream and the fused
// mask + softmax (and its backward) between them.
void attention_forward(Blas& blas, float* out, float* preatt, float* att, const float* qkv, int B, int Tn,
                       int C, int NH);
void attention_backward(Blas& blas, float* dqkv, float* dpreatt, float* datt, const float* dout,
                        const float* qkv, const float* att, int B, int Tn, int C, int NH,
                        GradMode dqkv_mode = GradMode::Accumulate);

// kernels/ops/causal_softmax.hpp: the fused mask + softmax between attention's GEMMs.
void causal_softmax_forward(float* att, const float* pre, int64_t rows, int Tn,
                            cudaStream_t stream = nullptr);
void causal_softmax_backward(float* dpre, const float* att, const float* datt, int64_t rows, int Tn,
                             float scale, cudaStream_t stream = nullptr);

// kernels/ops/attention_decode.hpp: new queries against the KV cache (generation).
void attention_decode(Blas& blas, float* out, float* att, const float* qkv, const float* kcache,
                      const float* vcache, int B, int Tn, int pos, int Tmax, int C, int NH);

// kernels/ops/gelu.hpp
void gelu_forward(float* out, const float* inp, int64_t n, cudaStream_t stream = nullptr);
void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n,
                   cudaStream_t stream = nullptr);

// kernels/ops/bias_gelu.hpp: GELU's backward with the MLP's fc bias gradient.
void bias_gelu_backward(float* dpre, float* dbias, const float* pre, const float* dout, int N, int OC,
                        GradMode dpre_mode = GradMode::Accumulate, cudaStream_t stream = nullptr);

// kernels/ops/residual.hpp
void residual_forward(float* out, const float* a, const float* b, int64_t n, cudaStream_t stream = nullptr);
void residual_backward(float* da, float* db, const float* dout, int64_t n, cudaStream_t stream = nullptr);

// kernels/ops/layernorm_seed.hpp (its backward is layernorm_backward).
void layernorm_seed_forward(float* out, float* mean, float* rstd, float* seed, const float* inp,
                            const float* weight, const float* bias, const float* seed_bias, int N, int C,
                            cudaStream_t stream = nullptr);

// kernels/ops/crossentropy.hpp; targets nullptr: no losses (inference).
void softmax_crossentropy_forward(float* probs, float* losses, const float* logits, const int32_t* targets,
                                  int N, int V, cudaStream_t stream = nullptr);
void softmax_crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets, float dloss,
                                   int N, int V, cudaStream_t stream = nullptr);

// kernels/ops/lm_head_loss.hpp: the chunked LM head and its cross-entropy, composed
// of the twins above on blas's stream; dx (and dW) nullptr: the losses only,
// weights nullptr: every row's weight 1.
void lm_head_loss(Blas& blas, float* dx, float* dW, float* losses, float* scratch, const float* x,
                  const float* W, const int32_t* targets, const float* weights, int N, int C, int V, int rows,
                  Precision prec = Precision::FP32);

// kernels/ops/adamw.hpp (the bias corrections computed once on the host, as there).
void adamw_update(float* param, float* m, float* v, const float* grad, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, int step, float grad_scale,
                  cudaStream_t stream = nullptr);

// kernels/ops/sum_squares.hpp: waits for `stream` and returns the sum.
double sum_squares(const float* x, int64_t n, cudaStream_t stream = nullptr);

// kernels/ops/rmsnorm.hpp, kernels/ops/rope.hpp, kernels/ops/swiglu.hpp (the LLaMA family).
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                     cudaStream_t stream = nullptr);
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int N, int C, cudaStream_t stream = nullptr);
void rope_forward(float* out, const float* inp, int B, int Tn, int C, int NH, cudaStream_t stream = nullptr);
void rope_forward_at(float* out, const float* inp, int B, int Tn, int C, int NH, int pos0,
                     cudaStream_t stream = nullptr);
void rope_backward(float* dinp, const float* dout, int B, int Tn, int C, int NH,
                   GradMode dinp_mode = GradMode::Accumulate, cudaStream_t stream = nullptr);
void swiglu_forward(float* out, const float* inp, int64_t N, int F, cudaStream_t stream = nullptr);
void swiglu_backward(float* dinp, const float* inp, const float* dout, int64_t N, int F,
                     GradMode dinp_mode = GradMode::Accumulate, cudaStream_t stream = nullptr);

// The engine's elementwise kernels: kernels/ops/accumulate.hpp, kernels/ops/convert.hpp
// (to_bf16 in comm_kernels.cuh), kernels/quant/error_feedback.hpp.
void accumulate_scaled(float* y, const float* x, float a, int64_t n, cudaStream_t stream = nullptr);
void from_bf16(const uint16_t* in, float* out, int64_t n, cudaStream_t stream = nullptr);
void round_to_bf16(const float* in, float* out, int64_t n, cudaStream_t stream = nullptr);  // out may be in
void add_error(float* x, const float* e, int64_t n, cudaStream_t stream = nullptr);
void update_error(float* e, const float* x, const float* deq, float beta, int64_t n,
                  cudaStream_t stream = nullptr);

}  // namespace zeropp::cuda
