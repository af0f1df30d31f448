#include "io/checkpoint/checkpoint_shards.hpp"

#include <algorithm>
#include <sstream>

#include "src/base/errors.hpp"

namespace zeropp::ckpt {

namespace {

uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

bool valid_group_path(const std::string& g) {
  if (g.empty()) return false;
  std::stringstream ss(g);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (!valid_component(part)) return false;
  return g.back() != '/' && g.rfind("state", 0) != 0;
}

}  // namespace

int comm_rank(MPI_Comm comm) {
  int r = 0;
  ZCHECK_MPI(MPI_Comm_rank(comm, &r));
  return r;
}
int comm_size(MPI_Comm comm) {
  int s = 0;
  ZCHECK_MPI(MPI_Comm_size(comm, &s));
  return s;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool valid_component(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos;
}

std::optional<std::string> check_groups(const ShardGroups& groups, const std::string& what) {
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& [g, shards] = groups[gi];
    if (!valid_group_path(g)) return what + ": bad group name '" + g + "'";
    for (size_t gj = 0; gj < gi; ++gj) {
      const std::string& o = groups[gj].first;
      if (o == g || o.rfind(g + "/", 0) == 0 || g.rfind(o + "/", 0) == 0)
        return what + ": group '" + g + "' clashes with group '" + o + "'";
    }
    std::vector<std::string> names;
    for (const TensorShard& s : shards) {
      if (!valid_component(s.name)) return what + ": bad tensor name '" + s.name + "' in group '" + g + "'";
      names.push_back(s.name);
      for (int64_t d : s.shape)
        if (d < 0)
          return what + ": /" + g + "/" + s.name + ": negative dimension in shape " + shape_str(s.shape);
      const int64_t n = numel_of(s.shape);
      if (s.begin < 0 || s.end < s.begin || s.end > n)
        return what + ": /" + g + "/" + s.name + ": range [" + std::to_string(s.begin) + ", " +
               std::to_string(s.end) + ") outside its " + std::to_string(n) + " elements";
      if (s.end > s.begin && !s.data) return what + ": /" + g + "/" + s.name + ": no data pointer";
    }
    std::sort(names.begin(), names.end());
    const auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) return what + ": tensor '" + *dup + "' twice in group '" + g + "'";
  }
  return std::nullopt;
}

void check_same_on_all_ranks(MPI_Comm comm, const ShardGroups& groups, const std::string& what) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& [g, shards] : groups) {
    h = fnv1a(h, g.data(), g.size() + 1);
    for (const TensorShard& s : shards) {
      h = fnv1a(h, s.name.data(), s.name.size() + 1);
      const uint64_t rank = s.shape.size();
      h = fnv1a(h, &rank, sizeof rank);
      h = fnv1a(h, s.shape.data(), s.shape.size() * sizeof(int64_t));
    }
  }
  uint64_t lo = 0, hi = 0;
  ZCHECK_MPI(MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm));
  ZCHECK_MPI(MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm));
  if (lo != hi) throw Error(what + ": ranks passed different tensor lists (names, shapes or order)");
}

std::vector<bool> ranges_tile(MPI_Comm comm, const ShardGroups& groups) {
  const int p = comm_size(comm);
  std::vector<int64_t> mine;
  for (const auto& gs : groups)
    for (const TensorShard& s : gs.second) {
      mine.push_back(s.begin);
      mine.push_back(s.end);
    }
  const size_t n = mine.size();
  std::vector<int64_t> all(n * size_t(p));
  ZCHECK_MPI(MPI_Allgather(mine.data(), int(n), MPI_INT64_T, all.data(), int(n), MPI_INT64_T, comm));
  std::vector<bool> tiles;
  size_t k = 0;
  std::vector<std::pair<int64_t, int64_t>> iv;
  for (const auto& gs : groups)
    for (const TensorShard& s : gs.second) {
      iv.clear();
      for (int r = 0; r < p; ++r) {
        const int64_t b = all[size_t(r) * n + 2 * k], e = all[size_t(r) * n + 2 * k + 1];
        if (e > b) iv.emplace_back(b, e);
      }
      std::sort(iv.begin(), iv.end());
      int64_t pos = 0;
      bool ok = true;
      for (const auto& [b, e] : iv) {
        if (b != pos) ok = false;
        pos = e;
      }
      tiles.push_back(ok && pos == numel_of(s.shape));
      ++k;
    }
  return tiles;
}

}  // namespace zeropp::ckpt

namespace zeropp {

std::vector<Hyperslab> flat_range_hyperslabs(const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  std::vector<Hyperslab> out;
  const size_t nd = shape.size();
  if (begin >= end) return out;
  if (nd == 0) {
    out.push_back({});
    return out;
  }
  // stride[k]: elements in one step of dimension k.
  std::vector<int64_t> stride(nd, 1);
  for (size_t k = nd - 1; k > 0; --k) stride[k - 1] = stride[k] * shape[k];
  int64_t pos = begin;
  while (pos < end) {
    std::vector<int64_t> coord(nd);
    for (size_t k = 0; k < nd; ++k) coord[k] = (pos / stride[k]) % shape[k];
    // The outermost dimension j at which pos is aligned (all inner coordinates
    // zero) and at least one whole step of j fits before `end`.
    for (size_t j = 0; j < nd; ++j) {
      bool aligned = true;
      for (size_t k = j + 1; k < nd; ++k) aligned = aligned && coord[k] == 0;
      if (!aligned) continue;
      const int64_t c = std::min(shape[j] - coord[j], (end - pos) / stride[j]);
      if (c < 1) continue;
      Hyperslab h;
      h.start = coord;
      h.count.assign(nd, 1);
      h.count[j] = c;
      for (size_t k = j + 1; k < nd; ++k) h.count[k] = shape[k];
      out.push_back(std::move(h));
      pos += c * stride[j];
      break;
    }
  }
  return out;
}

}  // namespace zeropp
