#include "mimetic/experiments/figures/variant_setup.h"

#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/experiments/config/room.h"
#include "mimetic/experiments/figures/figure_common.h"

namespace mimetic::experiments {
namespace {

std::string LayerText(const models::LayerSpec& l) {
  switch (l.mixer_case()) {
    case models::LayerSpec::kMamba1:
      return absl::StrCat("Mamba 1 (N ", l.mamba1().d_state(), ", expand ", l.mamba1().expand(), ")");
    case models::LayerSpec::kMamba2:
      return absl::StrCat("Mamba 2 (N ", l.mamba2().d_state(), ", head dim ", l.mamba2().headdim(), ")");
    case models::LayerSpec::kAttention:
      return absl::StrCat("attention (", l.attention().num_heads(), " head",
                          l.attention().num_heads() == 1 ? "" : "s", ")");
    case models::LayerSpec::kLinearAttention:
      return absl::StrCat("linear attention (head dim ", l.linear_attention().head_dim(), ")");
    default:
      return "unknown layer";
  }
}

// "copy V 26, strings 5..16", "MQAR V 128, T 32 with 4 pairs", or the task's kind.
std::string TaskText(const TaskSpec& t) {
  if (t.has_copy()) {
    // Sorting wins over reverse, as config.cc builds the task.
    const std::string kind = t.copy().sort() ? "sort" : t.copy().reverse() ? "stack copy" : "copy";
    return absl::StrCat(kind, " V ", t.copy().vocab(), ", strings ", t.copy().min_len(), "..",
                        t.copy().max_len());
  }
  if (t.has_mqar()) {
    return absl::StrCat("MQAR V ", t.mqar().vocab(), ", T ", t.mqar().seq_len(), " with ",
                        t.mqar().num_kv_pairs(), " pairs");
  }
  if (t.has_mqar_copy())
    return absl::StrCat("MQAR copy, ", t.mqar_copy().min_kv(), "..", t.mqar_copy().max_kv(), " pairs");
  if (t.has_composite()) return "composite";
  if (t.has_inverse_sequence()) return "inverse sequence";
  return "no task";
}

std::string SetupBody(const Experiment& e, const models::ModelSpec& spec) {
  const TrainSpec& tr = e.train();
  const std::optional<int64_t> row = TrainingRowTokens(e.task());
  return absl::StrCat(LayersText(spec), ", width ", spec.d_model(), "; lr ", tr.lr(), " ", tr.schedule(),
                      " (warmup ", tr.warmup_steps(), "), ", tr.steps(), " steps, batch ", tr.batch_size(),
                      "; ", TaskText(e.task()), row ? absl::StrCat(", rows ", *row, " tokens") : "",
                      "; seeds ", absl::StrJoin(e.seeds(), ", "));
}

}  // namespace

std::string LayersText(const models::ModelSpec& resolved) {
  std::vector<std::string> parts;
  std::string last;
  int count = 0;
  auto flush = [&] {
    if (count > 0) parts.push_back(count == 1 ? last : absl::StrCat(last, " x ", count));
  };
  for (const models::LayerSpec& l : resolved.layers()) {
    const std::string text = LayerText(l);
    if (text == last) {
      ++count;
      continue;
    }
    flush();
    last = text;
    count = 1;
  }
  flush();
  return absl::StrJoin(parts, " + ");
}

std::vector<std::string> VariantSetupLines(const FigureRun& run) {
  std::vector<std::string> bodies;                         // in the groups' order
  std::map<std::string, std::vector<std::string>> labels;  // body -> the groups that share it
  for (const Group& g : run.summary.aggregate.groups) {
    const std::optional<ResolvedGroup> r = ResolveGroup(run, g);
    if (!r) continue;
    // The seeds the group has, not the preset's list: a group may lack some.
    Experiment e = r->experiment;
    e.clear_seeds();
    for (const RunResult* p : g.runs) e.add_seeds(p->point.seed);
    const std::string body = SetupBody(e, r->spec);
    if (!labels.count(body)) bodies.push_back(body);
    labels[body].push_back(g.Label());
  }
  std::vector<std::string> lines;
  for (const std::string& body : bodies)
    lines.push_back(absl::StrCat(absl::StrJoin(labels[body], ", "), ": ", body));
  return lines;
}

}  // namespace mimetic::experiments
