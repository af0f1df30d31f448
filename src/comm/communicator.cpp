#include "src/comm/communicator.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "src/base/bf16.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

using Clock = std::chrono::steady_clock;

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

Group::Group(const Topology& topo, int color, int key, std::string name) : name_(std::move(name)) {
  MPI_Comm c = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_split(topo.world.get(), color, key, &c));
  comm_ = UniqueComm(c);
  int p = 0;
  ZCHECK_MPI(MPI_Comm_size(c, &p));
  ZCHECK_MPI(MPI_Comm_rank(c, &rank_));
  MPI_Group mine, world;
  ZCHECK_MPI(MPI_Comm_group(c, &mine));
  ZCHECK_MPI(MPI_Comm_group(topo.world.get(), &world));
  std::vector<int> members(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) members[size_t(i)] = i;
  world_ranks_.resize(size_t(p));
  ZCHECK_MPI(MPI_Group_translate_ranks(mine, p, members.data(), world, world_ranks_.data()));
  ZCHECK_MPI(MPI_Group_free(&mine));
  ZCHECK_MPI(MPI_Group_free(&world));
  for (int w : world_ranks_) same_node_.push_back(topo.node_of(w) == topo.node);
}

int Group::next_tag() {
  tag_ = (tag_ + 1) % 32768;  // MPI guarantees tags up to 32767
  return tag_;
}

// A collective as a sequence of hops: post() sends and receives one hop's
// messages, after() does the local work once they completed. This and
// send()/recv() are the backend seam.
struct Request::Op {
  Op(Communicator& c, Group& grp, Kind k, Purpose pu, const std::string& lbl, int nhops)
      : comm(c),
        g(grp),
        kind(k),
        purpose(pu),
        label(lbl),
        step(c.step()),
        hops(nhops),
        p(grp.size()),
        r(grp.rank()) {}
  virtual ~Op() = default;
  virtual void post(int hop) = 0;
  virtual void after(int) {}

  void send(int member, const void* data, int64_t bytes) {
    ByteCounters::Bytes& b = comm.counters().at(kind, purpose);
    const bool inter = !g.same_node(member);
    (inter ? b.inter : b.intra) += bytes;
    if (inter && comm.internode_gbps() > 0) {  // emulated link: the hop lasts at least bytes / bandwidth
      const auto t = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                        8.0 * double(bytes) / (comm.internode_gbps() * 1e9)));
      if (t > link_free) link_free = t;
    }
    for_each_piece(bytes, [&](int64_t off, int len) {
      reqs.emplace_back();
      ZCHECK_MPI(MPI_Isend(static_cast<const char*>(data) + off, len, MPI_BYTE, member, tag, g.comm(),
                           &reqs.back()));
    });
  }
  void recv(int member, void* data, int64_t bytes) {
    for_each_piece(bytes, [&](int64_t off, int len) {
      reqs.emplace_back();
      ZCHECK_MPI(
          MPI_Irecv(static_cast<char*>(data) + off, len, MPI_BYTE, member, tag, g.comm(), &reqs.back()));
    });
  }
  // MPI counts are ints: large buffers travel as several messages, matched in order.
  template <class F>
  void for_each_piece(int64_t bytes, F f) {
    for (int64_t off = 0; off < bytes; off += comm.max_message_bytes())
      f(off, int(std::min(comm.max_message_bytes(), bytes - off)));
  }

  Communicator& comm;
  Group& g;
  Kind kind;
  Purpose purpose;
  std::string label;
  int64_t step;
  int hops, hop = 0, tag = 0, p, r;
  Clock::time_point t0 = Clock::now();
  Clock::time_point link_free{};  // emulated inter-node link busy until then
  std::vector<MPI_Request> reqs;
};

namespace {

int mod(int a, int p) { return ((a % p) + p) % p; }

// std::memcpy with a null pointer is undefined even for zero bytes, and an empty
// vector's data() may be null: a zero-element collective copies nothing.
void copy_bytes(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, size_t(bytes));
}

struct AllGatherOp : Request::Op {
  AllGatherOp(Communicator& c, Group& g, Kind k, Purpose pu, const std::string& l, const void* send,
              void* recv, int64_t bytes)
      : Op(c, g, k, pu, l, g.size() - 1), out(static_cast<char*>(recv)), b(bytes) {
    if (send != out + r * b) copy_bytes(out + r * b, send, b);
  }
  // Hop k passes on the block received at hop k−1 (at hop 0: our own).
  void post(int k) override {
    send(mod(r + 1, p), out + mod(r - k, p) * b, b);
    recv(mod(r - 1, p), out + mod(r - k - 1, p) * b, b);
  }
  char* out;
  int64_t b;
};

