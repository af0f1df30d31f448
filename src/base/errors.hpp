// Errors: one exception type for bad input, and checked MPI/HDF5 calls.
//
// Bad input (deck, command line, data, checkpoint) throws zeropp::Error with a
// one-line message naming the file, key or value. agree_on_error() turns a
// failure on any rank into the same Error on every rank, so no rank is left
// waiting in a collective. Library calls that fail unexpectedly abort the job
// with file:line and the rank.
#pragma once

#include <mpi.h>

#include <optional>
#include <stdexcept>
#include <string>

namespace zeropp {

// Control characters in the message (a newline inside a deck's string, a
// token's text, a parser's "saw '\n'") are written as escapes: it stays one line.
struct Error : std::runtime_error {
  explicit Error(const std::string& message);
  explicit Error(const char* message) : Error(std::string(message)) {}
};

// What agree_on_error throws: the same message on every rank. Only the
// lowest failing rank reports it; it names itself unless it is rank 0 (which
// also reads and writes for all ranks, e.g. the run folder).
struct AgreedError : Error {
  AgreedError(const std::string& message, int failing_rank, bool is_reporter)
      : Error(message), rank(failing_rank), reporter(is_reporter) {}
  int rank;       // in the communicator agreed over
  bool reporter;  // this rank prints it
  // "<message>", or "rank R: <message>" for R > 0.
  std::string line() const { return rank == 0 ? what() : "rank " + std::to_string(rank) + ": " + what(); }
};

// Exit statuses of the zeropp binary (documented in README.md).
// 3: stopped on SIGUSR1/SIGTERM/SIGINT or train.max_runtime after saving a checkpoint.
// 4: stopped because the loss or gradient norm was not finite (nothing saved after it).
// 130: a second SIGINT before the first was acted on: ended at once, nothing saved.
enum ExitStatus : int {
  kExitOk = 0,
  kExitError = 1,
  kExitUsage = 2,
  kExitStopped = 3,
  kExitNonFinite = 4,
  kExitInterrupted = 130
};

// Rank in MPI_COMM_WORLD, or -1 before MPI_Init.
int world_rank();

// Prints "zeropp: rank R: <what> failed at file:line: <detail>" and aborts.
[[noreturn]] void fatal(const char* what, const char* file, int line, const std::string& detail);

// For an error only this rank knows of (an allocation, a system call), while
// the others may be waiting for it in a collective: prints
// "zeropp: error: rank R: <first line of message>" and aborts the job.
[[noreturn]] void abort_on_this_rank(const std::string& message);

// Collective over `comm`: if any rank passes an error message, every rank
// throws AgreedError with the message of the lowest failing rank.
void agree_on_error(MPI_Comm comm, const std::optional<std::string>& error);

// For an Error raised outside agree_on_error, on `comm` (one no other
// collective uses): true when every rank of comm reaches this call within
// timeout_s, so the error is one all ranks check alike and one rank's line
// says it; false when some rank does not (the error is this rank's alone, or
// the others are stuck), so this rank must say it and end the job.
bool every_rank_raised(MPI_Comm comm, double timeout_s);

// Runs f() on every rank and calls agree_on_error with what it threw.
template <class F>
auto collectively(MPI_Comm comm, F&& f) {
  std::optional<std::string> err;
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    try {
      f();
    } catch (const Error& e) {
      err = e.what();
    }
    agree_on_error(comm, err);
  } else {
    R r{};
    try {
      r = f();
    } catch (const Error& e) {
      err = e.what();
    }
    agree_on_error(comm, err);
    return r;
  }
}

}  // namespace zeropp

#define ZCHECK_MPI(call)                                                                 \
  do {                                                                                   \
    const int zeropp_rc_ = (call);                                                       \
    if (zeropp_rc_ != MPI_SUCCESS) {                                                     \
      char zeropp_msg_[MPI_MAX_ERROR_STRING];                                            \
      int zeropp_len_ = 0;                                                               \
      MPI_Error_string(zeropp_rc_, zeropp_msg_, &zeropp_len_);                           \
      ::zeropp::fatal(#call, __FILE__, __LINE__, std::string(zeropp_msg_, zeropp_len_)); \
    }                                                                                    \
  } while (0)

// HDF5 calls return a negative value on failure.
#define ZCHECK_H5(call)                                                                      \
  ([&]() {                                                                                   \
    auto zeropp_r_ = (call);                                                                 \
    if (zeropp_r_ < 0) ::zeropp::fatal(#call, __FILE__, __LINE__, "HDF5 returned an error"); \
    return zeropp_r_;                                                                        \
  }())
