// Names a test case that runs long. When a collective hangs or a kernel loops,
// the ctest entry is ended by its TIMEOUT, and ctest shows what the entry
// printed: without this, nothing says which of its cases was running. Each
// rank prints one line for a case still running after ZEROPP_TEST_SLOW_CASE_S
// seconds (ctest sets a third of the entry's TIMEOUT; default 60); quiet
// otherwise.
// The listener interface of Catch2 2.x, declared only on request.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <mpi.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

double report_after_s() {
  const char* env = std::getenv("ZEROPP_TEST_SLOW_CASE_S");
  const double s = env ? std::strtod(env, nullptr) : 0.0;
  return s > 0 ? s : 60.0;
}

class SlowCaseReport : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    done_ = false;
    // The thread calls no MPI (the suite runs MPI_THREAD_FUNNELED).
    watcher_ = std::thread([this, rank, name = info.name, after = report_after_s()] {
      std::unique_lock<std::mutex> lock(m_);
      if (cv_.wait_for(lock, std::chrono::duration<double>(after), [this] { return done_; })) return;
      std::fprintf(stderr, "zeropp-test: rank %d: test case '%s' still running after %.0f s\n", rank,
                   name.c_str(), after);
      std::fflush(stderr);
    });
  }

  void testCaseEnded(Catch::TestCaseStats const&) override {
    {
      std::lock_guard<std::mutex> lock(m_);
      done_ = true;
    }
    cv_.notify_one();
    watcher_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread watcher_;
};

}  // namespace

CATCH_REGISTER_LISTENER(SlowCaseReport)
