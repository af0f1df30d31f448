#include "src/models/kv_cache.hpp"

#include <string>

namespace zeropp {

template <class T>
KVCache<T>::KVCache(int L, int Bmax, int Tmax_, int C_) : Tmax(Tmax_), C(C_) {
  for (int l = 0; l < L; ++l) {
    k.emplace_back("kcache", size_t(Bmax) * Tmax * C);
    v.emplace_back("vcache", size_t(Bmax) * Tmax * C);
  }
}

template <class T>
void KVCache<T>::append(int l, CVec<T> qkv, int B, int Tn, int pos) {
  T* kd = k[size_t(l)].data();
  T* vd = v[size_t(l)].data();
  const T* src = qkv.data();
  const int64_t c = C, tmax = Tmax;
  Kokkos::parallel_for(
      "kv_append", Range(0, int64_t(B) * Tn * c), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t bt = i / c, ch = i % c, b = bt / Tn, t = bt % Tn;
        const int64_t dst = (b * tmax + pos + t) * c + ch;
        kd[dst] = src[bt * 3 * c + c + ch];
        vd[dst] = src[bt * 3 * c + 2 * c + ch];
      });
}

template <class T>
int64_t KVCache<T>::bytes() const {
  int64_t n = 0;
  for (size_t l = 0; l < k.size(); ++l) n += int64_t(k[l].size() + v[l].size());
  return n * int64_t(sizeof(T));
}

template <class T>
DecodeScratch<T>::DecodeScratch(int Bmax, int Tmax, int C, int NH, int H1, int H2, int V) {
  const int64_t BT = int64_t(Bmax) * Tmax;
  auto buf = [](const char* name, int64_t n) { return Buf<T>(std::string(name), size_t(n)); };
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
  for (const Buf<T>* b : {&x, &x2, &norm, &mean, &rstd, &qkv, &qkv2, &atty, &proj, &hid1, &hid2, &att, &last,
                          &last_norm, &last_mean, &last_rstd, &logits})
    n += int64_t(b->size());
  return n * int64_t(sizeof(T));
}

int64_t kv_cache_elems(int L, int Bmax, int Tmax, int C) { return 2 * int64_t(L) * Bmax * Tmax * C; }

int64_t decode_scratch_elems(int Bmax, int Tmax, int C, int NH, int H1, int H2, int V) {
  const int64_t BT = int64_t(Bmax) * Tmax;
  // x, x2, norm, qkv 3, qkv2 3, atty, proj (11·C), mean and rstd, hid1, hid2, att;
  // then last, last_norm (2·C), their mean and rstd, logits.
  return BT * (11 * int64_t(C) + 2 + H1 + H2 + int64_t(NH) * Tmax) + int64_t(Bmax) * (2 * int64_t(C) + 2 + V);
}

template <class T>
void take_last_rows(Vec<T> out, CVec<T> x, int B, int Tn, int C) {
  T* o = out.data();
  const T* in = x.data();
  Kokkos::parallel_for(
      "take_last_rows", Range(0, int64_t(B) * C), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t b = i / C, c = i % C;
        o[i] = in[(b * Tn + Tn - 1) * C + c];
      });
}

template struct KVCache<float>;
template struct KVCache<double>;
template struct DecodeScratch<float>;
template struct DecodeScratch<double>;
template void take_last_rows<float>(Vec<float>, CVec<float>, int, int, int);
template void take_last_rows<double>(Vec<double>, CVec<double>, int, int, int);

}  // namespace zeropp
