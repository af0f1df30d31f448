// The watchdog's line for a collective stalled past comm.timeout_s: which
// ranks did not arrive, by node, and which rank speaks for the job.
//
// Once a node is gone no collective can tell the survivors who is left, so
// each rank decides alone from where it sits: rank 0 reports at the timeout;
// the other nodes' first ranks wait one timeout more (they speak when node 0
// is the one lost), every other rank two. The first to report aborts the job,
// so normally one line comes out; with three or more nodes and node 0 lost,
// one per surviving node.
#pragma once

#include <string>
#include <vector>

namespace zeropp {

// "rank 3 (node zpc-n1, ranks 2-3) did not arrive": the world ranks in
// `waiting_for`, with their nodes (node-major, X ranks per node; hosts[i]
// names node i, or "node i" when hosts has no entry for it). Peers on this
// rank's own node are only waiting themselves: named as such.
std::string missing_ranks(const std::vector<int>& waiting_for, int self, int ranks_per_node,
                          const std::vector<std::string>& hosts);

// Seconds past the timeout that world rank `rank` waits before it reports.
double report_delay(int rank, int ranks_per_node, double timeout_s);

}  // namespace zeropp
