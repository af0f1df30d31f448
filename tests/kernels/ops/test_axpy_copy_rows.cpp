// The buffer operations the models use between kernels (kernels/ops/buffer_ops.hpp):
// axpy (the LM head's weight gradient into its unit) and copy_rows (the KV
// cache's append, each sequence's last row), on known values.
#include <catch2/catch.hpp>
#include <vector>

#include "kernels/runtime/device_buffer.hpp"

using namespace zeropp;

TEMPLATE_TEST_CASE("axpy adds a times x into y", "[kernels][buffer-ops]", float, double) {
  Buffer<TestType> y("y", 5), x("x", 5);
  const std::vector<TestType> hy{1, 2, 3, 4, 5}, hx{10, -20, 30, 0.5, 0};
  copy_to_device(hy.data(), y.view());
  copy_to_device(hx.data(), x.view());
  axpy(y.view(), CVec<TestType>(x.data(), 5), TestType(0.5));
  CHECK(to_host(y) == std::vector<TestType>{6, -8, 18, 4.25, 5});
}

TEMPLATE_TEST_CASE("copy_rows copies strided rows and nothing else", "[kernels][buffer-ops]", float, double) {
  // src: 3 rows of 4 elements, 5 apart (element r*5+i = 10r+i); rows' first 2 to dst, 3 apart from 1.
  std::vector<TestType> hs(15, TestType(-1));
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 4; ++i) hs[size_t(r * 5 + i)] = TestType(10 * r + i);
  Buffer<TestType> src("src", 15), dst("dst", 10);
  copy_to_device(hs.data(), src.view());
  fill(dst, TestType(7));
  copy_rows(dst.view(1), 3, CVec<TestType>(src.data() + 1, 14), 5, 3, 2);
  CHECK(to_host(dst) == std::vector<TestType>{7, 1, 2, 7, 11, 12, 7, 21, 22, 7});
  copy_rows(dst.view(), 3, CVec<TestType>(src.data(), 15), 5, 0, 2);  // no rows: nothing
  CHECK(to_host(dst, 2) == std::vector<TestType>{7, 1});
}
