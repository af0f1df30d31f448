// Fused softmax + cross-entropy over the vocabulary.
//
// Shapes (row-major): logits, probs, dlogits [N,V]; targets, losses [N].
//
// Forward: probs[n,:] = softmax(logits[n,:]), computed stably by subtracting
// the row maximum. probs may alias logits (in place): every element is read
// before it is written. If targets.size() > 0, losses[n] = -log(probs[n,
// targets[n]]) is overwritten, evaluated as log(sum) - (logit - max) so that a
// probability that underflows to 0 still gives a finite loss; with no targets
// losses is left untouched (inference).
//
// Backward (the gradient of dloss * sum_n losses[n]):
//   dlogits[n,:] += dloss * (probs[n,:] - onehot(targets[n]))
// accumulated as every backward kernel, EXCEPT when dlogits aliases probs
// (same data pointer): then the result overwrites probs, i.e. "=" semantics,
// so the model can turn its probs buffer into dlogits without a second [N,V]
// buffer.
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void softmax_crossentropy_forward(Vec<T> probs, Vec<T> losses, CVec<T> logits, CVec<int32_t> targets, int N,
                                  int V);

template <class T>
void softmax_crossentropy_backward(Vec<T> dlogits, CVec<T> probs, CVec<int32_t> targets, T dloss, int N,
                                   int V);

template <class T>
void softmax_crossentropy_forward_reference(Vec<T> probs, Vec<T> losses, CVec<T> logits,
                                            CVec<int32_t> targets, int N, int V);

template <class T>
void softmax_crossentropy_backward_reference(Vec<T> dlogits, CVec<T> probs, CVec<int32_t> targets, T dloss,
                                             int N, int V);

}  // namespace zeropp
