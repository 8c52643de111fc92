#include "mimetic/data/packing.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"

namespace mimetic::data {

absl::Status CheckBatchSize(const char* where, int64_t batch) {
  if (batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": batch = ", batch, "; expected batch >= 1"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> EvalSeqLen(const char* field, int64_t eval_context_len, int64_t context_len,
                                   int64_t example_tokens) {
  const int64_t needed = example_tokens - 1;
  if (eval_context_len == 0) return std::max(context_len, needed);
  if (eval_context_len < needed) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " = ", eval_context_len, " is too short for this eval length; ",
                     "expected >= ", needed, " (or 0 to size eval rows automatically)"));
  }
  return eval_context_len;
}

absl::StatusOr<Batch> SamplePackedBatch(core::Key key, int64_t batch, const PackingSpec& spec,
                                        ExampleWriter write) {
  const int64_t row_len = spec.seq_len + 1;
  MIMETIC_CHECK(1 <= spec.min_len && spec.min_len <= spec.max_len && 0 < spec.max_example_tokens &&
                spec.max_example_tokens <= row_len)
      << "internal: bad PackingSpec";
  std::vector<int32_t> ids(static_cast<size_t>(batch * row_len));
  std::vector<float> mask(ids.size());
  std::vector<int32_t> example_ids(spec.max_example_tokens);
  std::vector<float> example_mask(spec.max_example_tokens);
  for (int64_t b = 0; b < batch; ++b) {
    RandomStream rng(core::FoldIn(key, static_cast<uint32_t>(b)));
    int32_t* id_row = ids.data() + b * row_len;
    float* mask_row = mask.data() + b * row_len;
    int64_t filled = 0;
    while (filled < row_len) {
      const int64_t length = rng.UniformInt(spec.min_len, spec.max_len);
      const int64_t n = write(rng, length, example_ids.data(), example_mask.data());
      MIMETIC_CHECK(0 < n && n <= spec.max_example_tokens) << "internal: example of " << n << " tokens";
      if (filled + n > row_len) {
        // The overflowing example is cut to fill the row and not trained on (Jelassi's CopyDataset).
        const int64_t kept = row_len - filled;
        std::copy(example_ids.begin(), example_ids.begin() + kept, id_row + filled);
        std::fill(mask_row + filled, mask_row + row_len, 0.0f);
        filled = row_len;
      } else {
        std::copy(example_ids.begin(), example_ids.begin() + n, id_row + filled);
        std::copy(example_mask.begin(), example_mask.begin() + n, mask_row + filled);
        filled += n;
      }
    }
  }
  return BatchFromRows(ids, mask, batch, row_len);
}

absl::StatusOr<EvalBatch> SampleSingleExampleBatch(core::Key key, int64_t batch, int64_t length,
                                                   int64_t example_tokens, int64_t seq_len, int32_t pad,
                                                   ExampleWriter write) {
  const int64_t row_len = seq_len + 1;
  MIMETIC_CHECK(0 < example_tokens && example_tokens <= row_len) << "internal: eval example does not fit";
  std::vector<int32_t> ids(static_cast<size_t>(batch * row_len), pad);
  std::vector<float> mask(ids.size(), 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    RandomStream rng(core::FoldIn(key, static_cast<uint32_t>(b)));
    const int64_t n = write(rng, length, ids.data() + b * row_len, mask.data() + b * row_len);
    MIMETIC_CHECK(n == example_tokens)
        << "internal: example of " << n << " tokens, expected " << example_tokens;
  }
  EvalBatch out;
  ASSIGN_OR_RETURN(out.batch, BatchFromRows(ids, mask, batch, row_len));
  const float* loss_mask = out.batch.loss_mask.data<float>();
  out.answer_positions.reserve(batch);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int64_t> positions = MaskedPositions(loss_mask + b * seq_len, seq_len);
    MIMETIC_CHECK(!positions.empty()) << "internal: eval example without supervised positions";
    positions.pop_back();  // The EOS prediction is trained but not scored.
    out.answer_positions.push_back(std::move(positions));
  }
  out.lengths.assign(batch, length);
  return out;
}

}  // namespace mimetic::data
