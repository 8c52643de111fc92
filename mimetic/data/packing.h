// Jelassi-style batches for the copy-like tasks (copy, stack-order copy, sorting, copy-style MQAR),
// Jelassi et al. 2024 ("Repeat After Me"), train_utils.py and test_utils.py. A task supplies an ExampleWriter
// that writes one `$ prompt | answer .` example of a given length with its mask (0 on the prompt, 1 on the
// answer and EOS); this file turns it into packed training rows and padded single-example eval rows.
//
// Training rows (SamplePackedBatch): each row of T+1 ids is filled by concatenating fresh examples,
// lengths uniform in [min_len, max_len]; the example that would overflow is cut to fill the row
// exactly and all its tokens get mask 0. Every row starts with BOS; the model state is not reset
// between examples. Then tokens = ids[:, :-1], targets = ids[:, 1:], loss_mask = mask[:, 1:].
//
// Eval rows (SampleSingleExampleBatch): one example at exactly `length`, then PAD up to T+1 ids
// (mask 0 on PAD). answer_positions are the supervised positions except the last one, which
// predicts EOS: the scored predictions of the answer (Jelassi et al.'s test_utils.py `evaluation` does not
// check EOS).
//
// Note on T: here T (the `context_len` of the configs) is the number of model input positions; a
// row holds T+1 ids. Jelassi's rows hold context_len ids, i.e. T = context_len - 1 there.
#ifndef MIMETIC_DATA_PACKING_H_
#define MIMETIC_DATA_PACKING_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "mimetic/core/key.h"
#include "mimetic/data/batch.h"
#include "mimetic/data/random_stream.h"

namespace mimetic::data {

// One example as full ids and its per-token training mask (before the shift), e.g. for copy with
// V = 26 and s = "abc": ids [26, 0, 1, 2, 27, 0, 1, 2, 28], mask [0, 0, 0, 0, 0, 1, 1, 1, 1].
struct Example {
  std::vector<int32_t> ids;
  std::vector<float> mask;
};

// Writes one example of `length` to ids[0, n) and mask[0, n) and returns n. The buffers hold at least
// the `max_example_tokens` given alongside the writer.
using ExampleWriter =
    absl::FunctionRef<int64_t(RandomStream& rng, int64_t length, int32_t* ids, float* mask)>;

struct PackingSpec {
  int64_t min_len = 1;  // Example lengths are uniform in [min_len, max_len].
  int64_t max_len = 1;
  int64_t seq_len = 0;             // T: model inputs per row (rows hold T+1 ids).
  int64_t max_example_tokens = 0;  // Size of the longest example (at max_len), <= T+1.
};

// `batch` packed training rows; row b is drawn from FoldIn(key, b). batch >= 1.
absl::StatusOr<Batch> SamplePackedBatch(core::Key key, int64_t batch, const PackingSpec& spec,
                                        ExampleWriter write);

// `batch` eval rows, each one example of exactly `length` (example_tokens ids) followed by `pad` up to
// seq_len + 1 ids; seq_len + 1 >= example_tokens. Row b is drawn from FoldIn(key, b). batch >= 1.
absl::StatusOr<EvalBatch> SampleSingleExampleBatch(core::Key key, int64_t batch, int64_t length,
                                                   int64_t example_tokens, int64_t seq_len, int32_t pad,
                                                   ExampleWriter write);

// T of the eval rows for an example of `example_tokens` ids: eval_context_len when > 0 (InvalidArgument
// naming `field` when it is below example_tokens - 1, the room for the example up to its EOS target),
// else max(context_len, example_tokens - 1).
absl::StatusOr<int64_t> EvalSeqLen(const char* field, int64_t eval_context_len, int64_t context_len,
                                   int64_t example_tokens);

// InvalidArgument unless batch >= 1 ("<task>.Sample<what>: batch = ..."); shared by all tasks.
absl::Status CheckBatchSize(const char* where, int64_t batch);

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_PACKING_H_
