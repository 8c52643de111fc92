// Backend-consistency rows for Embedding and EmbeddingBackward (see testing/op_cases.h).
#include <string>
#include <vector>

#include "mimetic/ops/embedding/embedding.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;
using testing::Unwatched;

OpCase LookupCase(std::string name, int64_t v, int64_t d, core::Shape ids) {
  return {"embedding/" + name,
          {Input::Normal({v, d}), Input::Index(std::move(ids), 0, static_cast<int32_t>(v))},
          [](absl::Span<const Tensor> in) { return std::vector<Tensor>{Embedding(in[0], Unwatched(in[1]))}; },
          /*atol=*/0,
          /*rtol=*/0};
}

// The backward primitive on its own (its VJP is the lookup): out (v, d).
OpCase ScatterCase(std::string name, int64_t v, int64_t d, core::Shape ids) {
  core::Shape grad = ids;
  grad.push_back(d);
  return {"embedding_backward/" + name,
          {Input::Normal(std::move(grad)), Input::Index(std::move(ids), 0, static_cast<int32_t>(v))},
          [v](absl::Span<const Tensor> in) {
            return std::vector<Tensor>{EmbeddingBackward(in[0], Unwatched(in[1]), v)};
          },
          /*atol=*/0,
          /*rtol=*/0};
}

std::vector<OpCase> EmbeddingCases() {
  std::vector<OpCase> cases = {
      LookupCase("v5_d3_ids2x3", 5, 3, {2, 3}),
      // Two rows for six tokens: ids repeat, so the gradient checks scatter-add accumulation.
      LookupCase("repeated_v2_d4_ids2x3", 2, 4, {2, 3}),
      LookupCase("v1", 1, 3, {4}),
      LookupCase("batch1_length1", 7, 5, {1, 1}),
      LookupCase("scalar_id", 4, 3, {}),
      LookupCase("d1", 3, 1, {3, 2}),
      ScatterCase("repeated_v3_d5", 3, 5, {2, 4}),
      ScatterCase("unused_rows_v9_d2", 9, 2, {3}),
  };
  // Big enough for the parallel paths (>= 2^15 elements, several column chunks incl. a ragged one).
  OpCase big = LookupCase("parallel_v50_d72", 50, 72, {8, 60});
  big.check_grad = false;
  OpCase big_scatter = ScatterCase("parallel_v11_d72", 11, 72, {8, 60});
  big_scatter.check_grad = false;
  cases.push_back(big);
  cases.push_back(big_scatter);
  return cases;
}

MIMETIC_REGISTER_OP_CASES(EmbeddingCases);

}  // namespace
}  // namespace mimetic::ops
