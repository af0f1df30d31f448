// The pure functions that shape ZeRO++ buffers: units are padded to the largest active block, and the
// error-feedback layout changes exactly when the buffers' shape or meaning does.
#include <catch2/catch.hpp>

#include "src/zero/zero_layout.hpp"

using namespace zeropp;

TEST_CASE("units are padded to the largest active quantization block", "[zero-layout]") {
  ZeroConfig z;
  z.weight_block = 256;
  z.gradient_block = 128;
  CHECK(unit_align(z) == 1);
  z.quantized_weights = true;
  CHECK(unit_align(z) == 256);
  z.quantized_gradients = true;
  CHECK(unit_align(z) == 256);
  z.quantized_weights = false;
  CHECK(unit_align(z) == 128);
  z.gradient_block = 512;
  z.quantized_weights = true;
  CHECK(unit_align(z) == 512);
}

TEST_CASE("the error-feedback layout names everything that shapes its buffers", "[zero-layout]") {
  ZeroConfig z;
  z.quantized_gradients = true;
  CHECK(error_feedback_layout(z, 4, 2).empty());  // no error feedback, no buffers
  z.gradient_error_feedback = true;
  const std::string base = error_feedback_layout(z, 4, 2);
  CHECK(base == "P=4 X=2 align=128 block=128 bits=4");
  const auto differs = [&](ZeroConfig c, int P, int X) { return error_feedback_layout(c, P, X) != base; };
  ZeroConfig c = z;
  // qwZ's settings change the padding of every unit, hence the buffers' shape
  c.quantized_weights = true;  // weight_block 256 > gradient_block 128
  CHECK(differs(c, 4, 2));
  c.weight_block = 512;
  CHECK(error_feedback_layout(c, 4, 2) != error_feedback_layout(z, 4, 2));
  CHECK(error_feedback_layout(c, 4, 2) == "P=4 X=2 align=512 block=128 bits=4");
  c.weight_block = 64;  // below the gradient block: the same padding
  CHECK_FALSE(differs(c, 4, 2));
  CHECK(differs(z, 8, 2));
  CHECK(differs(z, 4, 4));
  c = z;
  c.gradient_block = 64;
  CHECK(differs(c, 4, 2));
  c = z;
  c.intra_node_gradient_bits = 8;
  CHECK(differs(c, 4, 2));
  c = z;
  c.inter_node_gradient_bits = 8;
  CHECK(differs(c, 4, 2));
  // what neither shapes nor reinterprets the buffers may change
  c = z;
  c.weight_bits = 4;
  c.hpz_partition_size = 0;
  c.error_feedback_beta = 0.5;
  c.comm_dtype = CommDType::FP32;
  CHECK_FALSE(differs(c, 4, 2));
}

TEST_CASE("hpZ's group and the wire dtype are resolved once, with one meaning", "[zero-layout]") {
  ZeroConfig z;
  z.hpz_partition_size = 0;  // the node
  CHECK(hpz_group_size(z, 8, 4) == 4);
  CHECK(hpz_group_size(z, 4, 1) == 1);
  CHECK(inference_group_size(z, 8, 4) == 4);
  z.hpz_partition_size = 1;  // no group in training; an hpz inference route still means the node
  CHECK(hpz_group_size(z, 8, 4) == 1);
  CHECK(inference_group_size(z, 8, 4) == 4);
  z.hpz_partition_size = 2;
  CHECK(hpz_group_size(z, 8, 4) == 2);
  CHECK(inference_group_size(z, 8, 4) == 2);
  for (const int bad : {3, 16}) {
    z.hpz_partition_size = bad;
    const std::string key = "zero.hpz_partition_size = " + std::to_string(bad);
    CHECK_THROWS_WITH(hpz_group_size(z, 8, 4), Catch::Contains(key) && Catch::Contains("P = 8"));
    CHECK_THROWS_WITH(inference_group_size(z, 8, 4), Catch::Contains(key));
  }
  z.comm_dtype = CommDType::BF16;
  CHECK(wire_dtype(z) == DType::BF16);
  z.comm_dtype = CommDType::FP32;
  CHECK(wire_dtype(z) == DType::F32);
}
