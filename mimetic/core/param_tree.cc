#include "mimetic/core/param_tree.h"

#include <cmath>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mimetic::core {
namespace {

// Matches glob segments against path segments; "**" consumes any number of segments.
bool MatchSegment(absl::string_view glob, absl::string_view text) {
  if (glob.empty()) return text.empty();
  if (glob[0] == '*') {
    for (size_t i = 0; i <= text.size(); ++i) {
      if (MatchSegment(glob.substr(1), text.substr(i))) return true;
    }
    return false;
  }
  if (text.empty()) return false;
  if (glob[0] != '?' && glob[0] != text[0]) return false;
  return MatchSegment(glob.substr(1), text.substr(1));
}

bool MatchSegments(const std::vector<absl::string_view>& glob, size_t gi,
                   const std::vector<absl::string_view>& path, size_t pi) {
  if (gi == glob.size()) return pi == path.size();
  if (glob[gi] == "**") {
    for (size_t k = pi; k <= path.size(); ++k) {
      if (MatchSegments(glob, gi + 1, path, k)) return true;
    }
    return false;
  }
  if (pi == path.size()) return false;
  return MatchSegment(glob[gi], path[pi]) && MatchSegments(glob, gi + 1, path, pi + 1);
}

// Flatten and Unflatten read and write leaves through float host pointers, so every leaf must be
// an OK f32 CPU tensor; otherwise the data<float>() / mutable_data<float>() checks would abort.
absl::Status CheckFlatLeaf(absl::string_view op, const std::string& path, const Tensor& t) {
  if (!t.ok()) {
    return absl::Status(t.status().code(), absl::StrCat("ParamTree::", op, ": leaf '", path,
                                                        "' is an error: ", t.status().message()));
  }
  if (t.dtype() != DType::kF32 || t.device() != Device::kCpu) {
    return absl::InvalidArgumentError(absl::StrCat("ParamTree::", op, ": leaf '", path, "' is ",
                                                   t.meta().DebugString(), "; expected f32 on cpu"));
  }
  return absl::OkStatus();
}

}  // namespace

ParamTree::ParamTree() : data_(std::make_shared<const Data>()) {}