struct ReduceScatterOp : Request::Op {
  ReduceScatterOp(Communicator& c, Group& g, Purpose pu, const std::string& l, const float* input,
                  float* output, int64_t count, DType w)
      : Op(c, g, Kind::ReduceScatter, pu, l, g.size() - 1), in(input), out(output), n(count), wire(w) {
    if (wire != DType::F32 && wire != DType::BF16)
      throw Error(std::string("communicator: reduce-scatter wire dtype must be f32 or bf16, got ") +
                  name_of(wire));
    if (p == 1) {  // nothing to reduce, and no scratch to touch
      copy_bytes(out, in, n * 4);
      return;
    }
    acc_buf = c.take_scratch(size_t(n) * 4);
    wire_out = c.take_scratch(size_t(bytes_of(wire, n)));
    wire_in = c.take_scratch(size_t(bytes_of(wire, n)));
  }
  ~ReduceScatterOp() override {
    for (auto* b : {&acc_buf, &wire_out, &wire_in})
      if (b->capacity()) comm.give_scratch(std::move(*b));
  }
  float* acc() { return reinterpret_cast<float*>(acc_buf.data()); }
  // Hop k sends the partial sum of block r−k−1 and receives that of block r−k−2.
  void post(int k) override {
    const float* partial = k == 0 ? in + mod(r - 1, p) * n : acc();
    if (wire == DType::BF16)
      fp32_to_bf16(partial, reinterpret_cast<uint16_t*>(wire_out.data()), n);
    else
      copy_bytes(wire_out.data(), partial, n * 4);
    send(mod(r + 1, p), wire_out.data(), bytes_of(wire, n));
    recv(mod(r - 1, p), wire_in.data(), bytes_of(wire, n));
  }
  void after(int k) override {
    const float* own = in + mod(r - k - 2, p) * n;
    float* a = acc();
    if (wire == DType::BF16) {
      const auto* h = reinterpret_cast<const uint16_t*>(wire_in.data());
      for (int64_t i = 0; i < n; ++i) a[i] = bf16_to_fp32(h[i]) + own[i];
    } else {
      const auto* f = reinterpret_cast<const float*>(wire_in.data());
      for (int64_t i = 0; i < n; ++i) a[i] = f[i] + own[i];
    }
    if (k == hops - 1) copy_bytes(out, a, n * 4);  // block r−p = r: complete
  }
  const float* in;
  float* out;
  int64_t n;
  DType wire;
  std::vector<char> acc_buf, wire_out, wire_in;
};

struct AllToAllOp : Request::Op {
  AllToAllOp(Communicator& c, Group& g, Purpose pu, const std::string& l, const void* s, void* d,
             int64_t bytes)
      : Op(c, g, Kind::AllToAll, pu, l, g.size() - 1),
        src(static_cast<const char*>(s)),
        dst(static_cast<char*>(d)),
        b(bytes) {
    copy_bytes(dst + r * b, src + r * b, b);
  }
  void post(int k) override {
    const int to = mod(r + k + 1, p), from = mod(r - k - 1, p);
    send(to, src + to * b, b);
    recv(from, dst + from * b, b);
  }
  const char* src;
  char* dst;
  int64_t b;
};

struct BroadcastOp : Request::Op {
  BroadcastOp(Communicator& c, Group& g, Purpose pu, const std::string& l, void* d, int64_t bytes, int rt)
      : Op(c, g, Kind::Broadcast, pu, l, g.size() > 1 ? 1 : 0), data(d), b(bytes), root(rt) {
    if (root < 0 || root >= p)
      throw Error("communicator: broadcast root " + std::to_string(root) + " not in group");
  }
  void post(int) override {
    if (r != root) return recv(root, data, b);
    for (int m = 0; m < p; ++m)
      if (m != root) send(m, data, b);
  }
  void* data;
  int64_t b;
  int root;
};

// Drives op as far as its completed messages allow; true when finished.
bool advance(Request::Op& op) {
  while (op.hop < op.hops) {
    if (!op.reqs.empty()) {
      int done = 0;
      ZCHECK_MPI(MPI_Testall(int(op.reqs.size()), op.reqs.data(), &done, MPI_STATUSES_IGNORE));
      if (!done) return false;
      op.reqs.clear();
    }
    if (Clock::now() < op.link_free) return false;
    op.after(op.hop);
    if (++op.hop < op.hops) op.post(op.hop);
  }
  return true;
}

}  // namespace

Request::Request() = default;
Request::Request(std::unique_ptr<Op> op) : op_(std::move(op)) {}
Request::Request(Request&&) noexcept = default;
Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    if (op_) op_->comm.wait(*this);
    op_ = std::move(o.op_);
  }
  return *this;
}
Request::~Request() {
  if (op_) op_->comm.wait(*this);
}

Communicator::Communicator(int world_rank, double timeout_s, int64_t max_message_bytes)
    : world_rank_(world_rank), timeout_s_(timeout_s), max_message_bytes_(max_message_bytes) {
  if (max_message_bytes_ < 1 || max_message_bytes_ > INT32_MAX)
    throw Error("communicator: max_message_bytes must be in [1, INT_MAX], got " +
                std::to_string(max_message_bytes));
}

