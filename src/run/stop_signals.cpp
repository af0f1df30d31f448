#include "src/run/stop_signals.hpp"

#include <mpi.h>
#include <unistd.h>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) {
  if (sig == SIGINT && g_stop_signal == SIGINT) _exit(kExitInterrupted);
  g_stop_signal = sig;
}

constexpr int kStopSignals[3] = {SIGUSR1, SIGTERM, SIGINT};

}  // namespace

StopSignals::StopSignals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &sa, &old_[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &old_[i], nullptr);
}

const char* stop_reason(Communicator& comm, Group& g, double started, double last_step_s,
                        double max_runtime) {
  // [0]: a signal arrived on some rank; [1]: some rank's clock says the time is up
  double stop[2] = {g_stop_signal != 0 ? 1.0 : 0.0, 0.0};
  if (max_runtime > 0 && MPI_Wtime() - started + 2 * last_step_s > max_runtime) stop[1] = 1.0;
  comm.allreduce_sum(g, stop, 2, Purpose::Other, "stop flag");
  return stop[0] > 0 ? "signal" : stop[1] > 0 ? "train.max_runtime" : nullptr;
}

}  // namespace zeropp
