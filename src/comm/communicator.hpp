// Communicator: the collectives of the ZeRO engines, with every byte accounted.
// This is the interface; the backends are src/comm/mpi (host buffers, MPI
// point-to-point, the reference for the algorithms and their closed-form
// bytes) and src/comm/nccl (device buffers, NCCL, CUDA builds only).
// src/comm/make_communicator.hpp picks one (config key comm.backend).
//
// Contract, for every backend:
//   - Collectives run over a Group (src/comm/group.hpp). Every member starts
//     the collectives of a group in the same order; buffers are the backend's
//     memory (host for MPI, device for NCCL).
//   - Each rank counts the bytes it SENDS into counters(), per kind and purpose,
//     split by whether the receiving member is on its own node (intra) or
//     another (inter), by the closed forms of the MPI backend's schedules
//     (src/comm/mpi/mpi_communicator.hpp), so that backends report the same
//     numbers. Self-copies are not counted.
//   - Results are bitwise identical across backends: reduce-scatter sums block
//     s as x[s+1] + x[s+2] + ... + x[s] in fp32 (with a BF16 wire each partial
//     is rounded to nearest even before each hop); all-reduce sums in member order.
//   - Nonblocking: start_*() returns a Request that test() advances without
//     blocking and wait() completes; the group and buffers must outlive it, and
//     a Request destroyed in flight is waited for. wait() polls politely and
//     aborts the job with one line naming rank, collective, purpose, unit and
//     step when a collective has not finished timeout_s after it started.
//   - Emulated links are a backend's (src/comm/link_emulator.hpp), given when it
//     is built; fault injection is a decorator (src/comm/stalling_communicator.hpp).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/base/errors.hpp"
#include "src/comm/group.hpp"

namespace zeropp {

// Wire dtypes; payloads are opaque here. I4 holds two 4-bit values per byte.
enum class DType { F32, BF16, I8, I4 };
int64_t bytes_of(DType t, int64_t count);  // I4: count must be even
const char* name_of(DType t);

enum class Kind { AllGather, ReduceScatter, AllToAll, AllReduce, Broadcast };
enum class Purpose { FwdGather, BwdGather, GradReduce, Other };
constexpr int kNumKinds = 5, kNumPurposes = 4;
const char* name_of(Kind k);     // "all-gather", ...
const char* name_of(Purpose p);  // "forward gather", ...

struct ByteCounters {
  struct Bytes {
    int64_t intra = 0, inter = 0;
    int64_t total() const { return intra + inter; }
    Bytes& operator+=(const Bytes& o) {
      intra += o.intra;
      inter += o.inter;
      return *this;
    }
  };
  std::array<std::array<Bytes, kNumPurposes>, kNumKinds> sent{};
  // Seconds spent blocked in wait() per collective kind (the part of a
  // collective that computation did not hide).
  std::array<double, kNumKinds> seconds{};
  // Seconds during which at least one collective was in flight on this rank:
  // from a start_*() until this rank observed its completion (test() or
  // wait()), overlapping collectives counted once (the union of the intervals).
  // Every wait() lies inside it, so the part of it computation hid is
  // in_flight_s − Σ seconds (hidden_fraction()).
  double in_flight_s = 0;

  void reset() {
    sent = {};
    seconds = {};
    in_flight_s = 0;
  }
  // The fraction of the time in collectives that computation hid:
  // 1 − (time blocked in wait()) / in_flight_s; 0 when nothing was in flight.
  double hidden_fraction() const;
  Bytes& at(Kind k, Purpose p) { return sent[size_t(k)][size_t(p)]; }
  Bytes at(Kind k, Purpose p) const { return sent[size_t(k)][size_t(p)]; }
  Bytes of(Kind k) const;
  Bytes of(Purpose p) const;
  Bytes total() const;
};

class Communicator;

// An in-flight collective. Destroying one that has not completed waits for it.
class Request {
 public:
  using Clock = std::chrono::steady_clock;
  // A backend's in-flight collective.
  struct State {
    State(Communicator& c, Kind k, Purpose pu, const std::string& lbl);
    virtual ~State() = default;
    virtual bool advance() = 0;                 // progresses without blocking; true when complete
    virtual int progress() const { return 0; }  // changes when the collective moves on (wait() spins again)
    // World ranks whose messages of the current hop are still outstanding (the watchdog names them).
    virtual std::vector<int> waiting_for() const { return {}; }

