// Prints the registered init transforms' names on the first line, then InitProbeDigests(): the
// reference that init_determinism_test compares with, from a binary linking only the built-ins.
#include <iostream>

#include "absl/strings/str_join.h"
#include "mimetic/experiments/testing/init_determinism_probe.h"
#include "mimetic/init/registry.h"

int main() {
  absl::StatusOr<std::string> digests = mimetic::experiments::InitProbeDigests();
  if (!digests.ok()) {
    std::cerr << digests.status() << "\n";
    return 1;
  }
  std::cout << absl::StrJoin(mimetic::init::GlobalTransformRegistry().Names(), ",") << "\n" << *digests;
  return 0;
}
