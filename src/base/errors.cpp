#include "src/base/errors.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace zeropp {

namespace {

std::string escape_controls(const std::string& m) {
  std::string out;
  out.reserve(m.size());
  for (const char c : m) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Error::Error(const std::string& message) : std::runtime_error(escape_controls(message)) {}

int world_rank() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return -1;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

namespace {
[[noreturn]] void abort_job() {
  std::fflush(stderr);
  if (world_rank() >= 0) {
    usleep(500000);  // let the launcher forward the line before the job is torn down
    MPI_Abort(MPI_COMM_WORLD, kExitError);
  }
  std::abort();
}
}  // namespace

void fatal(const char* what, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr, "zeropp: rank %d: %s failed at %s:%d: %s\n", world_rank(), what, file, line,
               detail.c_str());
  abort_job();
}

void abort_on_this_rank(const std::string& message) {
  // One line: library messages (Kokkos') may run on over several.
  const std::string line = message.substr(0, message.find('\n'));
  std::fprintf(stderr, "zeropp: error: rank %d: %s\n", world_rank(), line.c_str());
  abort_job();
}

void agree_on_error(MPI_Comm comm, const std::optional<std::string>& error) {
  int rank = 0;
  ZCHECK_MPI(MPI_Comm_rank(comm, &rank));
  int size = 0;
  ZCHECK_MPI(MPI_Comm_size(comm, &size));
  const int mine = error ? rank : size;
  int first = size;
  ZCHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return;
  int len = rank == first ? int(error->size()) : 0;
  ZCHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, first, comm));
  std::vector<char> msg(size_t(len) + 1, '\0');
  if (rank == first) std::memcpy(msg.data(), error->data(), size_t(len));
  ZCHECK_MPI(MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm));
  throw AgreedError(std::string(msg.data(), size_t(len)), first, rank == first);
}

bool every_rank_raised(MPI_Comm comm, double timeout_s) {
  MPI_Request r = MPI_REQUEST_NULL;
  ZCHECK_MPI(MPI_Ibarrier(comm, &r));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int done = 0;
    ZCHECK_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
    if (done) return true;
    // The barrier stays open: a rank that answers false ends the job.
    if (std::chrono::steady_clock::now() > deadline) return false;
    usleep(1000);
  }
}

}  // namespace zeropp