    Communicator& comm;
    Kind kind;
    Purpose purpose;
    std::string label;
    int64_t step;
    int64_t counted_in;  // the step whose counters its bytes go to (Communicator::set_ahead)
    Clock::time_point t0 = Clock::now();
  };

  Request();
  Request(Request&&) noexcept;
  Request& operator=(Request&&) noexcept;
  ~Request();
  bool active() const { return state_ != nullptr; }
  // The in-flight collective's State::progress() and waiting_for() (0 and none once complete):
  // a decorating communicator's state reports its inner collective's.
  int progress() const { return state_ ? state_->progress() : 0; }
  std::vector<int> waiting_for() const { return state_ ? state_->waiting_for() : std::vector<int>{}; }

 private:
  friend class Communicator;
  explicit Request(std::unique_ptr<State> s);
  std::unique_ptr<State> state_;
};

class Communicator {
 public:
  // world_rank names this rank in watchdog messages.
  Communicator(int world_rank, double timeout_s);
  // Aborts the job, naming rank, collective, purpose, unit and step, when a
  // collective started here was never seen complete: its Request outlives
  // the communicator (or leaked), and a transfer left in flight can hang
  // MPI_Finalize.
  virtual ~Communicator();
  Communicator(const Communicator&) = delete;  // requests point at it
  Communicator& operator=(const Communicator&) = delete;

  virtual const char* backend() const = 0;  // "mpi", "nccl"

  // All-gather of `count` elements per member: member i's slice lands at
  // recv + i·bytes_of(dtype, count). send may alias its own place in recv.
  // Reduce-scatter: in holds p·n fp32 values (block i for member i); out
  // receives the sum over members of this rank's block. wire is F32 or BF16.
  // in must stay untouched until completion; it is not modified. out may be
  // this rank's block of in.
  // All-to-all: block i of send (count elements) goes to member i; block i of
  // recv comes from member i. Buffers must not overlap.
  Request start_allgather(Group& g, const void* send, void* recv, int64_t count, DType dtype, Purpose purpose,
                          const std::string& label);
  Request start_reduce_scatter(Group& g, const float* in, float* out, int64_t n, DType wire, Purpose purpose,
                               const std::string& label);
  Request start_alltoall(Group& g, const void* send, void* recv, int64_t count, DType dtype, Purpose purpose,
                         const std::string& label);
  // The same, blocking: start_*() then wait(); arguments as above.
  void allgather(Group&, const void* send, void* recv, int64_t count, DType, Purpose,
                 const std::string& label);
  void reduce_scatter(Group&, const float* in, float* out, int64_t n, DType wire, Purpose,
                      const std::string& label);
  void alltoall(Group&, const void* send, void* recv, int64_t count, DType, Purpose,
                const std::string& label);

  // Sum of n small values over the group, identical bits on every member.
  void allreduce_sum(Group& g, float* values, int64_t n, Purpose purpose, const std::string& label);
  void allreduce_sum(Group& g, double* values, int64_t n, Purpose purpose, const std::string& label);

  // data (bytes) from member root to all members.
  void broadcast(Group& g, void* data, int64_t bytes, int root, Purpose purpose, const std::string& label);

  bool test(Request& r);  // advances without blocking; true when complete
  void wait(Request& r);  // blocks (politely), with the watchdog

  ByteCounters& counters() { return counters_; }
  const ByteCounters& counters() const { return counters_; }
  // Step boundaries with collectives in flight across them (the engine's
  // cross-step prefetch): reset_counters() starts the counters of step()
  // from now, with the bytes already sent by collectives started ahead for it;
  // counters_now() closes the open in-flight interval at now, so each step gets
  // the part inside it and time between steps belongs to no step.
  void reset_counters();
  ByteCounters counters_now();
  // While on, collectives started belong to the next step: their bytes are
  // counted in that step's counters (discard_ahead(): they were not used).
  void set_ahead(bool on) { ahead_ = on; }
  void discard_ahead() { ahead_sent_ = {}; }
  int64_t bytes_ahead() const;  // sent so far by collectives started ahead
  void set_step(int64_t step) { step_ = step; }
  int64_t step() const { return step_; }
  double timeout_s() const { return timeout_s_; }
  int world_rank() const { return world_rank_; }

