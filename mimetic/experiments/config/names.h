// The rules for what becomes a directory name (experiment, variant, sweep axis and value names), for paths
// (output_dir, checkpoint files) and for seed lists, each with one message, shared by ValidateExperiment and
// ValidateSweep.
//
//   RETURN_IF_ERROR(CheckSafeName("variants[0].name", v.name()));
//   RETURN_IF_ERROR(CheckPath("output_dir", e.output_dir()));
//   RETURN_IF_ERROR(CheckDistinctSeeds(e.seeds()));
//   if (std::optional<int> j = FirstRepeat(lengths)) ...  // lengths[*j] appeared earlier
#ifndef MIMETIC_EXPERIMENTS_CONFIG_NAMES_H_
#define MIMETIC_EXPERIMENTS_CONFIG_NAMES_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"

namespace mimetic::experiments {

// "config: <field> = <value>; expected <expected>": every config error names the field, what it held and what
// would have been accepted.
absl::Status Bad(const std::string& field, const std::string& value, const std::string& expected);

// Names that become directory components: letters, digits, '.', '_', '-', '+', not starting with '.' (so no
// separators and no ".."), 1..100 characters.
bool SafeName(const std::string& name);
// InvalidArgument naming `field` and the rule when `name` is not SafeName.
absl::Status CheckSafeName(const std::string& field, const std::string& name);

// Paths (output_dir, a checkpoint's path): anything the file system can hold, slashes and ".." included,
// but not empty, no NUL byte (a C path ends there, so the rest would be silently dropped), no part between
// slashes over 255 bytes and at most 4095 bytes in all (Linux's NAME_MAX and PATH_MAX: longer cannot be
// created or opened).
absl::Status CheckPath(const std::string& field, const std::string& path);

// `value` as an error message quotes it: in double quotes, cut after 60 bytes, control and non-ASCII bytes
// as '?' (a value may be 5,000 bytes or binary; the message must stay readable).
std::string Quoted(const std::string& value);

// Seeds: at least one, none repeated (a repeated seed would be counted twice in the mean and standard error).
absl::Status CheckDistinctSeeds(const google::protobuf::RepeatedField<uint64_t>& seeds);

// The index of the first element equal to an earlier one, or nullopt (O(n log n)).
template <typename Range>
std::optional<int> FirstRepeat(const Range& range) {
  std::set<typename Range::value_type> seen;
  int i = 0;
  for (const auto& x : range) {
    if (!seen.insert(x).second) return i;
    ++i;
  }
  return std::nullopt;
}

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CONFIG_NAMES_H_
