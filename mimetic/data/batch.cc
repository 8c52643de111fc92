#include "mimetic/data/batch.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"

namespace mimetic::data {
namespace {

template <typename T>
absl::StatusOr<core::Tensor> NewTensor(int64_t batch, int64_t seq_len) {
  return core::Tensor::Uninitialized(
      core::TensorMeta{{batch, seq_len}, core::DTypeOf<T>(), core::Device::kCpu});
}

}  // namespace

absl::StatusOr<Batch> BatchFromRows(absl::Span<const int32_t> ids, absl::Span<const float> mask,
                                    int64_t batch, int64_t row_len) {
  if (batch < 0 || row_len < 2) {
    return absl::InvalidArgumentError(absl::StrCat("BatchFromRows: batch = ", batch, ", row_len = ", row_len,
                                                   "; expected batch >= 0, row_len >= 2"));
  }
  const size_t expected = static_cast<size_t>(batch * row_len);
  if (ids.size() != expected || mask.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("BatchFromRows: ids has ", ids.size(), " and mask ",
                                                   mask.size(),
                                                   " values; expected batch * row_len = ", expected));
  }
  const int64_t seq_len = row_len - 1;
  Batch out;
  ASSIGN_OR_RETURN(out.tokens, NewTensor<int32_t>(batch, seq_len));
  ASSIGN_OR_RETURN(out.targets, NewTensor<int32_t>(batch, seq_len));
  ASSIGN_OR_RETURN(out.loss_mask, NewTensor<float>(batch, seq_len));
  int32_t* tokens = out.tokens.mutable_data<int32_t>();
  int32_t* targets = out.targets.mutable_data<int32_t>();
  float* loss_mask = out.loss_mask.mutable_data<float>();
  for (int64_t b = 0; b < batch; ++b) {
    const int32_t* id_row = ids.data() + b * row_len;
    const float* mask_row = mask.data() + b * row_len;
    std::copy(id_row, id_row + seq_len, tokens + b * seq_len);
    std::copy(id_row + 1, id_row + row_len, targets + b * seq_len);
    std::copy(mask_row + 1, mask_row + row_len, loss_mask + b * seq_len);
  }
  return out;
}

absl::StatusOr<Batch> BatchFromParts(absl::Span<const int32_t> tokens, absl::Span<const int32_t> targets,
                                     absl::Span<const float> loss_mask, int64_t batch, int64_t seq_len) {
  if (batch < 0 || seq_len < 1) {
    return absl::InvalidArgumentError(absl::StrCat("BatchFromParts: batch = ", batch, ", seq_len = ", seq_len,
                                                   "; expected batch >= 0, seq_len >= 1"));
  }
  const size_t expected = static_cast<size_t>(batch * seq_len);
  if (tokens.size() != expected || targets.size() != expected || loss_mask.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("BatchFromParts: sizes ", tokens.size(), ", ",
                                                   targets.size(), ", ", loss_mask.size(),
                                                   "; expected batch * seq_len = ", expected));
  }
  Batch out;
  ASSIGN_OR_RETURN(out.tokens, NewTensor<int32_t>(batch, seq_len));
  ASSIGN_OR_RETURN(out.targets, NewTensor<int32_t>(batch, seq_len));
  ASSIGN_OR_RETURN(out.loss_mask, NewTensor<float>(batch, seq_len));
  std::copy(tokens.begin(), tokens.end(), out.tokens.mutable_data<int32_t>());
  std::copy(targets.begin(), targets.end(), out.targets.mutable_data<int32_t>());
  std::copy(loss_mask.begin(), loss_mask.end(), out.loss_mask.mutable_data<float>());
  return out;
}

std::vector<int64_t> MaskedPositions(const float* loss_mask_row, int64_t seq_len) {
  std::vector<int64_t> positions;
  for (int64_t t = 0; t < seq_len; ++t) {
    if (loss_mask_row[t] != 0.0f) positions.push_back(t);
  }
  return positions;
}

}  // namespace mimetic::data
