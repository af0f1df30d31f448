// Shard arithmetic for FSDP-style units (pure functions, no MPI).
//
// A unit of n elements is padded to the smallest multiple of P·align (align ≥ 1,
// e.g. a quantization block, so every slice holds whole blocks) and split into
// P equal slices; rank r owns slice r. Spans are half-open element ranges in
// padded coordinates; valid_part() clips one to the n real elements. An empty
// unit (n = 0) has empty slices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "src/base/errors.hpp"

namespace zeropp {

struct Span {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
  bool operator==(const Span& o) const { return begin == o.begin && end == o.end; }
};

inline void check_shard_args(int64_t n, int P, int64_t align) {
  if (n < 0 || P < 1 || align < 1)
    throw Error("shard: invalid arguments n=" + std::to_string(n) + " P=" + std::to_string(P) +
                " align=" + std::to_string(align));
}

// Smallest multiple of P·align that holds n elements.
inline int64_t padded_size(int64_t n, int P, int64_t align = 1) {
  check_shard_args(n, P, align);
  const int64_t m = int64_t(P) * align;
  return (n + m - 1) / m * m;
}

// Elements per slice (a multiple of align).
inline int64_t slice_size(int64_t n, int P, int64_t align = 1) { return padded_size(n, P, align) / P; }

// Slice r of the padded unit.
inline Span slice_span(int64_t n, int P, int r, int64_t align = 1) {
  if (r < 0 || r >= P)
    throw Error("shard: rank " + std::to_string(r) + " outside [0, " + std::to_string(P) + ")");
  const int64_t s = slice_size(n, P, align);
  return {r * s, (r + 1) * s};
}

// Overlap of two spans; an empty overlap has begin == end.
inline Span intersect(Span a, Span b) {
  const int64_t lo = std::max(a.begin, b.begin);
  return {lo, std::max(lo, std::min(a.end, b.end))};
}

// The part of s that covers real elements [0, n): empty (at s.begin) for a slice of pure padding.
inline Span valid_part(Span s, int64_t n) { return intersect(s, {0, n}); }

// Rank owning padded element i.
inline int owner_of(int64_t i, int64_t n, int P, int64_t align = 1) {
  const int64_t s = slice_size(n, P, align);
  if (i < 0 || i >= s * P) throw Error("shard: element " + std::to_string(i) + " outside the padded unit");
  return int(i / s);
}

}  // namespace zeropp
