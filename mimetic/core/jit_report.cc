// Jit's human-readable views of its plan: the per-op profile and the recorded graph.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/jit_plan.h"

namespace mimetic::core {

std::string Jit::ProfileReport() const {
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (const auto& [name, entry] : profile_.entries) {
    rows.emplace_back(entry.second, name);
    total += entry.second;
  }
  std::sort(rows.rbegin(), rows.rend());
  std::string out;
  for (const auto& [seconds, name] : rows) {
    absl::StrAppend(
        &out, absl::StrFormat("  %-36s %8d calls %10.1f ms %5.1f%%\n", name, profile_.entries.at(name).first,
                              seconds * 1e3, total > 0 ? 100 * seconds / total : 0.0));
  }
  return out;
}

std::string Jit::DebugString() const {
  if (last_ == nullptr) return absl::StrCat(name_, ": not traced yet");
  std::string out =
      absl::StrCat(name_, ": ", last_->stats.num_nodes, " nodes, ", last_->stats.num_buffers, " buffers, ",
                   last_->stats.planned_bytes, " planned bytes (eager ", last_->stats.unplanned_bytes, ")\n");
  if (last_->graph_eligible) {
    absl::StrAppend(
        &out, "  replay: ",
        last_->graph_exec != nullptr
            ? "one CUDA graph"
            : (last_->graph_failed
                   ? absl::StrCat("kernel by kernel (CUDA graph capture failed: ", last_->graph_error, ")")
                   : std::string("CUDA graph, captured on the first replay")),
        "\n");
  }
  for (size_t i = 0; i < last_->nodes.size(); ++i) {
    const Node& node = last_->nodes[i];
    absl::StrAppend(&out, "  %", i, " = ", node.op->name(), "(");
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ValueRef& r = node.inputs[k];
      absl::StrAppend(&out, k ? ", " : "",
                      r.kind == ValueRef::kInput ? "in" : (r.kind == ValueRef::kConst ? "const" : "%"),
                      r.index, r.kind == ValueRef::kNode && r.output ? absl::StrCat(".", r.output) : "");
    }
    absl::StrAppend(&out, ") -> ");
    for (const TensorMeta& m : node.outputs) absl::StrAppend(&out, m.DebugString(), " ");
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace mimetic::core
