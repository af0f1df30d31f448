// The watchdog's line and who speaks (src/comm/watchdog.hpp): pure functions,
// run by every comm_np* entry.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "src/comm/watchdog.hpp"

using namespace zeropp;

TEST_CASE("watchdog: the missing ranks named with their nodes", "[comm][watchdog-line]") {
  const std::vector<std::string> hosts = {"zpc-n0", "zpc-n1"};
  CHECK(missing_ranks({3}, 0, 2, hosts) == "rank 3 (node zpc-n1, ranks 2-3) did not arrive");
  CHECK(missing_ranks({3, 2, 3}, 1, 2, hosts) == "ranks 2,3 (node zpc-n1, ranks 2-3) did not arrive");
  CHECK(missing_ranks({0}, 1, 2, hosts) == "rank 0 (this node, itself waiting) did not arrive");
  CHECK(missing_ranks({2, 0}, 1, 2, hosts) ==
        "rank 0 (this node, itself waiting) did not arrive; rank 2 (node zpc-n1, ranks 2-3) did not arrive");
  // Emulated nodes have no host names: numbered; one rank per node: no span.
  CHECK(missing_ranks({5}, 0, 2, {}) == "rank 5 (node 2, ranks 4-5) did not arrive");
  CHECK(missing_ranks({1}, 0, 1, {}) == "rank 1 (node 1) did not arrive");
  CHECK(missing_ranks({}, 0, 2, hosts).empty());
}

TEST_CASE("watchdog: rank 0 speaks first, then the other nodes' first ranks, then the rest",
          "[comm][watchdog-line]") {
  CHECK(report_delay(0, 2, 10) == 0);
  CHECK(report_delay(2, 2, 10) == 10);
  CHECK(report_delay(4, 2, 10) == 10);
  CHECK(report_delay(1, 2, 10) == 20);
  CHECK(report_delay(3, 2, 10) == 20);
  CHECK(report_delay(1, 1, 10) == 10);  // one rank per node: each is its node's first
}
