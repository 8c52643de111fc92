// The room a model and task give mimetic init's mechanism. At init a mimetic Mamba layer is causal linear
// attention (paper §4, eq. 12) whose keys B_t and queries C_t are projections of the layer's input, so
// the key dimension it can use is capped by that input's width as well as by the state size N:
//   Mamba 2: min(N, D)       (B and C are rows of in_proj acting on the width-D block input)
//   Mamba 1: min(N, E)       (B and C come from x_proj acting on the E = expand * D conv output)
//   linear attention: min(head_dim, D);  softmax attention: no such limit.
// Exact recall of a string needs a key dimension of several times its length (docs/reproducing.md), and
// an eval example should fit the training rows (Jelassi et al.'s pipeline refuses one that does not).
//
//   std::optional<int> key = MinKeyDimension(resolved_spec);      // 32 for a width-64 Mamba 2, N 32
//   std::optional<int64_t> ids = ExampleTokens(task, 40);        // copy: 2 * 40 + 3 = 83
//   std::optional<int64_t> row = TrainingRowTokens(task);        // copy: context_len + 1
#ifndef MIMETIC_EXPERIMENTS_CONFIG_ROOM_H_
#define MIMETIC_EXPERIMENTS_CONFIG_ROOM_H_

#include <cstdint>
#include <optional>
#include <string>

#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::experiments {

// Layer `layer`'s key dimension in a resolved spec (layers listed); nullopt for softmax attention.
std::optional<int> KeyDimension(const models::ModelSpec& resolved, int layer);
// The smallest key dimension over the layers that have one; nullopt when none has (all attention).
std::optional<int> MinKeyDimension(const models::ModelSpec& resolved);
// The key dimension that limits what the model can recall: MinKeyDimension for a stack of Mamba and
// linear-attention layers; nullopt for a model with a softmax-attention layer, whose exact lookup copies
// without that limit (Fig. 2's hybrid copies with its attention layer, whatever its Mamba layers' N).
std::optional<int> RecallKeyLimit(const models::ModelSpec& resolved);
// "Mamba 2 key min(N 32, D 64) = 32" for the layer with the smallest key dimension; "" when none has one.
std::string KeyDimensionText(const models::ModelSpec& resolved);

// Token ids of one evaluation example at `length`: 2 * length + 3 for copy, stack copy and sort
// (BOS, string, SEP, string, EOS), 4 * length + 3 for mqar_copy (`length` key-value pairs); nullopt for
// tasks whose examples are rows of their own (Zoology MQAR, composite, inverse sequence).
std::optional<int64_t> ExampleTokens(const TaskSpec& task, int length);
// How many items a model recalls at eval length `length`: a copied string's tokens, MQAR's key-value
// pairs (the eval scales them with the length at training's density, data/mqar.h: max(1, length * K / T)),
// mqar_copy's pairs (its length counts them). A linear-attention memory stores one item per key direction,
// so this is what the key dimension is measured against.
int RecalledItems(const TaskSpec& task, int length);
// Token ids of one packed training row (context_len + 1); nullopt for tasks that are not packed.
std::optional<int64_t> TrainingRowTokens(const TaskSpec& task);
// The task's training length, the unit its eval lengths are multiples of: copy max_len, mqar seq_len,
// mqar_copy max_kv; 0 for the others.
int TrainLength(const TaskSpec& task);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CONFIG_ROOM_H_
