// The communicator backends a run may ask for (comm.backend); what each
// needs and how auto decides: src/comm/make_communicator.hpp.
#pragma once

#include "src/base/deck_enum.hpp"

namespace zeropp {

enum class CommBackend { Auto, Mpi, Nccl };
constexpr std::array<DeckName<CommBackend>, 3> deck_names(CommBackend) {
  return {{{CommBackend::Auto, "auto"}, {CommBackend::Mpi, "mpi"}, {CommBackend::Nccl, "nccl"}}};
}

}  // namespace zeropp
