// kernels/gemm/onednn.hpp on oneDNN's matmul: one CPU engine and stream, and one
// primitive per product shape, cached (creating one generates its kernel,
// which costs far more than a small product; the model repeats a few shapes).
// Not thread-safe: the model calls its kernels from one thread (the library
// may use several inside a product).
#include <dnnl.hpp>
#include <map>
#include <tuple>
#include <utility>

#include "kernels/gemm/onednn.hpp"

namespace zeropp {

namespace {

dnnl::engine& onednn_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& onednn_stream() {
  static dnnl::stream s(onednn_engine());
  return s;
}

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

dt data_type(MatmulType t) { return t == MatmulType::BF16 ? dt::bf16 : dt::f32; }

// The logical [batch,] rows x cols view of an operand stored as op(X) (X^T
// when t = T) with leading dimension ld and batch stride `stride`.
dnnl::memory::desc operand_desc(dnnl::memory::data_type dt, Trans t, int batch, int rows, int cols,
                                int64_t ld, int64_t stride) {
  const dims s2 = t == Trans::N ? dims{ld, 1} : dims{1, ld};
  if (batch == 1) return dnnl::memory::desc({rows, cols}, dt, s2);
  return dnnl::memory::desc({batch, rows, cols}, dt, dims{stride, s2[0], s2[1]});
}

struct Descs {
  dnnl::memory::desc a, b, c;
};
Descs descs(const MatmulShape& s) {
  return {operand_desc(data_type(s.ab), s.ta, s.batch, s.M, s.K, s.lda, s.stride_a),
          operand_desc(data_type(s.ab), s.tb, s.batch, s.K, s.N, s.ldb, s.stride_b),
          operand_desc(dnnl::memory::data_type::f32, Trans::N, s.batch, s.M, s.N, s.ldc, s.stride_c)};
}

const dnnl::matmul& primitive(const MatmulShape& s, const Descs& d) {
  using Key = std::tuple<int, int, int, int, int, int, int, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, float, float>;
  static std::map<Key, dnnl::matmul> cache;
  const bool batched = s.batch > 1;
  const Key key{int(s.ab),
                int(s.ta),
                int(s.tb),
                s.M,
                s.N,
                s.K,
                s.batch,
                s.lda,
                s.ldb,
                s.ldc,
                batched ? s.stride_a : 0,
                batched ? s.stride_b : 0,
                batched ? s.stride_c : 0,
                s.alpha,
                s.beta};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  dnnl::primitive_attr attr;
  if (s.alpha != 1.0f) attr.set_output_scales(0, {s.alpha});
  if (s.beta != 0.0f) {
    dnnl::post_ops po;
    po.append_sum(s.beta);  // C = alpha·A·B + beta·C, summed in fp32
    attr.set_post_ops(po);
  }
  const dnnl::matmul::desc md(d.a, d.b, d.c);
  return cache.emplace(key, dnnl::matmul(dnnl::matmul::primitive_desc(md, attr, onednn_engine())))
      .first->second;
}

const char* isa_name(dnnl::cpu_isa isa) {
  using I = dnnl::cpu_isa;
  static const std::pair<I, const char*> names[] = {
      {I::sse41, "sse41"},
      {I::avx, "avx"},
      {I::avx2, "avx2"},
      {I::avx2_vnni, "avx2_vnni"},
      {I::avx512_core, "avx512_core"},
      {I::avx512_core_vnni, "avx512_core_vnni"},
      {I::avx512_core_bf16, "avx512_core_bf16"},
      {I::avx512_core_amx, "avx512_core_amx"},
  };
  for (const auto& [i, name] : names)
    if (i == isa) return name;
  return "other";
}

}  // namespace

void onednn_matmul(const MatmulShape& s, const void* A, const void* B, float* C) {
  const Descs d = descs(s);
  const dnnl::matmul& mm = primitive(s, d);
  dnnl::engine& eng = onednn_engine();
  dnnl::memory a(d.a, eng, const_cast<void*>(A)), b(d.b, eng, const_cast<void*>(B)), c(d.c, eng, C);
  mm.execute(onednn_stream(), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  onednn_stream().wait();
}

void onednn_round_to_bf16(const float* x, int rows, int cols, int64_t ld, uint16_t* out) {
  const dnnl::memory::desc src_md({rows, cols}, dt::f32, dims{ld, 1});
  const dnnl::memory::desc dst_md({rows, cols}, dt::bf16, dims{cols, 1});
  // One reorder per shape, as for the matmuls.
  static std::map<std::tuple<int, int, int64_t>, dnnl::reorder> cache;
  const auto key = std::make_tuple(rows, cols, ld);
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache
             .emplace(key, dnnl::reorder(dnnl::reorder::primitive_desc(onednn_engine(), src_md,
                                                                       onednn_engine(), dst_md)))
             .first;
  dnnl::memory src(src_md, onednn_engine(), const_cast<float*>(x)), dst(dst_md, onednn_engine(), out);
  it->second.execute(onednn_stream(), src, dst);
  onednn_stream().wait();
}

namespace {
bool has_isa(dnnl::cpu_isa want) {
  const auto isa = unsigned(dnnl::get_effective_cpu_isa()), w = unsigned(want);
  return (isa & w) == w;
}
}  // namespace

bool onednn_has_avx512() { return has_isa(dnnl::cpu_isa::avx512_core); }
bool onednn_has_amx() { return has_isa(dnnl::cpu_isa::avx512_core_amx); }
bool onednn_native_bf16() {
  // AVX512-BF16 and AMX have bf16 dot-product instructions; plain AVX-512
  // up-converts the bf16 operands and runs fp32 kernels.
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

std::string onednn_version_isa() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", ISA " + isa_name(dnnl::get_effective_cpu_isa());
}

}  // namespace zeropp
