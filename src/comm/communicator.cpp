#include "src/comm/communicator.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "src/comm/watchdog.hpp"

namespace zeropp {

using Clock = Request::Clock;

int64_t bytes_of(DType t, int64_t count) {
  switch (t) {
    case DType::F32:
      return 4 * count;
    case DType::BF16:
      return 2 * count;
    case DType::I8:
      return count;
    case DType::I4:
      if (count % 2 != 0)
        throw Error("communicator: int4 buffers need an even element count, got " + std::to_string(count));
      return count / 2;
  }
  return 0;
}

const char* name_of(DType t) {
  static const char* names[] = {"f32", "bf16", "i8", "i4"};
  return names[int(t)];
}
const char* name_of(Kind k) {
  static const char* names[] = {"all-gather", "reduce-scatter", "all-to-all", "all-reduce", "broadcast"};
  return names[int(k)];
}
const char* name_of(Purpose p) {
  static const char* names[] = {"forward gather", "backward gather", "gradient reduction", "other"};
  return names[int(p)];
}

ByteCounters::Bytes ByteCounters::of(Kind k) const {
  Bytes b;
  for (const Bytes& x : sent[size_t(k)]) b += x;
  return b;
}

ByteCounters::Bytes ByteCounters::of(Purpose p) const {
  Bytes b;
  for (const auto& row : sent) b += row[size_t(p)];
  return b;
}

ByteCounters::Bytes ByteCounters::total() const {
  Bytes b;
  for (const auto& row : sent)
    for (const Bytes& x : row) b += x;
  return b;
}

double ByteCounters::hidden_fraction() const {
  if (in_flight_s <= 0) return 0;
  double blocked = 0;
  for (double t : seconds) blocked += t;
  return std::clamp(1 - blocked / in_flight_s, 0.0, 1.0);
}

Request::State::State(Communicator& c, Kind k, Purpose pu, const std::string& lbl)
    : comm(c), kind(k), purpose(pu), label(lbl), step(c.step()), counted_in(c.counting_step()) {}

Request::Request() = default;
Request::Request(std::unique_ptr<State> s) : state_(std::move(s)) {}
Request::Request(Request&&) noexcept = default;
Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    if (state_) state_->comm.wait(*this);
    state_ = std::move(o.state_);
  }
  return *this;
}
Request::~Request() {
  if (state_) state_->comm.wait(*this);
}

Communicator::Communicator(int world_rank, double timeout_s)
    : world_rank_(world_rank), timeout_s_(timeout_s) {}

Communicator::~Communicator() {
  if (open_.empty()) return;
  const Request::State& s = *open_.front();
  fatal("Communicator::~Communicator", __FILE__, __LINE__,
        std::to_string(open_.size()) + " collective(s) still open, the first: " + name_of(s.kind) + " (" +
            name_of(s.purpose) + ") of unit '" + s.label + "' started at step " + std::to_string(s.step) +
            " (rank " + std::to_string(world_rank_) + "), never waited for");
}

void Communicator::count_sent(const Group& g, int to, Kind kind, Purpose purpose, int64_t bytes,
                              int64_t counted_in) {
  if (counted_in < 0) counted_in = counting_step();
  ByteCounters::Bytes& b =
      counted_in > step_ ? ahead_sent_[size_t(kind)][size_t(purpose)] : counters_.at(kind, purpose);
  (g.same_node(to) ? b.intra : b.inter) += bytes;
}

void Communicator::sync(Communicator& inner) {
  inner.step_ = step_;
  inner.ahead_ = ahead_;
  for (size_t k = 0; k < size_t(kNumKinds); ++k)
    for (size_t p = 0; p < size_t(kNumPurposes); ++p) {
      counters_.sent[k][p] += inner.counters_.sent[k][p];
      ahead_sent_[k][p] += inner.ahead_sent_[k][p];
    }
  inner.counters_.sent = {};
  inner.ahead_sent_ = {};
}

Request Communicator::start(Group& g, const Collective& c) {
  const Clock::time_point t0 = Clock::now();
  Request r(post(g, c));
  if (open_.empty()) busy_since_ = t0;
  open_.push_back(r.state_.get());
  test(r);
  return r;
}

bool Communicator::test(Request& r) {
  if (!r.state_) return true;
  if (!r.state_->advance()) return false;
  open_.erase(std::find(open_.begin(), open_.end(), r.state_.get()));
  r.state_.reset();
  if (open_.empty()) add_busy_time(Clock::now());
  return true;
}

void Communicator::reset_counters() {
  counters_.reset();
  counters_.sent = ahead_sent_;
  ahead_sent_ = {};
  busy_since_ = Clock::now();
}

int64_t Communicator::bytes_ahead() const {
  int64_t n = 0;
  for (const auto& row : ahead_sent_)
    for (const ByteCounters::Bytes& b : row) n += b.total();
  return n;
}

void Communicator::add_busy_time(Clock::time_point now) {
  counters_.in_flight_s += std::chrono::duration<double>(now - busy_since_).count();
  busy_since_ = now;
}

