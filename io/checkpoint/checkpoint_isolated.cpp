#include "io/checkpoint/checkpoint_isolated.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/checkpoint/checkpoint_metadata.hpp"
#include "src/base/errors.hpp"

extern char** environ;

namespace zeropp::ckpt {

namespace {

// The helper lies beside the running program: bin/ in a build tree and in an install.
std::string helper_path() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return kScanHelper;
  const std::string self(exe, size_t(n));
  return self.substr(0, self.rfind('/') + 1) + kScanHelper;
}

// Everything the child writes until it closes the pipe; false when `limit_s` passes first.
bool read_all(int fd, double limit_s, std::string& out) {
  using clock = std::chrono::steady_clock;
  const auto end =
      clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(limit_s));
  char buf[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, int(std::min<long long>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out.append(buf, size_t(n));
  }
}

uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The helper on FILE with stdout into `out_fd` and stderr into /dev/null (what HDF5
// or the C library print about the damage would only precede the caller's line).
pid_t spawn_helper(const std::string& helper, const std::string& path, bool checksum_all, int out_fd,
                   const std::string& where) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string arg0 = kScanHelper, arg1 = path, arg2 = checksum_all ? "1" : "0";
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
  pid_t pid = -1;
  const int err = posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0)
    throw Error(where + ": cannot scan it: starting " + helper + ": " + std::strerror(err) +
                " (it is built and installed beside zeropp)");
  return pid;
}

}  // namespace

double scan_time_limit(uint64_t bytes) {
  if (const char* env = std::getenv("ZEROPP_CKPT_SCAN_TIMEOUT_S")) {
    const double s = std::strtod(env, nullptr);
    if (s > 0) return s;
  }
  return 60.0 + double(bytes) / 50e6;
}

IsolatedScan scan_file_isolated(const std::string& path, bool checksum_all) {
  const std::string where = "checkpoint " + path;
  const std::string helper = helper_path();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw Error(where + ": cannot scan it: pipe: " + std::strerror(errno));
  pid_t pid = -1;
  try {
    pid = spawn_helper(helper, path, checksum_all, fds[1], where);
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    throw;
  }
  close(fds[1]);
  const double limit = scan_time_limit(file_bytes(path));
  std::string reply;
  const bool answered = read_all(fds[0], limit, reply);
  close(fds[0]);
  if (!answered) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(where + ": cannot scan it: waitpid: " + std::strerror(errno));
  IsolatedScan r;
  if (!answered) {
    r.child_died = true;
    r.error =
        where + ": scanning it took longer than " + seconds_text(limit) +
        " s (HDF5 looping on damaged metadata, or a stalled file system; ZEROPP_CKPT_SCAN_TIMEOUT_S sets "
        "the limit)";
    return r;
  }
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
