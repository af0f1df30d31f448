// The caller's shards: validation (names, ranges, the same list on every rank)
// and how the ranks' ranges cover each tensor.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp::ckpt {

int comm_rank(MPI_Comm comm);
int comm_size(MPI_Comm comm);

int64_t numel_of(const std::vector<int64_t>& shape);
std::string shape_str(const std::vector<int64_t>& shape);  // "[2, 3]"

// A non-empty name without '/', other than "." and "..".
bool valid_component(const std::string& s);

// The first problem with the groups' names, shapes and ranges, or nullopt.
std::optional<std::string> check_groups(const ShardGroups& groups, const std::string& what);

// Every rank must pass the same groups, names and shapes (collective).
void check_same_on_all_ranks(MPI_Comm comm, const ShardGroups& groups, const std::string& what);

// For each shard in order: whether the ranges of all ranks tile [0, numel) exactly.
std::vector<bool> ranges_tile(MPI_Comm comm, const ShardGroups& groups);

}  // namespace zeropp::ckpt
