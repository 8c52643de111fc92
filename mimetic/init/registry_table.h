// The registered init transforms as the Markdown table of docs/init_transforms.md ("The registry:
// naming a transform"): name, kind and each parameter's range and default, read from the registry
// itself, the same ParamSpecs that check a config's values (and, for the built-in kinds' fields,
// docs/config_ranges.md). registry_table_test keeps the documentation equal to it.
//
//   std::cout << TransformTableMarkdown(GlobalTransformRegistry());
#ifndef MIMETIC_INIT_REGISTRY_TABLE_H_
#define MIMETIC_INIT_REGISTRY_TABLE_H_

#include <string>

#include "mimetic/init/registry.h"

namespace mimetic::init {

// "| name | kind | parameters: range, default |" and one row per transform, sorted by name; every line
// ends in a newline.
std::string TransformTableMarkdown(const TransformRegistry& registry);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_REGISTRY_TABLE_H_