std::vector<char> Communicator::take_scratch(size_t bytes) {
  std::vector<char> b;
  for (auto it = scratch_.begin(); it != scratch_.end(); ++it)
    if (it->size() >= bytes) {
      b = std::move(*it);
      scratch_.erase(it);
      return b;
    }
  if (!scratch_.empty()) {  // grow the last one rather than keep many small buffers
    b = std::move(scratch_.back());
    scratch_.pop_back();
  }
  b.resize(bytes);
  return b;
}

void Communicator::give_scratch(std::vector<char>&& buf) { scratch_.push_back(std::move(buf)); }

Request Communicator::start(std::unique_ptr<Request::Op> op) {
  if (world_rank_ == stall_rank_ && step_ == stall_step_)
    for (;;) sleep(1);  // fault injection: the others' watchdog must fire
  op->tag = op->g.next_tag();
  if (op->hops > 0) op->post(0);
  Request r(std::move(op));
  test(r);
  return r;
}

bool Communicator::test(Request& r) {
  if (!r.op_) return true;
  if (!advance(*r.op_)) return false;
  r.op_.reset();
  return true;
}

void Communicator::wait(Request& r) {
  if (!r.op_) return;
  // Yield while the wait is young, then sleep briefly: no hot spinning on shared cores.
  const auto spin = std::chrono::milliseconds(1);
  const auto entered = Clock::now();
  const Kind kind = r.op_->kind;
  auto since = entered;
  int last_hop = -1;
  while (r.op_ && !test(r)) {
    const Request::Op& op = *r.op_;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - op.t0).count() > timeout_s_) {
      std::fprintf(
          stderr,
          "zeropp: rank %d: %s (%s) of unit '%s' at step %lld did not complete within %g s; aborting\n",
          world_rank_, name_of(op.kind), name_of(op.purpose), op.label.c_str(), (long long)op.step,
          timeout_s_);
      std::fflush(stderr);
      // Give the launcher's I/O forwarding time to deliver the line: MPI_Abort
      // tears the job down at once, and under load the message was lost.
      usleep(500000);
      MPI_Abort(MPI_COMM_WORLD, kExitError);
    }
    if (op.hop != last_hop) {
      last_hop = op.hop;
      since = now;
    }
    if (now - since < spin)
      sched_yield();
    else
      usleep(50);
  }
  counters_.seconds[size_t(kind)] += std::chrono::duration<double>(Clock::now() - entered).count();
}

Request Communicator::start_allgather(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                                      Purpose purpose, const std::string& label) {
  return start(std::make_unique<AllGatherOp>(*this, g, Kind::AllGather, purpose, label, send, recv,
                                             bytes_of(dtype, count)));
}

void Communicator::allgather(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                             Purpose purpose, const std::string& label) {
  Request r = start_allgather(g, send, recv, count, dtype, purpose, label);
  wait(r);
}

Request Communicator::start_reduce_scatter(Group& g, const float* in, float* out, int64_t n, DType wire,
                                           Purpose purpose, const std::string& label) {
  return start(std::make_unique<ReduceScatterOp>(*this, g, purpose, label, in, out, n, wire));
}

void Communicator::reduce_scatter(Group& g, const float* in, float* out, int64_t n, DType wire,
                                  Purpose purpose, const std::string& label) {
  Request r = start_reduce_scatter(g, in, out, n, wire, purpose, label);
  wait(r);
}

Request Communicator::start_alltoall(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                                     Purpose purpose, const std::string& label) {
  return start(std::make_unique<AllToAllOp>(*this, g, purpose, label, send, recv, bytes_of(dtype, count)));
}

void Communicator::alltoall(Group& g, const void* send, void* recv, int64_t count, DType dtype,
                            Purpose purpose, const std::string& label) {
  Request r = start_alltoall(g, send, recv, count, dtype, purpose, label);
  wait(r);
}

template <class T>
void Communicator::allreduce_impl(Group& g, T* values, int64_t n, Purpose purpose, const std::string& label) {
  const int p = g.size();
  std::vector<T> all(size_t(p * n));
  Request r = start(std::make_unique<AllGatherOp>(*this, g, Kind::AllReduce, purpose, label, values,
                                                  all.data(), int64_t(sizeof(T)) * n));
  wait(r);
  // Same order on every rank: identical bits everywhere.
  for (int64_t i = 0; i < n; ++i) {
    T s = all[size_t(i)];
    for (int m = 1; m < p; ++m) s += all[size_t(m * n + i)];
    values[i] = s;
  }
}

void Communicator::allreduce_sum(Group& g, float* values, int64_t n, Purpose purpose,
                                 const std::string& label) {
  allreduce_impl(g, values, n, purpose, label);
}

void Communicator::allreduce_sum(Group& g, double* values, int64_t n, Purpose purpose,
                                 const std::string& label) {
  allreduce_impl(g, values, n, purpose, label);
}

void Communicator::broadcast(Group& g, void* data, int64_t bytes, int root, Purpose purpose,
                             const std::string& label) {
  Request r = start(std::make_unique<BroadcastOp>(*this, g, purpose, label, data, bytes, root));
  wait(r);
}

}  // namespace zeropp
