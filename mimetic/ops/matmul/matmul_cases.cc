// Backend-consistency rows for MatMul and MatMulSumBatch (see testing/op_cases.h).
#include <string>
#include <vector>

#include "mimetic/ops/matmul/matmul.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;

OpCase MatMulCase(std::string name, core::Shape a, core::Shape b, bool ta, bool tb) {
  return {
      "matmul/" + name,
      {Input::Normal(std::move(a)), Input::Normal(std::move(b))},
      [ta, tb](absl::Span<const Tensor> in) { return std::vector<Tensor>{MatMul(in[0], in[1], ta, tb)}; }};
}

OpCase SumBatchCase(std::string name, core::Shape a, core::Shape b, bool ta, bool tb) {
  return {"matmul_sum_batch/" + name,
          {Input::Normal(std::move(a)), Input::Normal(std::move(b))},
          [ta, tb](absl::Span<const Tensor> in) {
            return std::vector<Tensor>{MatMulSumBatch(in[0], in[1], ta, tb)};
          }};
}

std::vector<OpCase> MatMulCases() {
  std::vector<OpCase> cases = {
      // Rank 2, odd sizes, all four transpose combinations.
      MatMulCase("nn/odd_3x5x7", {3, 5}, {5, 7}, false, false),
      MatMulCase("nt/odd_3x5x7", {3, 5}, {7, 5}, false, true),
      MatMulCase("tn/odd_3x5x7", {5, 3}, {5, 7}, true, false),
      MatMulCase("tt/odd_3x5x7", {5, 3}, {7, 5}, true, true),
      // Degenerate extents.
      MatMulCase("nn/m1", {1, 5}, {5, 7}, false, false),
      MatMulCase("nn/k1", {3, 1}, {1, 7}, false, false),
      MatMulCase("nn/n1", {3, 5}, {5, 1}, false, false),
      MatMulCase("tt/m1_k1_n1", {1, 1}, {1, 1}, true, true),
      // Batched with identical batch dims.
      MatMulCase("nn/batched_2x3", {2, 3, 4, 5}, {2, 3, 5, 6}, false, false),
      MatMulCase("nt/batched_2x3", {2, 3, 4, 5}, {2, 3, 6, 5}, false, true),
      MatMulCase("tn/batched_2", {2, 5, 4}, {2, 5, 6}, true, false),
      MatMulCase("tt/batched_1", {1, 5, 4}, {1, 6, 5}, true, true),
      // Rank-2 b shared across a batched a: one flattened GEMM (no transpose_a) or a loop.
      MatMulCase("nn/shared_b", {2, 3, 5}, {5, 7}, false, false),
      MatMulCase("nt/shared_b_linear", {2, 3, 5}, {7, 5}, false, true),
      MatMulCase("tn/shared_b", {2, 5, 3}, {5, 7}, true, false),
      MatMulCase("tt/shared_b_rank4", {2, 2, 5, 3}, {7, 5}, true, true),
      MatMulCase("nt/shared_b_length1", {1, 1, 4}, {3, 4}, false, true),
      // Rank-2 a shared across a batched b.
      MatMulCase("nn/shared_a", {3, 5}, {2, 5, 7}, false, false),
      MatMulCase("tt/shared_a", {5, 3}, {2, 7, 5}, true, true),
      // Batch sums (weight gradients): flattened (tn) and accumulated loops.
      SumBatchCase("tn/flattened", {2, 3, 4}, {2, 3, 5}, true, false),
      SumBatchCase("nn/loop", {2, 3, 4}, {2, 4, 5}, false, false),
      SumBatchCase("nt/loop_rank4", {2, 2, 3, 4}, {2, 2, 5, 4}, false, true),
      SumBatchCase("tt/loop", {3, 4, 3}, {3, 5, 4}, true, true),
      SumBatchCase("nn/rank2", {3, 4}, {4, 5}, false, false),
  };
  // Larger shapes: the batch-parallel path (small GEMMs) and OpenBLAS' own threading (big GEMM).
  OpCase small_batches = MatMulCase("nt/parallel_batch", {9, 16, 24}, {9, 20, 24}, false, true);
  small_batches.check_grad = false;
  small_batches.atol = 1e-4;
  OpCase threaded = MatMulCase("nt/blas_threaded", {2, 64, 96}, {80, 96}, false, true);
  threaded.check_grad = false;
  threaded.atol = 1e-4;
  OpCase threaded_sum = SumBatchCase("tn/blas_threaded", {2, 64, 96}, {2, 64, 80}, true, false);
  threaded_sum.check_grad = false;
  threaded_sum.atol = 1e-4;
  cases.push_back(small_batches);
  cases.push_back(threaded);
  cases.push_back(threaded_sum);
  return cases;
}

MIMETIC_REGISTER_OP_CASES(MatMulCases);

}  // namespace
}  // namespace mimetic::ops
