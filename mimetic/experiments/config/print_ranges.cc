// Prints docs/config_ranges.md, the valid range of every numeric config field (field_ranges.h):
//   tools/bazel run //mimetic/experiments:print_ranges > docs/config_ranges.md
#include <iostream>

#include "mimetic/experiments/config/field_ranges.h"

int main() {
  std::cout << mimetic::experiments::RangesMarkdown();
  return 0;
}
