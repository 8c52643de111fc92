// TreeJit: Jit for functions of parameter trees. The trees are flattened to Jit's tensor list and
// rebuilt on the other side by their paths, so a caller names what goes in and out instead of
// indexing one long list.
//
//   TreeJit step([](absl::Span<const ParamTree> in) -> absl::StatusOr<std::vector<ParamTree>> {
//     const ParamTree& params = in[0];
//     ASSIGN_OR_RETURN(Tensor x, in[1].Get("x"));
//     ...
//     return std::vector<ParamTree>{new_params, metrics};
//   }, "step");
//   ASSIGN_OR_RETURN(std::vector<ParamTree> out, step({params, batch}));   // traces, then replays
//
// Jit's contract holds (jit.h): the function is traced once per input signature (every leaf's
// shape, dtype and device) and replayed after; its output trees' paths are fixed at trace time.
#ifndef MIMETIC_CORE_TREE_JIT_H_
#define MIMETIC_CORE_TREE_JIT_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/param_tree.h"

namespace mimetic::core {

using TreeJitFn = std::function<absl::StatusOr<std::vector<ParamTree>>(absl::Span<const ParamTree> inputs)>;

class TreeJit {
 public:
  explicit TreeJit(TreeJitFn fn, std::string name = "jit");

  // Input trees whose leaves match an earlier trace's shapes and dtypes must also have its paths
  // (Jit keys plans by leaves only): other paths are a FailedPrecondition. A failing function or
  // input is the Status Jit gives.
  absl::StatusOr<std::vector<ParamTree>> operator()(absl::Span<const ParamTree> inputs);

  const Jit& jit() const { return jit_; }
  Jit& mutable_jit() { return jit_; }

 private:
  // Paths of each input tree for the call in progress, read by the traced function.
  std::vector<std::vector<std::string>> input_paths_;
  // Output trees' paths by the inputs' structure (paths and leaf metadata).
  std::map<std::string, std::vector<std::vector<std::string>>> output_paths_;
  std::vector<std::vector<std::string>> traced_output_paths_;
  TreeJitFn fn_;
  Jit jit_;
};

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_TREE_JIT_H_
