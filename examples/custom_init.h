// The `custom_init` example: a new init transform (orthogonal_bc.h) composed with the paper's A ≈ 1
// and Δ ≈ 1 steps on layer 4 (index 3) of an 8-layer Mamba 2, trained on the copy task against
// mamba_ssm's default init and the paper's mimetic init on the same layer (the setting of the
// paper's §4, "One mimetic init is all you need?"). Smoke-sized by default: seconds on 2 cores.
//
//   tools/bazel run //examples:custom_init                                  # the comparison table
//   tools/bazel run //examples:custom_init -- --set train.steps=2000 --set seeds=[1,2,3]
//   tools/bazel run //examples:custom_init -- --set 'variants[orthogonal_bc].init[0].named.params[gain]=0.5'
#ifndef EXAMPLES_CUSTOM_INIT_H_
#define EXAMPLES_CUSTOM_INIT_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/runner/runner.h"

namespace examples {

// The experiment: three variants, every init named as a config names it (the custom transform
// through the registry, like any built-in one).
inline constexpr char kCustomInitConfig[] = R"pb(
  name: "custom_init"
  model {
    vocab_size: 12
    d_model: 16
    n_layer: 8
    default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } }
  }
  variants { name: "default" }
  variants {
    name: "mimetic"
    init {
      mimetic {}
      layers: 3
    }
  }
  variants {
    name: "orthogonal_bc"
    init {
      named { name: "orthogonal_bc" }
      layers: 3
    }
    init {
      named { name: "mimetic_a" }
      layers: 3
    }
    init {
      named { name: "mimetic_delta" }
      layers: 3
    }
  }
  task { copy { vocab: 8 min_len: 2 max_len: 8 context_len: 40 } }
  train { steps: 60 batch_size: 8 lr: 3e-3 warmup_steps: 5 eval_every: 30 checkpoint_every: 60 log_every: 10 }
  eval {
    lengths: [ 8, 16 ]
    batch_size: 16
    num_batches: 1
    final_batches: 2
  }
  seeds: [ 1 ]
)pb";

// The config with `overrides` (--set syntax) applied and validated, written under `output_dir`.
absl::StatusOr<mimetic::experiments::Experiment> CustomInitExperiment(
    const std::vector<std::string>& overrides, const std::string& output_dir);

// Trains every variant (progress lines to `progress`) and returns the summary, whose `table` the
// binary prints.
absl::StatusOr<mimetic::experiments::ExperimentSummary> RunCustomInit(
    const mimetic::experiments::Experiment& e, std::ostream* progress);

}  // namespace examples

#endif  // EXAMPLES_CUSTOM_INIT_H_