ByteCounters Communicator::counters_now() {
  if (!open_.empty()) add_busy_time(Clock::now());
  return counters_;
}

void Communicator::wait(Request& r) {
  if (!r.state_) return;
  // Yield while the wait is young, then sleep briefly: no hot spinning on shared cores.
  const auto spin = std::chrono::milliseconds(1);
  const auto entered = Clock::now();
  const Kind kind = r.state_->kind;
  auto since = entered;
  int last_progress = -1;
  while (r.state_ && !test(r)) {
    const Request::State& s = *r.state_;
    const auto now = Clock::now();
    const double waited = std::chrono::duration<double>(now - s.t0).count();
    if (waited > timeout_s_ + report_delay(world_rank_, ranks_per_node_, timeout_s_)) stalled(s);
    if (s.progress() != last_progress) {
      last_progress = s.progress();
      since = now;
    }
    if (now - since < spin)
      sched_yield();
    else
      usleep(50);
  }
  counters_.seconds[size_t(kind)] += std::chrono::duration<double>(Clock::now() - entered).count();
}

void Communicator::stalled(const Request::State& s) {
  const std::string missing = missing_ranks(s.waiting_for(), world_rank_, ranks_per_node_, hosts_);
  std::fprintf(stderr,
               "zeropp: rank %d: %s (%s) of unit '%s' at step %lld did not complete within %g s; "
               "aborting%s%s\n",
               world_rank_, name_of(s.kind), name_of(s.purpose), s.label.c_str(), (long long)s.step,
               timeout_s_, missing.empty() ? "" : ": ", missing.c_str());
  std::fflush(stderr);
  // Give the launcher's I/O forwarding time to deliver the line: MPI_Abort
  // tears the job down at once, and under load the message was lost.
  usleep(500000);
  MPI_Abort(MPI_COMM_WORLD, kExitError);
}

Communicator::Collective Communicator::exchange(Kind kind, const void* send, void* recv, int64_t count,
                                                DType dtype, Purpose purpose, const std::string& label) {
  Collective c{kind, purpose, label};
  c.in = send;
  c.out = recv;
  c.bytes = bytes_of(dtype, count);
  return c;
}

Communicator::Collective Communicator::reduction(const float* in, float* out, int64_t n, DType wire,
                                                 Purpose purpose, const std::string& label) {
  if (wire != DType::F32 && wire != DType::BF16)
    throw Error(std::string("communicator: reduce-scatter wire dtype must be f32 or bf16, got ") +
                name_of(wire));
  Collective c{Kind::ReduceScatter, purpose, label};
  c.in = in;
  c.out = out;
  c.n = n;
  c.wire = wire;
  return c;
}

void Communicator::run(Group& g, const Collective& c) {
  Request r = start(g, c);
  wait(r);
}

Request Communicator::start_allgather(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                                      Purpose purpose, const std::string& label) {
  return start(g, exchange(Kind::AllGather, send, recv, count, dtype, purpose, label));
}
Request Communicator::start_reduce_scatter(Group& g, const float* in, float* out, int64_t n, DType wire,
                                           Purpose purpose, const std::string& label) {
  return start(g, reduction(in, out, n, wire, purpose, label));
}
Request Communicator::start_alltoall(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                                     Purpose purpose, const std::string& label) {
  return start(g, exchange(Kind::AllToAll, send, recv, count, dtype, purpose, label));
}

void Communicator::allgather(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                             Purpose purpose, const std::string& label) {
  run(g, exchange(Kind::AllGather, send, recv, count, dtype, purpose, label));
}
void Communicator::reduce_scatter(Group& g, const float* in, float* out, int64_t n, DType wire,
                                  Purpose purpose, const std::string& label) {
  run(g, reduction(in, out, n, wire, purpose, label));
}
void Communicator::alltoall(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                            Purpose purpose, const std::string& label) {
  run(g, exchange(Kind::AllToAll, send, recv, count, dtype, purpose, label));
}

void Communicator::allreduce(Group& g, void* values, int64_t n, bool f64, Purpose purpose,
                             const std::string& label) {
  Collective c{Kind::AllReduce, purpose, label};
  c.out = values;
  c.n = n;
  c.f64 = f64;
  run(g, c);
}

void Communicator::allreduce_sum(Group& g, float* values, int64_t n, Purpose purpose,
                                 const std::string& label) {
  allreduce(g, values, n, false, purpose, label);
}

void Communicator::allreduce_sum(Group& g, double* values, int64_t n, Purpose purpose,
                                 const std::string& label) {
  allreduce(g, values, n, true, purpose, label);
}

void Communicator::broadcast(Group& g, void* data, int64_t bytes, int root, Purpose purpose,
                             const std::string& label) {
  if (root < 0 || root >= g.size())
    throw Error("communicator: broadcast root " + std::to_string(root) + " not in group");
  Collective c{Kind::Broadcast, purpose, label};
  c.out = data;
  c.bytes = bytes;
  c.root = root;
  run(g, c);
}

}  // namespace zeropp
