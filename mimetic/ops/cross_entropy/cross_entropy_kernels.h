// Launchers of the CUDA masked cross-entropy kernels (cross_entropy.cu). Plain C++: builtin types
// and pointers only, so cross_entropy_cuda.cc needs no CUDA headers. Each returns nullptr on
// success or a static CUDA error string. All pointers are device pointers; `stream` is a
// cudaStream_t; f64 selects double over float for logits, mask, g and the outputs.
#ifndef MIMETIC_OPS_CROSS_ENTROPY_CROSS_ENTROPY_KERNELS_H_
#define MIMETIC_OPS_CROSS_ENTROPY_CROSS_ENTROPY_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda {

// The outcome of the on-device target check. `checked` is false when the stream was being
// captured into a CUDA graph (no host synchronisation is possible then; bad targets are still never
// used as indices). Otherwise bad_row is the first row whose mask is nonzero and whose target lies
// outside [0, V) (-1 when none), with that row's target and mask.
struct TargetCheck {
  bool checked = false;
  int64_t bad_row = -1;
  int32_t bad_target = 0;
  double bad_mask = 0;
};

// loss () = sum_r mask_r * (logsumexp(logits_r) - logits_r[targets_r]) / sum_r mask_r (0 when the
// mask sums to 0). logits: (rows, v), targets: (rows,) i32, mask: (rows,).
const char* LaunchMaskedCrossEntropyForward(bool f64, const void* logits, const int32_t* targets,
                                            const void* mask, void* loss, int64_t rows, int64_t v,
                                            void* stream, TargetCheck* check);

// dlogits (rows, v) = g * mask_r / sum(mask) * (softmax(logits_r) - onehot(targets_r)), 0 when the
// mask sums to 0. g: () on the device.
const char* LaunchMaskedCrossEntropyBackward(bool f64, const void* logits, const int32_t* targets,
                                             const void* mask, const void* g, void* dlogits, int64_t rows,
                                             int64_t v, void* stream, TargetCheck* check);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_CROSS_ENTROPY_CROSS_ENTROPY_KERNELS_H_
