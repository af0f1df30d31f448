#include "src/comm/watchdog.hpp"

#include <algorithm>
#include <map>

namespace zeropp {

namespace {

std::string node_name(int node, const std::vector<std::string>& hosts) {
  if (size_t(node) < hosts.size()) return "node " + hosts[size_t(node)];
  return "node " + std::to_string(node);
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

std::string missing_ranks(const std::vector<int>& waiting_for, int self, int ranks_per_node,
                          const std::vector<std::string>& hosts) {
  const int x = std::max(ranks_per_node, 1);
  std::map<int, std::vector<int>> by_node;
  for (int r : waiting_for) by_node[r / x].push_back(r);
  std::string s;
  for (auto& [node, ranks] : by_node) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (!s.empty()) s += "; ";
    if (node == self / x) {
      s += rank_list(ranks) + " (this node, itself waiting) did not arrive";
      continue;
    }
    const std::string span =
        x == 1 ? "" : ", ranks " + std::to_string(node * x) + "-" + std::to_string(node * x + x - 1);
    s += rank_list(ranks) + " (" + node_name(node, hosts) + span + ") did not arrive";
  }
  return s;
}

double report_delay(int rank, int ranks_per_node, double timeout_s) {
  if (rank == 0) return 0;
  return rank % std::max(ranks_per_node, 1) == 0 ? timeout_s : 2 * timeout_s;
}

}  // namespace zeropp
