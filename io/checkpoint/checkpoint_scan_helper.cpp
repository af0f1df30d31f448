// zeropp_ckpt_scan FILE 0|1: the child side of scan_file_isolated
// (io/checkpoint/checkpoint_isolated.hpp). Scans one checkpoint file (1: every dataset's
// checksum too) and writes 'S' + pack_scan of what it found, or 'E' + the error
// line, to stdout; a crash inside HDF5 ends only this process.
//
// A program of its own, which the rank starts with posix_spawn, rather than a
// fork of the rank: a forked copy of a multithreaded process inherits the locks
// its other threads held at that moment (the allocator's, HDF5's, MPI's) and
// can wait on them for good, which the checkpoint deadline's thread made happen.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "io/checkpoint/checkpoint_metadata.hpp"
#include "io/checkpoint/checkpoint_scan.hpp"
#include "io/hdf5/h5_util.hpp"
#include "src/base/errors.hpp"

int main(int argc, char** argv) {
  using namespace zeropp;
  if (argc != 3 || (std::strcmp(argv[2], "0") != 0 && std::strcmp(argv[2], "1") != 0)) {
    std::fprintf(stderr, "usage: zeropp_ckpt_scan FILE 0|1 (zeropp starts it to scan a checkpoint)\n");
    return 2;
  }
  // A crash inside HDF5 on a damaged file is an answer the caller reports: it ends this
  // process by its signal, not through a sanitizer's report of a fault in HDF5.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  const std::string path = argv[1];
  std::string reply;
  try {
    h5::QuietHdf5 quiet;
    reply = "S" + ckpt::pack_scan(ckpt::scan_file(path, argv[2][0] == '1'));
  } catch (const Error& e) {
    reply = std::string("E") + e.what();
  } catch (const std::exception& e) {
    reply = "Echeckpoint " + path + ": " + e.what();
  }
  const bool written = std::fwrite(reply.data(), 1, reply.size(), stdout) == reply.size();
  return written && std::fflush(stdout) == 0 ? 0 : 1;
}
