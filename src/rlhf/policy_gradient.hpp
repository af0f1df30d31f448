// The objective of `zeropp rlhf`: REINFORCE with a baseline, the KL penalty
// to the frozen reference folded into the per-token reward (DeepSpeed-Chat's
// shaping without a value model).
//
// For completion token t of a sequence (t = 0 .. Tc-1), with the policy's
// and the reference's log-probabilities lp_t and lr_t of the sampled token:
//   k_t = lp_t - lr_t                      (per-token KL estimate)
//   r_t = -beta·k_t, plus the sequence's reward R at the last token
//   G_t = sum_{s >= t} r_s                 (return, undiscounted)
//   A_t = G_t - b_t, b_t = mean of G_t over the global batch (the baseline)
// and the loss is sum_t A_t·(-log pi(token_t)): a cross-entropy on the
// completion tokens weighted by A_t (prompt tokens weight 0), whose gradient
// is REINFORCE's -sum_t A_t·grad log pi. Why REINFORCE rather than PPO-clip:
// each batch is used for exactly one update, so the importance ratio is 1
// and PPO's clip never acts; a per-batch baseline needs no value model.
#pragma once

#include <cstddef>
#include <vector>

namespace zeropp {

// G [B, Tc] from rewards R [B] and log-probabilities lp, lr [B, Tc].
std::vector<double> token_returns(const std::vector<double>& reward, const std::vector<double>& lp,
                                  const std::vector<double>& lr, double beta, int B, int Tc);

// Sum over the B rows of G [B, Tc], per position: [Tc].
std::vector<double> column_sums(const std::vector<double>& G, int B, int Tc);

// Loss weights [B, Tp+Tc-1] over the targets of rows of Tp+Tc tokens: A_t =
// G_t - baseline[t] at the target of completion token t, 0 at the prompt's.
std::vector<float> advantage_weights(const std::vector<double>& G, const std::vector<double>& baseline, int B,
                                     int Tp, int Tc);

}  // namespace zeropp
