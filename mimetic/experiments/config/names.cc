#include "mimetic/experiments/config/names.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mimetic::experiments {

absl::Status Bad(const std::string& field, const std::string& value, const std::string& expected) {
  return absl::InvalidArgumentError(absl::StrCat("config: ", field, " = ", value, "; expected ", expected));
}

bool SafeName(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 100) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

absl::Status CheckSafeName(const std::string& field, const std::string& name) {
  if (SafeName(name)) return absl::OkStatus();
  // Long or binary names are cut in the message: it must stay readable.
  std::string shown = name.size() > 60 ? absl::StrCat(name.substr(0, 60), "...") : name;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return Bad(field, absl::StrCat("\"", shown, "\""),
             "a name that can be a directory: 1 to 100 letters, digits, '.', "
             "'_', '-', '+', not starting "
             "with '.'");
}

absl::Status CheckDistinctSeeds(const google::protobuf::RepeatedField<uint64_t>& seeds) {
  if (seeds.empty()) return Bad("seeds", "[]", "at least one seed");
  if (std::optional<int> i = FirstRepeat(seeds)) {
    return Bad("seeds", absl::StrCat("[", absl::StrJoin(seeds, ", "), "]"),
               absl::StrCat("distinct seeds (", seeds.Get(*i),
                            " appears twice; a repeated seed would be counted "
                            "twice in the mean and "
                            "standard error)"));
  }
  return absl::OkStatus();
}

}  // namespace mimetic::experiments
