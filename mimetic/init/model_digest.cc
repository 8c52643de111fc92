#include "mimetic/init/model_digest.h"

#include <cstdio>
#include <cstring>

#include "mimetic/core/status.h"

namespace mimetic::init {
namespace {

class Fnv1a {
 public:
  void Add(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) hash_ = (hash_ ^ bytes[i]) * 1099511628211ull;
  }
  void Add(const std::string& s) {
    const uint64_t size = s.size();  // length first, so "ab"+"c" and "a"+"bc" differ
    Add(&size, sizeof(size));
    Add(s.data(), s.size());
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

template <typename T>
absl::Status AddValues(const Tensor& t, Fnv1a* h) {
  ASSIGN_OR_RETURN(std::vector<T> v, t.ToVector<T>());
  h->Add(v.data(), v.size() * sizeof(T));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> ModelDigest(const Model& model) {
  Fnv1a h;
  std::string spec;
  // The same message serializes to the same bytes (no map fields in ModelSpec).
  if (!model.spec.SerializeToString(&spec))
    return absl::InternalError("ModelDigest: cannot serialize the spec");
  h.Add(spec);
  const std::vector<Tensor>& leaves = model.params.Leaves();
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Tensor& t = leaves[i];
    h.Add(model.params.Paths()[i]);
    const core::DType dtype = t.dtype();
    h.Add(&dtype, sizeof(dtype));
    for (int64_t d : t.shape()) h.Add(&d, sizeof(d));
    switch (dtype) {
      case core::DType::kF32:
        RETURN_IF_ERROR(AddValues<float>(t, &h));
        break;
      case core::DType::kF64:
        RETURN_IF_ERROR(AddValues<double>(t, &h));
        break;
      case core::DType::kI32:
        RETURN_IF_ERROR(AddValues<int32_t>(t, &h));
        break;
    }
  }
  return h.value();
}

std::string DigestHex(uint64_t digest) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(digest));
  return buffer;
}

}  // namespace mimetic::init
