// MatMul: the matrix products of every Linear layer, the tied LM head and attention scores.
//
//   Tensor y = MatMul(x, w, false, true);       // x (B, L, D), w (E, D) -> y (B, L, E) = x @ w^T
//   Tensor s = MatMul(q, k, false, true);       // q, k (B, H, L, P) -> s (B, H, L, L)
//   Tensor dw = MatMulSumBatch(g, x, true);     // g (B, L, E), x (B, L, D) -> (E, D) = sum_b g_b^T x_b
//
// The fast CPU path: a rank-2 operand shared by a batched one whose rows can be flattened
// ("x @ W^T") is a single GEMM over all B*L rows, and so is a weight gradient (MatMulSumBatch with
// transpose_a); such a GEMM runs on ops/cpu/panel_gemm.h's kernel where PanelGemmSuits says it
// beats OpenBLAS (a small model's skinny products), else on OpenBLAS. Other batched products are a
// loop of OpenBLAS GEMMs (run in parallel over the batch when each is too small to thread).
#ifndef MIMETIC_OPS_MATMUL_MATMUL_H_
#define MIMETIC_OPS_MATMUL_MATMUL_H_

#include <string>
#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// op(a) @ op(b), where op transposes the last two axes when the flag is set.
// a: (..., M, K) f32|f64, or (..., K, M) if transpose_a
// b: (..., K, N) same dtype, or (..., N, K) if transpose_b
// Either operand may be rank 2 and is then shared across the other's leading batch dims;
// otherwise both carry identical batch dims (no other broadcasting). Result: (..., M, N).
// Rank-2 b with rank>2 a (and no transpose_a) is one GEMM over the flattened rows of a.
Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

// sum_i op(a_i) @ op(b_i) over the shared leading batch dims: the gradient of a matrix shared
// across a batch (the weight of a Linear layer).
// a: (..., M, K) or (..., K, M); b: (..., K, N) or (..., N, K), same batch dims -> (M, N).
// With transpose_a and not transpose_b this is one GEMM contracting over all batch rows.
Tensor MatMulSumBatch(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

// The primitive behind both functions.
class MatMulOp : public core::Op {
 public:
  MatMulOp(bool transpose_a, bool transpose_b, bool sum_batch)
      : transpose_a_(transpose_a), transpose_b_(transpose_b), sum_batch_(sum_batch) {}
  const char* name() const override { return sum_batch_ ? "matmul_sum_batch" : "matmul"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;

  bool transpose_a() const { return transpose_a_; }
  bool transpose_b() const { return transpose_b_; }
  bool sum_batch() const { return sum_batch_; }

 private:
  bool transpose_a_;
  bool transpose_b_;
  bool sum_batch_;
};

// How a (validated) call maps onto a sequence of GEMMs; shared by every backend, including the
// CUDA launcher (cublasGemmStridedBatched takes exactly these numbers).
struct GemmPlan {
  int64_t batch = 1;  // number of GEMMs
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between consecutive GEMMs' operands
  bool transpose_a = false, transpose_b = false;
  bool accumulate = false;  // sum over the batch into one C (stride_c == 0): beta = 1 after the first
};

// The plan for MatMulOp on inputs a, b (already accepted by InferMeta). When `flatten` is set,
// shared-operand products and row-contracting batch sums collapse into a single large GEMM.
GemmPlan MakeGemmPlan(const MatMulOp& op, const core::TensorMeta& a, const core::TensorMeta& b, bool flatten);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_MATMUL_MATMUL_H_
