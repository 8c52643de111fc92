// tools/bazel run //examples:inspect_init [-- --model=... --variant=... --seed=N --length=L]: see
// inspect_init.h. Links //examples:orthogonal_bc, so --variant may name "orthogonal_bc" too.
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "examples/inspect_init.h"

ABSL_FLAG(std::string, model, examples::kInspectModel, "the model: ModelSpec text");
ABSL_FLAG(std::string, variant, examples::kInspectVariant,
          "the init: Variant text, as in an experiment config");
ABSL_FLAG(uint64_t, seed, 1, "the model's key");
ABSL_FLAG(int64_t, length, 16, "tokens per row for the attention masks");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "prints an init's parameter statistics and attention masks; see examples/inspect_init.h");
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<examples::InspectReport> r =
      examples::InspectInit(absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_variant),
                            absl::GetFlag(FLAGS_seed), absl::GetFlag(FLAGS_length));
  if (!r.ok()) {
    std::cerr << "error: " << r.status().message() << "\n";
    return 1;
  }
  examples::PrintReport(*r, std::cout);
  return 0;
}
