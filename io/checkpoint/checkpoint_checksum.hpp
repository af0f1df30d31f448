// How checksums are shown; the checksum itself is public (io/checkpoint/checkpoint.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace zeropp::ckpt {

std::string hex64(uint64_t v);  // "0x0123456789abcdef"

}  // namespace zeropp::ckpt