  // Where the ranks are, for the watchdog's line: X ranks per node, node-major,
  // the nodes' host names (empty: nodes not named).
  void set_nodes(int ranks_per_node, std::vector<std::string> hosts) {
    ranks_per_node_ = ranks_per_node;
    hosts_ = std::move(hosts);
  }

  // For backends: counts `bytes` sent to member `to` of g by a collective
  // counted in step `counted_in` (Request::State::counted_in; -1: one started
  // now): in counters() unless that step is still ahead.
  void count_sent(const Group& g, int to, Kind kind, Purpose purpose, int64_t bytes, int64_t counted_in = -1);
  int64_t counting_step() const { return ahead_ ? step_ + 1 : step_; }

 protected:
  // One collective as the interface hands it to a backend, arguments checked.
  struct Collective {
    Kind kind;
    Purpose purpose;
    std::string label;
    const void* in = nullptr;  // all-gather, all-to-all: send; reduce-scatter: p·n fp32
    void* out = nullptr;  // all-gather, all-to-all: recv; reduce-scatter: n fp32; all-reduce, broadcast: data
    int64_t bytes = 0;    // all-gather, all-to-all: one member's block; broadcast: data
    int64_t n = 0;        // reduce-scatter: fp32 per member; all-reduce: values
    DType wire = DType::F32;  // reduce-scatter: F32 or BF16
    bool f64 = false;         // all-reduce: doubles (else floats)
    int root = 0;             // broadcast
  };
  // The backend's collective, started (not yet complete).
  virtual std::unique_ptr<Request::State> post(Group& g, const Collective& c) = 0;

  // For decorators, communicators that run their collectives on an inner one
  // (src/comm/stalling_communicator.hpp): start_on() starts c on `inner`;
  // sync() hands inner this communicator's step and whether collectives now
  // belong to the next step, and moves the bytes inner counted since the last
  // sync into this communicator's counters (or the next step's). Call sync()
  // around every call into inner. The watchdog is the decorator's; inner's never
  // runs, since only its test() is called.
  Request start_on(Communicator& inner, Group& g, const Collective& c) { return inner.start(g, c); }
  void sync(Communicator& inner);
  void copy_nodes_from(const Communicator& inner) {
    ranks_per_node_ = inner.ranks_per_node_;
    hosts_ = inner.hosts_;
  }

 private:
  Request start(Group& g, const Collective& c);  // post(), and the collective is open
  void run(Group& g, const Collective& c);       // start() then wait()
  // All-gather and all-to-all: the same arguments, `kind` tells them apart.
  static Collective exchange(Kind kind, const void* send, void* recv, int64_t count, DType dtype,
                             Purpose purpose, const std::string& label);
  static Collective reduction(const float* in, float* out, int64_t n, DType wire, Purpose purpose,
                              const std::string& label);
  void allreduce(Group& g, void* values, int64_t n, bool f64, Purpose purpose, const std::string& label);

  int world_rank_;
  double timeout_s_;
  int ranks_per_node_ = 1;
  std::vector<std::string> hosts_;
  // A collective stalled past the timeout: one line (from one rank, src/comm/watchdog.hpp), then MPI_Abort.
  void stalled(const Request::State& s);
  int64_t step_ = 0;
  ByteCounters counters_;
  bool ahead_ = false;
  decltype(ByteCounters::sent) ahead_sent_{};  // bytes of collectives started ahead
  std::vector<const Request::State*> open_;    // collectives started and not yet seen complete
  Request::Clock::time_point busy_since_;      // when open_ last became non-empty
  // Adds [busy_since_, now) to the counters' time with collectives in flight.
  void add_busy_time(Request::Clock::time_point now);
};

}  // namespace zeropp
