#include "mimetic/init/registry_table.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mimetic::init {
namespace {

std::string KindText(const TransformInfo& info) {
  if (info.make_model) return "whole model";
  switch (info.default_layers) {
    case DefaultLayers::kEveryMambaLayer:
      return "per layer; default: every Mamba layer";
    case DefaultLayers::kEveryLayer:
      return "per layer; default: every layer";
    case DefaultLayers::kNone:
      return "per layer; `layers` required";
  }
  return "per layer";
}

// "`c` (0, 100], 8", "`rank` integer in [1, 64], 4", "`a` bool, true".
std::string ParamText(const ParamSpec& p) {
  switch (p.type) {
    case ParamSpec::Type::kBool:
      return absl::StrCat("`", p.name, "` bool, ", p.default_value != 0 ? "true" : "false");
    case ParamSpec::Type::kInt:
      return absl::StrCat("`", p.name, "` integer in ", p.range.ToString(), ", ", p.default_value);
    case ParamSpec::Type::kDouble:
      break;
  }
  return absl::StrCat("`", p.name, "` ", p.range.ToString(), ", ", p.default_value);
}

}  // namespace

std::string TransformTableMarkdown(const TransformRegistry& registry) {
  std::string out = "| name | kind | parameters: range, default |\n|---|---|---|\n";
  for (const std::string& name : registry.Names()) {
    const TransformInfo& info = *registry.Find(name);
    std::vector<std::string> params;
    for (const ParamSpec& p : info.params) params.push_back(ParamText(p));
    absl::StrAppend(&out, "| `", name, "` | ", KindText(info), " | ",
                    params.empty() ? "none" : absl::StrJoin(params, "; "), " |\n");
  }
  return out;
}

}  // namespace mimetic::init
