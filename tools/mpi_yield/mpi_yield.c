// libzeropp_yield.so: LD_PRELOAD shim that makes MPICH's busy-polling yield the CPU.
//
// Why: Debian's MPICH (ch4:ucx) waits for messages by calling UCX's
// ucp_worker_progress() in a tight loop. With more ranks than cores (every
// multi-rank test on a 2-core machine) a waiting rank burns its whole time
// slice while the rank it waits for is descheduled, so a one-float allreduce
// takes milliseconds. libmpich.so calls ucp_worker_progress through its PLT
// (`nm -D libmpich.so.12` lists it as U), so a preloaded definition
// interposes it. Ours forwards to the real one and calls sched_yield() when
// progress found no events, handing the core to a rank that has work. With a
// core per rank the yield is a cheap syscall that returns at once.
//
// A wait that stays empty for kSpinPolls calls sleeps kSleep per call
// instead: a rank waiting on a ring peer that is descheduled otherwise yields
// tens of thousands of times per step (ZEROPP_YIELD_STATS), and on a loaded
// machine every yield that returns at once is CPU the peer needed. Sleeping
// takes the waiter off the run queue; the timer slack is cut to 1 us so that the
// wake-up is not rounded up to the default 50 us.
//
// ZEROPP_YIELD_STATS=1 prints, at exit, how many progress calls went through
// the wrapper and how many yielded (evidence that the interposition works).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

// UCX's handle is an opaque pointer; declaring it here avoids a dependency on UCX headers.
typedef struct ucp_worker* ucp_worker_h;
typedef unsigned (*progress_fn)(ucp_worker_h);

static progress_fn real_progress;
static unsigned long n_calls, n_yields, n_sleeps;
static __thread unsigned empty_run;  // consecutive calls that found no events

enum { kSpinPolls = 64 };
static const struct timespec kSleep = {0, 20000};  // 20 us

static void print_stats(void) {
  fprintf(stderr, "zeropp_yield: pid %d: %lu ucp_worker_progress calls, %lu yields, %lu sleeps\n",
          (int)getpid(), n_calls, n_yields, n_sleeps);
}

__attribute__((constructor)) static void init(void) {
  const char* stats = getenv("ZEROPP_YIELD_STATS");
  if (stats && stats[0] == '1') atexit(print_stats);
  // Main thread only (slack is per thread); a failure would only lengthen the sleeps.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

unsigned ucp_worker_progress(ucp_worker_h worker) {
  // Resolved lazily: the constructor may run before libucp is loaded.
  // A benign race: every thread resolves to the same address.
  if (!real_progress) {
    real_progress = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!real_progress) {
      fprintf(stderr, "zeropp_yield: ucp_worker_progress not found: %s\n", dlerror());
      abort();
    }
  }
  const unsigned events = real_progress(worker);
  ++n_calls;
  if (events != 0) {
    empty_run = 0;
  } else if (++empty_run < kSpinPolls) {
    ++n_yields;
    sched_yield();
  } else {
    ++n_sleeps;
    nanosleep(&kSleep, NULL);
  }
  return events;
}
