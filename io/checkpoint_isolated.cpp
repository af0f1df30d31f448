#include "io/checkpoint_isolated.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "io/checkpoint_metadata.hpp"
#include "src/base/errors.hpp"

// Present in sanitizer builds only: there a report in the child must end it as a
// crash would, without the parent's death callback (a fuzzer's crash file).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace zeropp::ckpt {

namespace {

constexpr int kChildDiedStatus = 125;  // what the child exits with when a sanitizer stops it

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(kChildDiedStatus);
    off += size_t(n);
  }
}

// The child: 'S' + the packed scan or 'E' + the error, then _exit (no atexit
// handlers, no MPI or HDF5 finalisation of the parent's state).
[[noreturn]] void scan_in_child(int fd, const std::string& path, bool checksum_all) {
  // A crash must end the child with its signal, not run handlers it inherited.
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback([] { _exit(kChildDiedStatus); });
  // What HDF5 or the C library print about the damage would only precede the parent's line.
  const int null = open("/dev/null", O_WRONLY);
  if (null >= 0) dup2(null, STDERR_FILENO);
  std::string reply;
  try {
    reply = "S" + pack_scan(scan_file(path, checksum_all));
  } catch (const Error& e) {
    reply = std::string("E") + e.what();
  } catch (const std::exception& e) {
    reply = "Echeckpoint " + path + ": " + e.what();
  }
  write_all(fd, reply);
  _exit(0);
}

std::string read_all(int fd) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, size_t(n));
  }
}

}  // namespace

IsolatedScan scan_file_isolated(const std::string& path, bool checksum_all) {
  const std::string where = "checkpoint " + path;
  int fds[2];
  if (pipe(fds) != 0) throw Error(where + ": cannot scan it: pipe: " + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw Error(where + ": cannot scan it: fork: " + std::strerror(err));
  }
  if (pid == 0) {
    close(fds[0]);
    scan_in_child(fds[1], path, checksum_all);
  }
  close(fds[1]);
  const std::string reply = read_all(fds[0]);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(where + ": cannot scan it: waitpid: " + std::strerror(errno));
  IsolatedScan r;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !reply.empty() &&
      (reply[0] == 'S' || reply[0] == 'E')) {
    (reply[0] == 'S' ? r.packed : r.error) = reply.substr(1);
    return r;
  }
  r.child_died = true;
  if (WIFSIGNALED(status))
    r.error = where + ": reading it crashed HDF5 (" + strsignal(WTERMSIG(status)) + "): the file is damaged";
  else
    r.error = where + ": reading it failed inside HDF5 (exit status " + std::to_string(WEXITSTATUS(status)) +
              "): the file is damaged";
  return r;
}

Scan scan_file_in_child(const std::string& path, bool checksum_all) {
  const IsolatedScan r = scan_file_isolated(path, checksum_all);
  if (!r.error.empty()) throw Error(r.error);
  return unpack_scan(r.packed, "checkpoint " + path);
}

}  // namespace zeropp::ckpt