absl::Status ParamTree::ValidatePath(absl::string_view path) {
  if (path.empty()) return absl::InvalidArgumentError("ParamTree: empty path; expected e.g. 'layers/0/mixer/D'");
  for (absl::string_view seg : absl::StrSplit(path, '/')) {
    if (seg.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ParamTree: path '", path, "' has an empty segment; expected 'a/b/c'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ParamTree> ParamTree::FromPairs(std::vector<std::pair<std::string, Tensor>> pairs) {
  auto data = std::make_shared<Data>();
  for (auto& [path, tensor] : pairs) {
    RETURN_IF_ERROR(ValidatePath(path));
    if (!tensor.ok()) {
      return absl::Status(tensor.status().code(),
                          absl::StrCat("ParamTree: leaf '", path, "' is an error: ", tensor.status().message()));
    }
    if (!data->index.emplace(path, data->paths.size()).second) {
      return absl::InvalidArgumentError(absl::StrCat("ParamTree: duplicate path '", path, "'"));
    }
    data->paths.push_back(std::move(path));
    data->leaves.push_back(std::move(tensor));
  }
  return ParamTree(std::move(data));
}

absl::Status ParamTree::NotFound(absl::string_view path) const {
  // Name the paths sharing the longest prefix, so a typo is easy to spot.
  size_t best = 0;
  std::vector<std::string> near;
  for (const std::string& p : data_->paths) {
    size_t common = 0;
    while (common < p.size() && common < path.size() && p[common] == path[common]) ++common;
    if (common > best) {
      best = common;
      near.clear();
    }
    if (common == best && near.size() < 4) near.push_back(p);
  }
  return absl::NotFoundError(absl::StrCat("ParamTree: no path '", path, "' among ", size(), " leaves",
                                          near.empty() ? "" : "; nearest: ", absl::StrJoin(near, ", ")));
}

absl::StatusOr<ParamTree> ParamTree::With(absl::string_view path, Tensor value) const {
  RETURN_IF_ERROR(ValidatePath(path));
  RETURN_IF_ERROR(value.status());
  auto data = std::make_shared<Data>(*data_);
  auto it = data->index.find(path);
  if (it != data->index.end()) {
    data->leaves[it->second] = std::move(value);
  } else {
    data->index.emplace(std::string(path), data->paths.size());
    data->paths.emplace_back(path);
    data->leaves.push_back(std::move(value));
  }
  return ParamTree(std::move(data));
}

absl::StatusOr<ParamTree> ParamTree::Replace(absl::string_view path, Tensor value) const {
  ASSIGN_OR_RETURN(Tensor old, Get(path));
  RETURN_IF_ERROR(value.status());
  if (old.shape() != value.shape() || old.dtype() != value.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("ParamTree::Replace('", path, "'): expected ",
                                                   old.meta().DebugString(), ", found ",
                                                   value.meta().DebugString()));
  }
  return With(path, std::move(value));
}

absl::StatusOr<Tensor> ParamTree::Get(absl::string_view path) const {
  auto it = data_->index.find(path);
  if (it == data_->index.end()) return NotFound(path);
  return data_->leaves[it->second];
}

bool ParamTree::Contains(absl::string_view path) const { return data_->index.contains(path); }

ParamTree ParamTree::Map(const std::function<Tensor(const Tensor&)>& f) const {
  return MapWithPath([&f](const std::string&, const Tensor& t) { return f(t); });
}

ParamTree ParamTree::MapWithPath(const std::function<Tensor(const std::string&, const Tensor&)>& f) const {
  auto data = std::make_shared<Data>(*data_);
  for (size_t i = 0; i < data->leaves.size(); ++i) data->leaves[i] = f(data->paths[i], data_->leaves[i]);
  return ParamTree(std::move(data));
}

bool ParamTree::GlobMatch(absl::string_view glob, absl::string_view path) {
  std::vector<absl::string_view> g = absl::StrSplit(glob, '/');
  std::vector<absl::string_view> p = absl::StrSplit(path, '/');
  return MatchSegments(g, 0, p, 0);
}

ParamTree ParamTree::Select(absl::string_view glob) const {
  auto data = std::make_shared<Data>();
  for (size_t i = 0; i < size(); ++i) {
    if (!GlobMatch(glob, data_->paths[i])) continue;
    data->index.emplace(data_->paths[i], data->paths.size());
    data->paths.push_back(data_->paths[i]);
    data->leaves.push_back(data_->leaves[i]);
  }
  return ParamTree(std::move(data));
}

absl::Status ParamTree::CheckSameStructure(const ParamTree& other) const {
  if (size() != other.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ParamTree structure mismatch: ", size(), " leaves vs ", other.size()));
  }
  for (size_t i = 0; i < size(); ++i) {
    if (data_->paths[i] != other.data_->paths[i]) {
      return absl::InvalidArgumentError(absl::StrCat("ParamTree structure mismatch at leaf ", i, ": '",
                                                     data_->paths[i], "' vs '", other.data_->paths[i], "'"));
    }
    const Tensor& a = data_->leaves[i];
    const Tensor& b = other.data_->leaves[i];
    if (a.shape() != b.shape() || a.dtype() != b.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("ParamTree structure mismatch at '", data_->paths[i],
                                                     "': ", a.meta().DebugString(), " vs ",
                                                     b.meta().DebugString()));
    }
  }
  return absl::OkStatus();
}

bool ParamTree::SameStructure(const ParamTree& other) const { return CheckSameStructure(other).ok(); }

absl::StatusOr<ParamTree> ParamTree::WithLeaves(std::vector<Tensor> leaves) const {
  if (leaves.size() != size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ParamTree::WithLeaves: ", leaves.size(), " leaves given, expected ", size()));
  }
  auto data = std::make_shared<Data>(*data_);
  for (size_t i = 0; i < leaves.size(); ++i) {
    RETURN_IF_ERROR(leaves[i].status());
    const Tensor& old = data_->leaves[i];
    if (old.shape() != leaves[i].shape() || old.dtype() != leaves[i].dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("ParamTree::WithLeaves at '", data_->paths[i],
                                                     "': expected ", old.meta().DebugString(), ", found ",
                                                     leaves[i].meta().DebugString()));
    }
    data->leaves[i] = std::move(leaves[i]);
  }
  return ParamTree(std::move(data));
}

