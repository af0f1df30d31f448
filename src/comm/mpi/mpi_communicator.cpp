#include "src/comm/mpi/mpi_communicator.hpp"

#include <algorithm>
#include <cstring>

#include "src/base/bf16.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

using Clock = Request::Clock;

namespace {

// A collective as a sequence of hops: post() sends and receives one hop's
// messages, after() does the local work once they completed.
struct Op : Request::State {
  Op(MpiCommunicator& c, Group& grp, Kind k, Purpose pu, const std::string& lbl, int nhops)
      : State(c, k, pu, lbl), mpi(c), g(grp), hops(nhops), p(grp.size()), r(grp.rank()) {}
  virtual void post(int hop) = 0;
  virtual void after(int) {}
  int progress() const override { return hop; }
  // The peers of this hop's messages that have not completed (MPI_Request_get_status frees nothing).
  std::vector<int> waiting_for() const override {
    std::vector<int> ranks;
    for (size_t i = 0; i < reqs.size(); ++i) {
      int done = 0;
      MPI_Request q = reqs[i];
      ZCHECK_MPI(MPI_Request_get_status(q, &done, MPI_STATUS_IGNORE));
      if (!done) ranks.push_back(g.world_rank(peers[i]));
    }
    return ranks;
  }

  // Drives the collective as far as its completed messages allow; true when finished.
  bool advance() override {
    while (hop < hops) {
      if (!reqs.empty()) {
        int done = 0;
        ZCHECK_MPI(MPI_Testall(int(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE));
        if (!done) return false;
        reqs.clear();
        peers.clear();
      }
      if (Clock::now() < link_free) return false;
      after(hop);
      if (++hop < hops) post(hop);
    }
    return true;
  }

  void send(int member, const void* data, int64_t bytes) {
    mpi.count_sent(g, member, kind, purpose, bytes, counted_in);
    // Emulated links: the hop completes no earlier than the link has served this message.
    const auto t = mpi.links().arrival(!g.same_node(member), bytes);
    if (t > link_free) link_free = t;
    for_each_piece(bytes, [&](int64_t off, int len) {
      reqs.emplace_back();
      peers.push_back(member);
      ZCHECK_MPI(MPI_Isend(static_cast<const char*>(data) + off, len, MPI_BYTE, member, tag, g.comm(),
                           &reqs.back()));
    });
  }
  void recv(int member, void* data, int64_t bytes) {
    for_each_piece(bytes, [&](int64_t off, int len) {
      reqs.emplace_back();
      peers.push_back(member);
      ZCHECK_MPI(
          MPI_Irecv(static_cast<char*>(data) + off, len, MPI_BYTE, member, tag, g.comm(), &reqs.back()));
    });
  }
  // MPI counts are ints: large buffers travel as several messages, matched in order.
  template <class F>
  void for_each_piece(int64_t bytes, F f) {
    for (int64_t off = 0; off < bytes; off += mpi.max_message_bytes())
      f(off, int(std::min(mpi.max_message_bytes(), bytes - off)));
  }

  MpiCommunicator& mpi;
  Group& g;
  int hops, hop = 0, tag = 0, p, r;
  Clock::time_point link_free{};  // the emulated links have served this hop's messages then
  std::vector<MPI_Request> reqs;
  std::vector<int> peers;  // the group member of each of reqs
};

int mod(int a, int p) { return ((a % p) + p) % p; }

// std::memcpy with a null pointer is undefined even for zero bytes, and an empty
// vector's data() may be null: a zero-element collective copies nothing.
void copy_bytes(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, size_t(bytes));
}

struct AllGatherOp : Op {
  AllGatherOp(MpiCommunicator& c, Group& g, Kind k, Purpose pu, const std::string& l, const void* send,
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

struct ReduceScatterOp : Op {
  ReduceScatterOp(MpiCommunicator& c, Group& g, Purpose pu, const std::string& l, const float* input,
                  float* output, int64_t count, DType w)
      : Op(c, g, Kind::ReduceScatter, pu, l, g.size() - 1), in(input), out(output), n(count), wire(w) {
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
      if (b->capacity()) mpi.give_scratch(std::move(*b));
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

struct AllToAllOp : Op {
  AllToAllOp(MpiCommunicator& c, Group& g, Purpose pu, const std::string& l, const void* s, void* d,
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

struct BroadcastOp : Op {
  BroadcastOp(MpiCommunicator& c, Group& g, Purpose pu, const std::string& l, void* d, int64_t bytes, int rt)
      : Op(c, g, Kind::Broadcast, pu, l, g.size() > 1 ? 1 : 0), data(d), b(bytes), root(rt) {}
  void post(int) override {
    if (r != root) return recv(root, data, b);
    for (int m = 0; m < p; ++m)
      if (m != root) send(m, data, b);
  }
  void* data;
  int64_t b;
  int root;
};

// The all-gather of every member's values into a buffer of its own, then the
// sum in member order (with p = 1 there is no hop and the values are the sum).
struct GatherBuffer {
  std::vector<char> all;
};
template <class T>
struct AllReduceOp : GatherBuffer, AllGatherOp {
  AllReduceOp(MpiCommunicator& c, Group& g, Purpose pu, const std::string& l, T* v, int64_t count)
      : GatherBuffer{std::vector<char>(size_t(g.size()) * sizeof(T) * size_t(count))},
        AllGatherOp(c, g, Kind::AllReduce, pu, l, v, all.data(), int64_t(sizeof(T)) * count),
        values(v),
        n(count) {}
  void after(int k) override {
    if (k != hops - 1) return;
    // Same order on every rank: identical bits everywhere.
    const T* a = reinterpret_cast<const T*>(all.data());
    for (int64_t i = 0; i < n; ++i) {
      T s = a[i];
      for (int m = 1; m < p; ++m) s += a[m * n + i];
      values[i] = s;
    }
  }
  T* values;
  int64_t n;
};

std::unique_ptr<Request::State> launch(std::unique_ptr<Op> op) {
  op->tag = op->g.next_tag();
  if (op->hops > 0) op->post(0);
  return op;
}

}  // namespace

MpiCommunicator::MpiCommunicator(int world_rank, double timeout_s, EmulatedLinks links,
                                 int64_t max_message_bytes)
    : Communicator(world_rank, timeout_s), links_(links), max_message_bytes_(max_message_bytes) {
  if (max_message_bytes_ < 1 || max_message_bytes_ > INT32_MAX)
    throw Error("communicator: max_message_bytes must be in [1, INT_MAX], got " +
                std::to_string(max_message_bytes));
}

std::vector<char> MpiCommunicator::take_scratch(size_t bytes) {
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

void MpiCommunicator::give_scratch(std::vector<char>&& buf) { scratch_.push_back(std::move(buf)); }

std::unique_ptr<Request::State> MpiCommunicator::post(Group& g, const Collective& c) {
  switch (c.kind) {
    case Kind::AllGather:
      return launch(
          std::make_unique<AllGatherOp>(*this, g, c.kind, c.purpose, c.label, c.in, c.out, c.bytes));
    case Kind::ReduceScatter:
      return launch(std::make_unique<ReduceScatterOp>(*this, g, c.purpose, c.label,
                                                      static_cast<const float*>(c.in),
                                                      static_cast<float*>(c.out), c.n, c.wire));
    case Kind::AllToAll:
      return launch(std::make_unique<AllToAllOp>(*this, g, c.purpose, c.label, c.in, c.out, c.bytes));
    case Kind::AllReduce:
      if (c.f64)
        return launch(std::make_unique<AllReduceOp<double>>(*this, g, c.purpose, c.label,
                                                            static_cast<double*>(c.out), c.n));
      return launch(std::make_unique<AllReduceOp<float>>(*this, g, c.purpose, c.label,
                                                         static_cast<float*>(c.out), c.n));
    case Kind::Broadcast:
      return launch(std::make_unique<BroadcastOp>(*this, g, c.purpose, c.label, c.out, c.bytes, c.root));
  }
  throw Error("communicator: unknown collective kind");
}

}  // namespace zeropp
