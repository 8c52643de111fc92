// Experiment configs: load a text-format Experiment, apply command-line overrides, validate every
// field before anything runs, and turn the parts into the library's values (task, transforms,
// optimizer, schedule).
//
//   ASSIGN_OR_RETURN(Experiment e, LoadExperiment("mimetic/experiments/configs/copy.textproto",
//                                                 {"train.lr=5e-4", "seeds=[1,2]"}));
//   ASSIGN_OR_RETURN(std::unique_ptr<data::Task> task, MakeTask(e.task()));
#ifndef MIMETIC_EXPERIMENTS_CONFIG_H_
#define MIMETIC_EXPERIMENTS_CONFIG_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "mimetic/data/task.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/init/transform.h"
#include "mimetic/train/schedule.h"
#include "mimetic/train/train_step.h"

namespace mimetic::experiments {

// How deep user text (a config file, an override's value or its field path) may nest messages. `teacher`
// makes an Experiment recursive, and protobuf's text parser recurses once per level with no bound of its
// own, so a hostile config would otherwise overflow the stack. Real configs nest under 10 levels.
inline constexpr int kMaxConfigDepth = 64;
// Merges protobuf text `text` into `message` as every parse of user or saved text must: messages nested
// deeper than kMaxConfigDepth are refused; errors name line, column and (for depth) the limit.
absl::Status MergeConfigText(const std::string& text, google::protobuf::Message* message);
// `message` as protobuf text on one line (no trailing space): for configs and specs in file metadata
// and one-line messages.
std::string OneLineText(const google::protobuf::Message& message);
// The first field in which `given` differs from `saved`, as protobuf's differencer says it ("modified:
// train.lr: 0.001 -> 0.0005", cut at 300 characters), or "" when they are equal: for errors that refuse
// one experiment in place of another.
std::string FirstDifference(const google::protobuf::Message& saved, const google::protobuf::Message& given);
// Parses `text` (protobuf text format); unknown fields and syntax errors name the line and field.
absl::StatusOr<Experiment> ParseExperiment(const std::string& text);
// Reads `path`, parses it, applies `overrides` ("a.b.c=value"; repeated fields take "[v1, v2]"),
// validates the experiment and every point of its sweep (sweep.h). The result is NOT resolved (model
// specs keep default_layer / layer_overrides) so that sweep axes over model fields still apply;
// PointExperiment resolves each point. Every problem is an InvalidArgument naming the field.
absl::StatusOr<Experiment> LoadExperiment(const std::string& path, const std::vector<std::string>& overrides);
// One override "train.lr=5e-4" (or "model.default_layer.mamba2.d_state=32", "eval.lengths=[50,100]",
// "variants[custom].init[0].named.params[c]=4": a map entry by its key, added when absent).
absl::Status ApplyOverride(const std::string& assignment, Experiment* experiment);
// OK when `path` ("train.lr", "variants[mimetic].init[0].mimetic.c") leads to a field of `e` that an
// override can set; else InvalidArgument saying what is wrong with it (no field of that name, an index out
// of range, a path past the nesting limit).
absl::Status CheckFieldPath(const Experiment& e, const std::string& path);
// Checks every field against its range; resolves model specs in place.
absl::Status ValidateExperiment(Experiment* experiment);

absl::StatusOr<std::unique_ptr<data::Task>> MakeTask(const TaskSpec& spec);
// Default init followed by the variant's transforms.
absl::StatusOr<init::Transform> MakeTransform(const Variant& variant);
// The variant's model spec (its own, or the experiment's).
const models::ModelSpec& VariantModel(const Experiment& e, const Variant& v);
train::OptimizerConfig MakeOptimizerConfig(const TrainSpec& t);
train::Schedule MakeSchedule(const TrainSpec& t);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CONFIG_H_
