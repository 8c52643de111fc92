// Backend-consistency rows for MaskedCrossEntropy and its backward primitive (see testing/op_cases.h).
#include <string>
#include <vector>

#include "mimetic/ops/cross_entropy/cross_entropy.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;
using testing::Unwatched;

// The mask handed to the op, made on the host from the drawn uniform values u (on u's device, so the harness'
// core::Vjp, which watches every input, never asks for the cotangents of targets or mask, which
// the op leaves empty; a fresh tensor is not on the tape). binary: mask = u > 0.5, else mask = u
// (weights); and mask = 0 wherever the target is outside [0, V), which the op must then ignore.
template <typename T>
Tensor MakeMaskT(const Tensor& u, const Tensor& targets, int64_t v, bool binary) {
  std::vector<T> m = u.ToVector<T>().value();
  const std::vector<int32_t> t = targets.ToVector<int32_t>().value();
  for (size_t r = 0; r < m.size(); ++r) {
    if (binary) m[r] = m[r] > T(0.5) ? T(1) : T(0);
    if (t[r] < 0 || t[r] >= v) m[r] = T(0);
  }
  return testing::OnDeviceOf(u, Tensor::FromHost<T>(u.shape(), m));
}

Tensor MakeMask(const Tensor& u, const Tensor& targets, int64_t v, bool binary) {
  if (!u.ok()) return u;
  return u.dtype() == core::DType::kF64 ? MakeMaskT<double>(u, targets, v, binary)
                                        : MakeMaskT<float>(u, targets, v, binary);
}

// logits (rows..., V) ~ N(0, scale^2); targets drawn from [target_lo, V + target_hi_extra).
OpCase LossCase(std::string name, core::Shape logits, int32_t target_lo, int32_t target_hi_extra,
                double mask_lo, double mask_hi, bool binary, double scale = 1.0) {
  const int64_t v = logits.back();
  core::Shape rows(logits.begin(), logits.end() - 1);
  return {
      "masked_cross_entropy/" + name,
      {Input::Normal(std::move(logits), scale),
       Input::Index(rows, target_lo, static_cast<int32_t>(v) + target_hi_extra),
       Input::Constant(rows, mask_lo, mask_hi)},
      [v, binary](absl::Span<const Tensor> in) {
        const Tensor targets = Unwatched(in[1]);
        return std::vector<Tensor>{MaskedCrossEntropy(in[0], targets, MakeMask(in[2], targets, v, binary))};
      }};
}

std::vector<OpCase> CrossEntropyCases() {
  std::vector<OpCase> cases = {
      LossCase("binary_mask_2x3x5", {2, 3, 5}, 0, 0, 0, 1, true),
      // Targets -2..V+1: those outside [0, V) get mask 0 and must be ignored (PAD / -100 style).
      LossCase("ignored_targets_3x4x6", {3, 4, 6}, -2, 2, 0, 1, true),
      LossCase("weighted_mask_4x7", {4, 7}, 0, 0, 0.25, 2, false),
      LossCase("all_ones_mask_2x2x3", {2, 2, 3}, 0, 0, 0.6, 1, true),
      LossCase("all_zero_mask_2x3x4", {2, 3, 4}, 0, 0, 0, 0.4, true),
      LossCase("v1", {3, 1}, 0, 0, 0.6, 1, true),
      LossCase("v2_batch1_length1", {1, 1, 2}, 0, 0, 0.6, 1, true),
      LossCase("single_row_rank1", {6}, 0, 0, 0.6, 1, true),
      LossCase("large_logits_3x5", {3, 5}, 0, 0, 0, 1, true, 20.0),
  };
  // Parallel path over rows with an odd V (vector tails), and a wide-vocabulary row.
  OpCase parallel = LossCase("parallel_6x11x517", {6, 11, 517}, -1, 1, 0, 1, true);
  parallel.check_grad = false;
  OpCase wide = LossCase("wide_vocab_2x8193", {2, 8193}, 0, 0, 0.6, 1, true, 3.0);
  wide.check_grad = false;
  cases.push_back(parallel);
  cases.push_back(wide);
  // The backward primitive on its own, fast vs reference (it has no VJP of its own).
  for (core::Shape shape : {core::Shape{2, 3, 5}, core::Shape{6, 11, 517}, core::Shape{3, 1}}) {
    const int64_t v = shape.back();
    core::Shape rows(shape.begin(), shape.end() - 1);
    OpCase c{"masked_cross_entropy_backward/" + std::to_string(v) + "_" + std::to_string(rows[0]),
             {Input::Normal(shape), Input::Index(rows, -1, static_cast<int32_t>(v) + 1),
              Input::Constant(rows, 0, 1), Input::Normal({})},
             [v](absl::Span<const Tensor> in) {
               const Tensor targets = Unwatched(in[1]);
               return std::vector<Tensor>{
                   MaskedCrossEntropyBackward(in[0], targets, MakeMask(in[2], targets, v, true), in[3])};
             }};
    c.check_grad = false;
    cases.push_back(c);
  }
  return cases;
}

MIMETIC_REGISTER_OP_CASES(CrossEntropyCases);

}  // namespace
}  // namespace mimetic::ops
