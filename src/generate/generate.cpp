#include "src/generate/generate.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/runtime/device_buffer.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

void check_generation_fits(const std::vector<std::vector<int32_t>>& prompts, int max_new, int context) {
  if (max_new < 1) throw Error("--max-new-tokens " + std::to_string(max_new) + ": must be at least 1");
  for (size_t i = 0; i < prompts.size(); ++i) {
    const size_t n = prompts[i].size();
    if (n == 0) throw Error("prompt " + std::to_string(i + 1) + " is empty: give at least one token");
    if (int64_t(n) + max_new - 1 > context)
      throw Error("prompt " + std::to_string(i + 1) + " has " + std::to_string(n) + " tokens; with " +
                  std::to_string(max_new) + " new tokens it needs " +
                  std::to_string(int64_t(n) + max_new - 1) + " positions, more than the model's context of " +
                  std::to_string(context));
  }
}

namespace {
// Host copy of n values of a device view, appended to out.
void append_host(std::vector<float>& out, const float* p, int64_t n) {
  out.resize(out.size() + size_t(n));
  copy_to_host(CVec<float>(p, n), out.data() + out.size() - size_t(n));
}
}  // namespace

std::vector<std::vector<int32_t>> generate(Model<float>& model, const PassRunner& run,
                                           const std::vector<std::vector<int32_t>>& prompts, int max_new,
                                           const SamplingRule& rule, CoinStream& coins, const TokenSink& sink,
                                           Decoding mode) {
  const int B = int(prompts.size());
  size_t shortest = prompts[0].size(), longest = 0;
  for (const auto& p : prompts) {
    shortest = std::min(shortest, p.size());
    longest = std::max(longest, p.size());
  }
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(B)), seqs(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b)
    seqs[size_t(b)].assign(prompts[size_t(b)].begin(), prompts[size_t(b)].begin() + long(shortest));
  Buffer<int32_t> feed("generate_tokens", int64_t(B) * int64_t(longest + size_t(max_new)));
  std::vector<int32_t> hfeed(static_cast<size_t>(feed.size()));
  if (mode == Decoding::KVCache) model.decode_reset(B);
  int pos = 0, Tn = int(shortest);
  std::vector<float> logits;
  for (;;) {
    // The KV cache needs only the new tokens; recomputing feeds them all.
    const int from = mode == Decoding::KVCache ? pos : 0, n = pos + Tn - from;
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < n; ++t)
        hfeed[size_t(b) * size_t(n) + size_t(t)] = seqs[size_t(b)][size_t(from + t)];
    copy_to_device(hfeed.data(), feed.view(0, int64_t(B) * n));
    const CVec<int32_t> tokens(feed.data(), int64_t(B) * n);
    logits.clear();
    run([&](UnitSource<float>& src) {
      if (mode == Decoding::KVCache) {
        const CVec<float> l = model.decode(tokens, B, n, pos, src);
        append_host(logits, l.data(), int64_t(l.size()));
        return;
      }
      model.forward(tokens, CVec<int32_t>(), B, n, src);
      const CVec<float> p = model.probs();  // [B, n, V]
      const int64_t V = int64_t(p.size()) / (int64_t(B) * n);
      for (int b = 0; b < B; ++b) append_host(logits, p.data() + (int64_t(b) * n + n - 1) * V, V);
      for (float& x : logits) x = std::log(x);  // log-probabilities: logits up to a constant
    });
    pos += Tn;
    Tn = 1;
    const int vocab = int(logits.size()) / B;
    bool more = false;
    for (int b = 0; b < B; ++b) {
      const auto& prompt = prompts[size_t(b)];
      auto& mine = out[size_t(b)];
      int32_t tok = 0;
      if (size_t(pos) < prompt.size()) {
        tok = prompt[size_t(pos)];  // still reading its prompt
      } else if (int(mine.size()) < max_new) {
        const double coin = rule.temperature > 0 ? coins.next() : 0.0;
        tok = next_token(logits.data() + int64_t(b) * vocab, vocab, rule, coin);
        mine.push_back(tok);
        sink(b, tok);
      } else {
        tok = mine.back();  // finished: fed along, its logits unused
      }
      seqs[size_t(b)].push_back(tok);
      more = more || int(mine.size()) < max_new;
    }
    if (!more) break;
  }
  return out;
}

}  // namespace zeropp
