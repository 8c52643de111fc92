// Prints the built-in init transforms' table of docs/init_transforms.md (registry_table.h), to paste
// between its "generated" markers:
//   tools/bazel run //mimetic/init:print_transform_table
#include <iostream>

#include "mimetic/init/registry.h"
#include "mimetic/init/registry_table.h"

int main() {
  std::cout << mimetic::init::TransformTableMarkdown(mimetic::init::GlobalTransformRegistry());
  return 0;
}
