// Embedding: row lookup in a (V, D) table, the input layer of every language model here (and, with
// the table tied to the LM head, half of its gradient).
//
//   Tensor h = Embedding(table, tokens);   // table (V, D), tokens (B, L) i32 -> h (B, L, D)
//
// Ids are checked when the op runs: an id outside [0, V) gives an error tensor naming the id, its
// position and V. The gradient is EmbeddingBackward, a deterministic scatter-add (repeated ids
// accumulate in token order), and is defined for the table only.
#ifndef MIMETIC_OPS_EMBEDDING_EMBEDDING_H_
#define MIMETIC_OPS_EMBEDDING_EMBEDDING_H_

#include <string>
#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// table: (V, D) f32|f64; ids: (...) i32 in [0, V) -> (..., D).
Tensor Embedding(const Tensor& table, const Tensor& ids);

// The table's cotangent: out[v] = sum over positions p with ids[p] == v of grad[p].
// grad: (..., D) f32|f64; ids: (...) i32 in [0, num_rows) -> (num_rows, D).
Tensor EmbeddingBackward(const Tensor& grad, const Tensor& ids, int64_t num_rows);

class EmbeddingOp : public core::Op {
 public:
  const char* name() const override { return "embedding"; }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
};

class EmbeddingBackwardOp : public core::Op {
 public:
  explicit EmbeddingBackwardOp(int64_t num_rows) : num_rows_(num_rows) {}
  const char* name() const override { return "embedding_backward"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  // Scatter-add is linear in grad; its transpose is the lookup: Embedding(out_grad, ids).
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int64_t num_rows() const { return num_rows_; }

 private:
  int64_t num_rows_;
};

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_EMBEDDING_EMBEDDING_H_
