// What a scan found in a checkpoint file, as bytes: from the scanning child to
// its parent (io/checkpoint/checkpoint_isolated.hpp), and from rank 0 to the other ranks.
#pragma once

#include <mpi.h>

#include <string>

#include "io/checkpoint/checkpoint_scan.hpp"

namespace zeropp::ckpt {

std::string pack_scan(const Scan& s);
// Bytes that pack_scan did not write are an Error naming `where`.
Scan unpack_scan(const std::string& bytes, const std::string& where);

// Broadcasts a string from rank 0 (collective).
void bcast_string(MPI_Comm comm, std::string& s);

}  // namespace zeropp::ckpt