absl::StatusOr<ParamTree> ParamTree::ZipWith(
    const ParamTree& other, const std::function<Tensor(const Tensor&, const Tensor&)>& f) const {
  RETURN_IF_ERROR(CheckSameStructure(other));
  auto data = std::make_shared<Data>(*data_);
  for (size_t i = 0; i < size(); ++i) {
    data->leaves[i] = f(data_->leaves[i], other.data_->leaves[i]);
    if (!data->leaves[i].ok()) return data->leaves[i].status();
  }
  return ParamTree(std::move(data));
}

int64_t ParamTree::NumElements() const {
  int64_t n = 0;
  for (const Tensor& t : data_->leaves) n += t.numel();
  return n;
}

absl::StatusOr<Tensor> ParamTree::Flatten() const {
  for (size_t i = 0; i < size(); ++i) {
    RETURN_IF_ERROR(CheckFlatLeaf("Flatten", data_->paths[i], data_->leaves[i]));
  }
  ASSIGN_OR_RETURN(Tensor flat, Tensor::Uninitialized(TensorMeta{{NumElements()}, DType::kF32, Device::kCpu}));
  float* out = flat.mutable_data<float>();
  for (const Tensor& t : data_->leaves) {
    if (t.numel() > 0) std::memcpy(out, t.data<float>(), t.bytes());
    out += t.numel();
  }
  return flat;
}

absl::StatusOr<ParamTree> ParamTree::Unflatten(const Tensor& flat) const {
  RETURN_IF_ERROR(flat.status());
  for (size_t i = 0; i < size(); ++i) {
    RETURN_IF_ERROR(CheckFlatLeaf("Unflatten", data_->paths[i], data_->leaves[i]));
  }
  if (flat.rank() != 1 || flat.dtype() != DType::kF32 || flat.device() != Device::kCpu ||
      flat.numel() != NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat("ParamTree::Unflatten: got ", flat.meta().DebugString(),
                                                   ", expected f32(", NumElements(), ")@cpu"));
  }
  std::vector<Tensor> leaves;
  const float* in = flat.data<float>();
  for (const Tensor& t : data_->leaves) {
    ASSIGN_OR_RETURN(Tensor leaf, Tensor::Uninitialized(t.meta()));
    if (t.numel() > 0) std::memcpy(leaf.mutable_data<float>(), in, t.bytes());
    in += t.numel();
    leaves.push_back(std::move(leaf));
  }
  return WithLeaves(std::move(leaves));
}

std::string ParamTree::DebugString() const {
  std::string out;
  for (size_t i = 0; i < size(); ++i) {
    absl::StrAppend(&out, data_->paths[i], ": ", data_->leaves[i].DebugString(), "\n");
  }
  return out;
}

absl::StatusOr<std::optional<NonFiniteLeaf>> FindNonFinite(const ParamTree& tree) {
  for (size_t i = 0; i < tree.size(); ++i) {
    const Tensor& leaf = tree.Leaves()[i];
    if (leaf.dtype() != DType::kF32 && leaf.dtype() != DType::kF64) continue;
    ASSIGN_OR_RETURN(Tensor host, leaf.ToDevice(Device::kCpu));
    int64_t bad = 0;
    if (host.dtype() == DType::kF32) {
      const float* x = host.data<float>();
      for (int64_t k = 0; k < host.numel(); ++k) bad += std::isfinite(x[k]) ? 0 : 1;
    } else {
      const double* x = host.data<double>();
      for (int64_t k = 0; k < host.numel(); ++k) bad += std::isfinite(x[k]) ? 0 : 1;
    }
    if (bad > 0) return NonFiniteLeaf{tree.Paths()[i], bad, host.numel()};
  }
  return std::nullopt;
}

}  // namespace mimetic::core
