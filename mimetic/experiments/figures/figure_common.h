// Pieces the figures share: accuracy curves of a group as a band over seeds, a final model and its
// attention maps, the "sharp look-behind" score of a map, and statistics for claims.
//
//   ASSIGN_OR_RETURN(Band b, GroupBand(*group, 50, "mimetic @50", /*dotted=*/true, /*color=*/1));
//   ASSIGN_OR_RETURN(FinalMaps maps, ComputeFinalMaps(run, *group->runs[0]));
//   double s = LookBehindScore(maps.maps[3], maps.paste_start, maps.length);
#ifndef MIMETIC_EXPERIMENTS_FIGURE_COMMON_H_
#define MIMETIC_EXPERIMENTS_FIGURE_COMMON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/figures/figure.h"
#include "mimetic/experiments/results/chance.h"
#include "mimetic/models/attention_maps.h"

namespace mimetic::experiments {

// The group with this label, or NotFound naming the labels there are.
absl::StatusOr<const Group*> GetGroup(const FigureRun& run, const std::string& label);

// The group's exact (or, `token`, per-token) accuracy at `length` against step, mean ± standard error
// over its seeds.
absl::StatusOr<Band> GroupBand(const Group& group, int length, const std::string& name, bool dotted,
                               int color, bool token = false);

// A panel of accuracy against step: for each label, a dotted line at `lengths[0]` (the training
// length) and solid lines at the others, one colour per label.
absl::StatusOr<CurvePanel> AccuracyPanel(const FigureRun& run, const std::string& title,
                                         const std::vector<std::string>& labels,
                                         const std::vector<int>& lengths, bool token = false);

// A band through (x, mean ± standard error) points, in the order given: a statistic against an axis
// value (state size, vocabulary, training length, γ) rather than against step.
Band StatBand(const std::string& name, const std::vector<std::pair<double, Stat>>& points, int color,
              bool dotted = false);
template <typename Key>
Band StatBand(const std::string& name, const std::map<Key, Stat>& by_x, int color, bool dotted = false) {
  return StatBand(name, std::vector<std::pair<double, Stat>>(by_x.begin(), by_x.end()), color, dotted);
}

// Grey lines at the chance level of `g`'s task (chance.h) at each of `lengths`, across [x0, x1], named
// "chance @<length>" (dotted at the first, the training length, as the figures draw it): panels of an
// accuracy that has a chance level (per token, MQAR per query) show the level "learned nothing" is read from.
// None where chance is below 0.005 (exact copies: the line would lie on the axis) or the group cannot be
// resolved; one line for lengths that share a level.
std::vector<Band> ChanceBands(const FigureRun& run, const Group& g, const std::vector<int>& lengths,
                              bool token, double x0, double x1);

// The first evaluated step at which the group's mean accuracy at `length` reaches `threshold`.
std::optional<int64_t> FirstStepReaching(const Group& group, int length, double threshold);

// Every layer's attention map and average mask of a finished point's final model, on the example
// the point's own plots use (its eval key, length eval.map_length or the first eval length); FinalMaps
// is in figure.h. run.maps, when set, answers instead.
absl::StatusOr<FinalMaps> ComputeFinalMaps(const FigureRun& run, const RunResult& point);
// The final maps of every seed of `group` that has them, by seed: map claims read every seed, not the
// first. `problem` (when given) gets the first failure's message. A seed whose maps file is damaged or
// holds impossible values (DataLoss, final_maps_file.h) empties the whole result, so the claim is not
// tested rather than judged on the seeds an edit left.
std::map<uint64_t, FinalMaps> MapsBySeed(const FigureRun& run, const Group& group,
                                         std::string* problem = nullptr);
// The same example's maps for any model (e.g. a teacher checkpoint, Fig. 11), `e` a point experiment.
absl::StatusOr<FinalMaps> ComputeMaps(const Experiment& e, uint64_t seed, const core::ParamTree& params,
                                      const models::ModelSpec& spec);

// How sharply a layer looks back at the token it must copy (forward copy, `$ s | s .`): the fraction
// of paste positions p (paste_start <= p < paste_start + length; at p the model predicts the source
// token at p - length) whose largest (most positive) map entry lies within 2 tokens of p - length. 1 = every
// paste position attends to its source; a layer that only sees the recent past scores ~0.
double LookBehindScore(const models::LayerMap& map, int64_t paste_start, int64_t length);

// Pearson correlation of two maps over their lower triangles (NaN when either is constant).
double MapCorrelation(const models::LayerMap& a, const models::LayerMap& b);

// A task axis value name "<task><L>" split into the task and its training length: "copy64" -> {"copy",
// 64}, "mqar128" -> {"mqar", 128}; {"", 0} when the name has no such form (Figs. 8 and 9 name their
// task values so).
std::pair<std::string, int> TaskAndLength(const std::string& value_name);

// A group's first point experiment (one variant) and that variant's model, resolved; nullopt when the
// group has no run or either cannot be resolved.
struct ResolvedGroup {
  Experiment experiment;
  models::ModelSpec spec;
};
std::optional<ResolvedGroup> ResolveGroup(const FigureRun& run, const Group& g);

// The room each compared model gives mimetic init's mechanism (config/room.h), one line per distinct
// model and task of the run's groups: its key dimension against each eval length ("no room" where the
// key dimension is <= the length: a mimetic layer is linear attention with that key dimension, which
// cannot hold a string that long exactly), and the training row against the longest eval example in
// token ids. E.g. "mimetic: Mamba 2 key min(N 32, D 64) = 32 vs lengths 16, 32 (no room), 64 (no room);
// training row 65 tokens, longest eval example 131 tokens (longer than any training row)".
std::vector<std::string> RoomLines(const FigureRun& run);

// Says next to each verdict read where a model has no room: a claim whose rule reads a length L
// ("exact@L" in its `how`; the longest when several) gets "[no room: ...]" appended to `measured` when a
// model's recall key limit (RecallKeyLimit: none for a model with a softmax-attention layer) is <= what
// it recalls at L (RecalledItems: the string's tokens, MQAR's pairs); "for some models" unless every
// model lacks room. Claims with no "@" reading, and runs where every model has room, are left alone.
void MarkNoRoom(const FigureRun& run, std::vector<Claim>* claims);

// Where the run trained a stand-in teacher (run.teacher.run), every claim rests on it: each rule gets
// "not tested when the stand-in teacher did not learn its task", and when its final per-token accuracy at
// its first eval length is below 0.5 (still on the loss plateau: nothing to pass on) each verdict becomes
// kNotTested with the reason appended to `measured` ("the stand-in teacher did not learn its task:
// per-token@16 0.08 < 0.50"). A published checkpoint (no run) leaves the claims alone.
void MarkUnlearnedTeacher(const FigureRun& run, std::vector<Claim>* claims);

// The floor below which `g`'s accuracy at `length` has learned nothing (chance.h LearnedFloor on the
// group's own task, after its variant's and axes' overrides: MQAR per query 1/pairs + 0.05, an exact copy
// 0.05); kAboveChance when the group cannot be resolved. Every "not tested" / "informative" guard reads it.
double GroupFloor(const FigureRun& run, const Group& g, int length, bool token = false);

// Where the run's teacher started from mimetic init (run.teacher.from_mimetic_init), every claim that
// compares with mimetic init (its id ends with one of `mimetic_comparisons`, which each figure lists in
// its code) is circular: a model made from that teacher carries mimetic init's structure. Those claims
// become kNotTested with "[circular: ...]" after `measured` and the reason after `how`, whatever their
// outcome; the others are left alone.
void MarkCircularTeacher(const FigureRun& run, const std::vector<std::string>& mimetic_comparisons,
                         std::vector<Claim>* claims);

// "0.91 ± 0.03 (n=3)" of a group's final exact (or token) accuracy at a length.
Stat FinalStat(const Group& group, int length, bool token = false);

// A group's final exact (or token) accuracy at `length` per seed (a group holds one run per seed), for
// contrasts paired by seed; empty for a null group, without runs that lack the length.
std::map<uint64_t, double> FinalBySeed(const Group* group, int length, bool token = false);
std::string Describe(const std::string& label, const Stat& s);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FIGURE_COMMON_H_
