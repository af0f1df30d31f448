// GPT-2's decode step (model.hpp): the forward's layer math over only the new
// tokens, their attention reading the KV cache. Kept apart from gpt2.cpp so
// that the training forward can change its kernels independently; the
// decode-equals-forward tests (tests/models/test_decode.cpp) tie the two.
#include "kernels/ops/encoder.hpp"
#include "kernels/ops/gelu.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/ops/matmul.hpp"
#include "kernels/ops/residual.hpp"
#include "src/models/decoder_parts.hpp"
#include "src/models/gpt2/gpt2.hpp"

namespace zeropp {

namespace {
using namespace decoder;
using namespace gpt2;  // BlockParam, units
}  // namespace

template <class T>
CVec<T> GPT<T>::decode(CVec<int32_t> tokens, int B, int Tn, int pos, UnitSource<T>& src) {
  const auto [tok, s, C, L, BT, nC] = this->begin_decode(tokens, B, Tn, pos);
  {
    CVec<T> w = src.acquire(kEmbeddings);
    const auto& ps = layout_.units[kEmbeddings].params;
    // Rows pos.. of wpe: the new tokens' positions.
    const CVec<T> wpe(P(w, ps[1]).data() + int64_t(pos) * C, nC / B);
    encoder_forward<T>(at(s.x, 0, nC), tok, P(w, ps[0]), wpe, B, Tn, C);
    src.release(kEmbeddings);
  }
  for (int l = 0; l < L; ++l) {
    const int u = block_unit(l);
    CVec<T> w = src.acquire(u);
    const auto& ps = layout_.units[size_t(u)].params;
    layernorm_forward<T>(at(s.norm, 0, nC), at(s.mean, 0, BT), at(s.rstd, 0, BT), at(s.x, 0, nC),
                         P(w, ps[LN1W]), P(w, ps[LN1B]), int(BT), C);
    matmul_forward<T>(at(s.qkv, 0, 3 * nC), at(s.norm, 0, nC), P(w, ps[ATTNW]), P(w, ps[ATTNB]), int(BT), C,
                      3 * C, Trans::N, this->prec_);
    this->cached_attention(l, at(s.qkv, 0, 3 * nC), B, Tn, pos);
    matmul_forward<T>(at(s.proj, 0, nC), at(s.atty, 0, nC), P(w, ps[APROJW]), P(w, ps[APROJB]), int(BT), C, C,
                      Trans::N, this->prec_);
    residual_forward<T>(at(s.x2, 0, nC), at(s.x, 0, nC), at(s.proj, 0, nC), nC);
    layernorm_forward<T>(at(s.norm, 0, nC), at(s.mean, 0, BT), at(s.rstd, 0, BT), at(s.x2, 0, nC),
                         P(w, ps[LN2W]), P(w, ps[LN2B]), int(BT), C);
    matmul_forward<T>(at(s.hid1, 0, 4 * nC), at(s.norm, 0, nC), P(w, ps[FCW]), P(w, ps[FCB]), int(BT), C,
                      4 * C, Trans::N, this->prec_);
    gelu_forward<T>(at(s.hid2, 0, 4 * nC), at(s.hid1, 0, 4 * nC), 4 * nC);
    matmul_forward<T>(at(s.proj, 0, nC), at(s.hid2, 0, 4 * nC), P(w, ps[MPROJW]), P(w, ps[MPROJB]), int(BT),
                      4 * C, C, Trans::N, this->prec_);
    residual_forward<T>(at(s.x, 0, nC), at(s.x2, 0, nC), at(s.proj, 0, nC), nC);
    src.release(u);
  }
  // Only each sequence's last position needs the final norm and the head.
  take_last_rows<T>(at(s.last, 0, int64_t(B) * C), at(s.x, 0, nC), B, Tn, C);
  {
    const int u = final_norm_unit(cfg_);
    CVec<T> w = src.acquire(u);
    const auto& ps = layout_.units[size_t(u)].params;
    layernorm_forward<T>(at(s.last_norm, 0, int64_t(B) * C), at(s.last_mean, 0, B), at(s.last_rstd, 0, B),
                         at(s.last, 0, int64_t(B) * C), P(w, ps[0]), P(w, ps[1]), B, C);
    src.release(u);
  }
  return this->decode_logits(src, kEmbeddings, at(s.last_norm, 0, int64_t(B) * C));  // tied head
}

template CVec<float> GPT<float>::decode(CVec<int32_t>, int, int, int, UnitSource<float>&);
template CVec<double> GPT<double>::decode(CVec<int32_t>, int, int, int, UnitSource<double>&);

}  // namespace zeropp
