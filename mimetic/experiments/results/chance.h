// The accuracy a model scores on a task without having learned what the figure asks of it: the level
// "learned nothing" is measured from, not zero. A rule that decides "not tested" (every compared model at
// the floor) or "informative" (some model above it) compares with LearnedFloor, chance plus a margin,
// computed from the task config of the reading.
//
//   TaskSpec mqar;  mqar.mutable_mqar()->set_seq_len(32);  mqar.mutable_mqar()->set_num_kv_pairs(4);
//   ChanceLevel(mqar, 64, Metric::kToken);   // 0.125: 8 pairs at length 64, one value of 8 guessed
//   LearnedFloor(mqar, 64, Metric::kToken);  // 0.175
//   LearnedFloor(copy, 32, Metric::kExact);  // 0.05: no exact copy happens by chance
#ifndef MIMETIC_EXPERIMENTS_RESULTS_CHANCE_H_
#define MIMETIC_EXPERIMENTS_RESULTS_CHANCE_H_

#include "mimetic/experiments/config/experiment.pb.h"

namespace mimetic::experiments {

// Which accuracy a rule reads: the whole string (all of MQAR's queries) right, or per token (per query).
enum class Metric { kExact, kToken };

// The margin above chance a mean must reach before it counts as learned: about 6 strings or queries in
// the 128 of an eval, well above the per-seed noise of a model at chance.
inline constexpr double kAboveChance = 0.05;

// The chance level of `metric` on `task` read at eval length `length`:
//   MQAR per query: 1 / K, K the pairs at that length (room.h RecalledItems): a model that learned the
//     format but not the association guesses one of the K values in its context (Zoology's values are
//     drawn from [V/2, V), so this is also what the last layer learns first); exact (all K right): 1/K^K;
//   mqar_copy per token: 1 / pairs (the length counts them); exact: 0;
//   copy, stack copy and sort per token: 1 / V, V the task's vocabulary; exact: 1/V^L, 0 to any reading;
//   composite and inverse-sequence: 0 (no level is derived for them; their floor is the margin alone).
double ChanceLevel(const TaskSpec& task, int length, Metric metric);

// ChanceLevel + kAboveChance: below it a model has learned nothing a rule can compare.
double LearnedFloor(const TaskSpec& task, int length, Metric metric);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RESULTS_CHANCE_H_
