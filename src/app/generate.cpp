#include "src/app/generate.hpp"

#include <algorithm>
#include <string>

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

std::vector<std::vector<int32_t>> generate(Model<float>& model, const PassRunner& run,
                                           const std::vector<std::vector<int32_t>>& prompts, int max_new,
                                           const SamplingRule& rule, CoinStream& coins,
                                           const TokenSink& sink) {
  const int B = int(prompts.size());
  size_t shortest = prompts[0].size();
  for (const auto& p : prompts) shortest = std::min(shortest, p.size());
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(B));
  Buf<int32_t> feed("generate_tokens", size_t(B) * shortest);
  for (int b = 0; b < B; ++b)
    for (size_t t = 0; t < shortest; ++t) feed(b * int64_t(shortest) + int64_t(t)) = prompts[size_t(b)][t];
  model.decode_reset(B);
  int pos = 0, Tn = int(shortest);
  std::vector<float> logits;
  for (;;) {
    run([&](UnitSource<float>& src) {
      const CVec<float> l = model.decode(CVec<int32_t>(feed.data(), int64_t(B) * Tn), B, Tn, pos, src);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l);
      logits.assign(h.data(), h.data() + h.size());
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
      feed(b) = tok;
      more = more || int(mine.size()) < max_new;
    }
    if (!more) break;
  }
  return out;
}

}  // namespace zeropp
