// The LLaMA-style decoder's decode step (model.hpp): the forward's layer math
// over only the new tokens, rotated at their own positions, their attention
// reading the KV cache (which holds the rotated keys).
#include "kernels/ops/encoder.hpp"
#include "kernels/ops/matmul.hpp"
#include "kernels/ops/residual.hpp"
#include "kernels/ops/rmsnorm.hpp"
#include "kernels/ops/rope.hpp"
#include "kernels/ops/swiglu.hpp"
#include "src/models/decoder_parts.hpp"
#include "src/models/llama/llama.hpp"

namespace zeropp {

template <class T>
CVec<T> Llama<T>::decode(CVec<int32_t> tokens, int B, int Tn, int pos, UnitSource<T>& src) {
  using namespace decoder;
  using namespace llama;
  const auto [tok, s, C, L, BT, nC] = this->begin_decode(tokens, B, Tn, pos);
  const int F = F_, NH = cfg_.n_head;
  const int64_t nF = BT * F;
  {
    CVec<T> w = src.acquire(kEmbeddings);
    encoder_forward<T>(at(s.x, 0, nC), tok, P(w, layout_.units[kEmbeddings].params[0]), CVec<T>(), B, Tn, C);
    src.release(kEmbeddings);
  }
  for (int l = 0; l < L; ++l) {
    const int u = block_unit(l);
    CVec<T> w = src.acquire(u);
    const auto& ps = layout_.units[size_t(u)].params;
    rmsnorm_forward<T>(at(s.norm, 0, nC), at(s.rstd, 0, BT), at(s.x, 0, nC), P(w, ps[ATTN_NORM]), int(BT), C);
    matmul_forward<T>(at(s.qkv, 0, 3 * nC), at(s.norm, 0, nC), P(w, ps[WQKV]), CVec<T>(), int(BT), C, 3 * C,
                      Trans::N, this->prec_);
    rope_forward_at<T>(at(s.qkv2, 0, 3 * nC), at(s.qkv, 0, 3 * nC), B, Tn, C, NH, pos);
    this->cached_attention(l, at(s.qkv2, 0, 3 * nC), B, Tn, pos);
    matmul_forward<T>(at(s.proj, 0, nC), at(s.atty, 0, nC), P(w, ps[WO]), CVec<T>(), int(BT), C, C, Trans::N,
                      this->prec_);
    residual_forward<T>(at(s.x2, 0, nC), at(s.x, 0, nC), at(s.proj, 0, nC), nC);
    rmsnorm_forward<T>(at(s.norm, 0, nC), at(s.rstd, 0, BT), at(s.x2, 0, nC), P(w, ps[FFN_NORM]), int(BT), C);
    matmul_forward<T>(at(s.hid1, 0, 2 * nF), at(s.norm, 0, nC), P(w, ps[W13]), CVec<T>(), int(BT), C, 2 * F,
                      Trans::N, this->prec_);
    swiglu_forward<T>(at(s.hid2, 0, nF), at(s.hid1, 0, 2 * nF), BT, F);
    matmul_forward<T>(at(s.proj, 0, nC), at(s.hid2, 0, nF), P(w, ps[W2]), CVec<T>(), int(BT), F, C, Trans::N,
                      this->prec_);
    residual_forward<T>(at(s.x, 0, nC), at(s.x2, 0, nC), at(s.proj, 0, nC), nC);
    src.release(u);
  }
  // Only each sequence's last position needs the final norm and the head.
  take_last_rows<T>(at(s.last, 0, int64_t(B) * C), at(s.x, 0, nC), B, Tn, C);
  {
    const int u = final_norm_unit(cfg_);
    CVec<T> w = src.acquire(u);
    rmsnorm_forward<T>(at(s.last_norm, 0, int64_t(B) * C), at(s.last_rstd, 0, B),
                       at(s.last, 0, int64_t(B) * C), P(w, layout_.units[size_t(u)].params[0]), B, C);
    src.release(u);
  }
  return this->decode_logits(src, head_unit(cfg_), at(s.last_norm, 0, int64_t(B) * C));
}

template CVec<float> Llama<float>::decode(CVec<int32_t>, int, int, int, UnitSource<float>&);
template CVec<double> Llama<double>::decode(CVec<int32_t>, int, int, int, UnitSource<double>&);

}  // namespace zeropp
