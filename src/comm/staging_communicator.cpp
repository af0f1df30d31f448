#include "src/comm/staging_communicator.hpp"

namespace zeropp {

namespace {

// One staged collective: the host collective in flight over staging blocks;
// on completion the first `bytes` of its output block go back to the caller's
// buffer (a block from the pool may be larger).
class Staged final : public Request::State {
 public:
  using Block = StagingCommunicator::Block;
  Staged(StagingCommunicator& sc, Kind k, Purpose pu, const std::string& lbl, Request host, Block in,
         Block out, void* dst, size_t bytes)
      : State(sc, k, pu, lbl),
        sc_(sc),
        host_(std::move(host)),
        in_(in),
        out_(out),
        dst_(dst),
        bytes_(bytes) {}
  ~Staged() override {
    sc_.host().wait(host_);  // only after an exception: the interface waits for completion first
    release();
  }
  bool advance() override {
    sc_.absorb_counts();
    const bool done = sc_.host().test(host_);
    sc_.absorb_counts();
    if (!done) return false;
    if (bytes_ > 0) sc_.stager().to_device(dst_, out_.p, bytes_);
    release();
    return true;
  }
  // The host collective's, so that the watchdog names the ranks it waits for.
  int progress() const override { return host_.progress(); }
  std::vector<int> waiting_for() const override { return host_.waiting_for(); }

 private:
  void release() {
    sc_.give(in_);
    sc_.give(out_);
    in_ = out_ = Block{};
  }
  StagingCommunicator& sc_;
  Request host_;
  Block in_, out_;
  void* dst_;
  size_t bytes_;
};

}  // namespace

StagingCommunicator::StagingCommunicator(std::unique_ptr<Communicator> host, std::unique_ptr<Stager> stager,
                                         int world_rank, double timeout_s)
    : Communicator(world_rank, timeout_s),
      host_(std::move(host)),
      stager_(std::move(stager)),
      backend_(std::string(host_->backend()) + "+staging (" + stager_->name() + ")") {}

StagingCommunicator::~StagingCommunicator() {
  for (const Block& b : free_) stager_->release(b.p);
}

StagingCommunicator::Block StagingCommunicator::take(size_t bytes) {
  if (bytes == 0) return {};
  for (size_t i = 0; i < free_.size(); ++i)
    if (free_[i].bytes >= bytes) {
      const Block b = free_[i];
      free_.erase(free_.begin() + std::ptrdiff_t(i));
      return b;
    }
  return {stager_->allocate(bytes), bytes};
}

void StagingCommunicator::give(Block b) {
  if (b.p) free_.push_back(b);
}

void StagingCommunicator::absorb_counts() { sync(*host_); }

std::unique_ptr<Request::State> StagingCommunicator::post(Group& g, const Collective& c) {
  absorb_counts();  // the host backend counts for this step, or the next one's while ahead
  const size_t p = size_t(g.size());
  // Staging blocks for the input (copied in now) and the output (copied back on completion).
  const auto staged_in = [&](size_t bytes) {
    Block b = take(bytes);
    if (bytes > 0) stager_->to_host(b.p, c.in, bytes);
    return b;
  };
  Request r;
  Block in, out;
  size_t out_bytes = 0;  // copied back on completion
  switch (c.kind) {
    case Kind::AllGather:
      in = staged_in(size_t(c.bytes));
      out = take(out_bytes = p * size_t(c.bytes));
      r = host_->start_allgather(g, in.p, out.p, c.bytes, DType::I8, c.purpose, c.label);
      break;
    case Kind::AllToAll:
      in = staged_in(p * size_t(c.bytes));
      out = take(out_bytes = p * size_t(c.bytes));
      r = host_->start_alltoall(g, in.p, out.p, c.bytes, DType::I8, c.purpose, c.label);
      break;
    case Kind::ReduceScatter:
      in = staged_in(p * size_t(c.n) * sizeof(float));
      out = take(out_bytes = size_t(c.n) * sizeof(float));
      r = host_->start_reduce_scatter(g, static_cast<const float*>(in.p), static_cast<float*>(out.p), c.n,
                                      c.wire, c.purpose, c.label);
      break;
    case Kind::AllReduce:  // small and blocking: in place in one block
      out = take(out_bytes = size_t(c.n) * (c.f64 ? sizeof(double) : sizeof(float)));
      if (out_bytes > 0) stager_->to_host(out.p, c.out, out_bytes);
      if (c.f64)
        host_->allreduce_sum(g, static_cast<double*>(out.p), c.n, c.purpose, c.label);
      else
        host_->allreduce_sum(g, static_cast<float*>(out.p), c.n, c.purpose, c.label);
      break;
    case Kind::Broadcast:  // blocking, in place
      out = take(out_bytes = size_t(c.bytes));
      if (out_bytes > 0) stager_->to_host(out.p, c.out, out_bytes);
      host_->broadcast(g, out.p, c.bytes, c.root, c.purpose, c.label);
      break;
  }
  absorb_counts();
  return std::make_unique<Staged>(*this, c.kind, c.purpose, c.label, std::move(r), in, out, c.out, out_bytes);
}

}  // namespace zeropp
