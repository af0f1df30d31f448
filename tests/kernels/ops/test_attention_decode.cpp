#include <catch2/catch.hpp>

#include "kernels/ops/attention.hpp"
#include "kernels/ops/attention_decode.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {
// The keys and values of qkv [B,S,3C] into caches [B,Tmax,C].
template <class T>
void fill_cache(Buf<T>& k, Buf<T>& v, const Buf<T>& qkv, int B, int S, int Tmax, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < S; ++t)
      for (int c = 0; c < C; ++c) {
        k((int64_t(b) * Tmax + t) * C + c) = qkv((int64_t(b) * S + t) * 3 * C + C + c);
        v((int64_t(b) * Tmax + t) * C + c) = qkv((int64_t(b) * S + t) * 3 * C + 2 * C + c);
      }
}
}  // namespace

TEMPLATE_TEST_CASE("attention_decode matches its reference and the full attention", "[kernels]", float,
                   double) {
  using T = TestType;
  std::mt19937 rng(17);
  for (auto [B, S, C, NH, pos] :
       {std::array<int, 5>{2, 7, 12, 3, 4}, {1, 1, 4, 2, 0}, {3, 6, 8, 1, 0}, {1, 9, 6, 3, 8}}) {
    INFO("B=" << B << " S=" << S << " C=" << C << " NH=" << NH << " pos=" << pos);
    const int Tmax = S + 2, Tn = S - pos;
    // The full sequence's attention; the decode of its last Tn tokens must give its last Tn rows.
    auto qkv = random_buf<T>(int64_t(B) * S * 3 * C, rng, -2, 2);
    const int64_t natt = int64_t(B) * NH * S * S;
    Buf<T> full("full", size_t(B) * S * C), pre("pre", size_t(natt)), att("att", size_t(natt));
    attention_forward<T>(full, pre, att, qkv, B, S, C, NH);
    auto kc = random_buf<T>(int64_t(B) * Tmax * C, rng, 50, 60), vc = copy_of<T>(kc);  // garbage past S
    fill_cache(kc, vc, qkv, B, S, Tmax, C);
    Buf<T> q("q", size_t(B) * Tn * 3 * C);
    for (int b = 0; b < B; ++b)
      for (int64_t i = 0; i < int64_t(Tn) * 3 * C; ++i)
        q(int64_t(b) * Tn * 3 * C + i) = qkv((int64_t(b) * S + pos) * 3 * C + i);
    const int64_t ndec = int64_t(B) * NH * Tn * S, nout = int64_t(B) * Tn * C;
    auto out = random_buf<T>(nout, rng, 50, 60), a = random_buf<T>(ndec, rng, 50, 60);
    Buf<T> out_r("out_r", size_t(nout)), a_r("a_r", size_t(ndec));
    attention_decode<T>(out, a, q, kc, vc, B, Tn, pos, Tmax, C, NH);
    attention_decode_reference<T>(out_r, a_r, q, kc, vc, B, Tn, pos, Tmax, C, NH);
    require_close<T>(out, out_r, ref_tol<T>(), "out");
    require_close<T>(a, a_r, ref_tol<T>(), "att");
    Buf<T> want("want", size_t(nout));
    for (int b = 0; b < B; ++b)
      for (int64_t i = 0; i < int64_t(Tn) * C; ++i)
        want(int64_t(b) * Tn * C + i) = full((int64_t(b) * S + pos) * C + i);
    require_close<T>(out, want, ref_tol<T>(), "out vs attention_forward");
  }
}
