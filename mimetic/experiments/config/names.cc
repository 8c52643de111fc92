#include "mimetic/experiments/config/names.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

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

std::string Quoted(const std::string& value) {
  std::string shown = value.size() > 60 ? absl::StrCat(value.substr(0, 60), "...") : value;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return absl::StrCat("\"", shown, "\"");
}

absl::Status CheckSafeName(const std::string& field, const std::string& name) {
  if (SafeName(name)) return absl::OkStatus();
  return Bad(field, Quoted(name),
             "a name that can be a directory: 1 to 100 letters, digits, '.', "
             "'_', '-', '+', not starting "
             "with '.'");
}

absl::Status CheckPath(const std::string& field, const std::string& path) {
  bool ok = !path.empty() && path.size() <= 4095 && path.find('\0') == std::string::npos;
  for (absl::string_view part : absl::StrSplit(path, '/')) ok = ok && part.size() <= 255;
  if (ok) return absl::OkStatus();
  return Bad(field, absl::StrCat(Quoted(path), " (", path.size(), " bytes)"),
             "a path: not empty, no NUL byte, at most 255 bytes between slashes and 4095 in all");
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
