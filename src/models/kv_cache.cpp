#include "src/models/kv_cache.hpp"

namespace zeropp {

template <class T>
KVCache<T>::KVCache(int L, int Bmax, int Tmax_, int C_) : Tmax(Tmax_), C(C_) {
  for (int l = 0; l < L; ++l) {
    k.emplace_back("kcache", int64_t(Bmax) * Tmax * C);
    v.emplace_back("vcache", int64_t(Bmax) * Tmax * C);
  }
}

template <class T>
void KVCache<T>::append(int l, CVec<T> qkv, int B, int Tn, int pos) {
  // Sequence b's Tn rows: strided 3C apart in qkv, C apart from position pos in the cache.
  const int64_t c = C, src_len = int64_t(qkv.size());
  for (int b = 0; b < B; ++b) {
    const int64_t src = int64_t(b) * Tn * 3 * c, dst = (int64_t(b) * Tmax + pos) * c;
    copy_rows(k[size_t(l)].view(dst), c, CVec<T>(qkv.data() + src + c, src_len - src - c), 3 * c, Tn, c);
    copy_rows(v[size_t(l)].view(dst), c, CVec<T>(qkv.data() + src + 2 * c, src_len - src - 2 * c), 3 * c, Tn,
              c);
  }
}

template <class T>
int64_t KVCache<T>::bytes() const {
  int64_t n = 0;
  for (size_t l = 0; l < k.size(); ++l) n += k[l].bytes() + v[l].bytes();
  return n;
}

template <class T>
DecodeScratch<T>::DecodeScratch(int Bmax, int Tmax, int C, int NH, int H1, int H2, int V) {
  const int64_t BT = int64_t(Bmax) * Tmax;
  auto buf = [](const char* name, int64_t n) { return Buffer<T>(name, n); };
  x = buf("dec_x", BT * C);
  x2 = buf("dec_x2", BT * C);
  norm = buf("dec_norm", BT * C);
  mean = buf("dec_mean", BT);
  rstd = buf("dec_rstd", BT);
  qkv = buf("dec_qkv", BT * 3 * C);
  qkv2 = buf("dec_qkv2", BT * 3 * C);
  atty = buf("dec_atty", BT * C);
  proj = buf("dec_proj", BT * C);
  hid1 = buf("dec_hid1", BT * H1);
  hid2 = buf("dec_hid2", BT * H2);
  att = buf("dec_att", BT * NH * Tmax);
  last = buf("dec_last", int64_t(Bmax) * C);
  last_norm = buf("dec_last_norm", int64_t(Bmax) * C);
  last_mean = buf("dec_last_mean", Bmax);
  last_rstd = buf("dec_last_rstd", Bmax);
  logits = buf("dec_logits", int64_t(Bmax) * V);
}

template <class T>
int64_t DecodeScratch<T>::bytes() const {
  int64_t n = 0;
  for (const Buffer<T>* b : {&x, &x2, &norm, &mean, &rstd, &qkv, &qkv2, &atty, &proj, &hid1, &hid2, &att,
                             &last, &last_norm, &last_mean, &last_rstd, &logits})
    n += b->bytes();
  return n;
}

int64_t kv_cache_elems(int L, int Bmax, int Tmax, int C) { return 2 * int64_t(L) * Bmax * Tmax * C; }

int64_t decode_scratch_elems(int Bmax, int Tmax, int C, int NH, int H1, int H2, int V) {
  const int64_t BT = int64_t(Bmax) * Tmax;
  // x, x2, norm, qkv 3, qkv2 3, atty, proj (11·C), mean and rstd, hid1, hid2, att;
  // then last, last_norm (2·C), their mean and rstd, logits.
  return BT * (11 * int64_t(C) + 2 + H1 + H2 + int64_t(NH) * Tmax) + int64_t(Bmax) * (2 * int64_t(C) + 2 + V);
}

template struct KVCache<float>;
template struct KVCache<double>;
template struct DecodeScratch<float>;
template struct DecodeScratch<double>;

}  // namespace zeropp
