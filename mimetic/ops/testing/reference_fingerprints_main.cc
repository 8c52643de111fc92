// Prints one line per registered op case and dtype: a hash of the bits of the reference backend's
// outputs and of its VJP (ReferenceVjp), with the inputs the consistency test draws. A refactor of a
// reference that must keep its results bit-identical (the design asks it in f64) diffs this
// output before and after:
//   tools/bazel run //mimetic/ops:ssd_reference_fingerprints > /tmp/before.txt   (edit, rerun, diff)
// The bits depend on the compiler and -march, so the lines are compared on one machine, not stored.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "mimetic/core/key.h"
#include "mimetic/core/op.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops::testing {
namespace {

// FNV-1a over a tensor's metadata and raw bytes; an absent or failed tensor hashes its state.
void Mix(uint64_t& h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
}

void MixTensor(uint64_t& h, const Tensor& t) {
  if (!t.ok() || t.absent()) {
    const char tag = t.ok() ? 'a' : 'e';
    Mix(h, &tag, 1);
    return;
  }
  const std::string meta = t.meta().DebugString();
  Mix(h, meta.data(), meta.size());
  Mix(h, t.storage()->data(), t.bytes());
}

std::string Fingerprint(const OpCase& c, core::DType dtype) {
  const core::Key key = core::FoldIn(core::Key::FromSeed(20241015), c.name);
  absl::StatusOr<std::vector<Tensor>> inputs = MakeInputs(c, key, dtype);
  if (!inputs.ok()) return "inputs failed: " + std::string(inputs.status().message());
  uint64_t out_hash = 1469598103934665603ull, grad_hash = out_hash;
  absl::StatusOr<CaseVjp> vjp = ReferenceVjp(c, *inputs, core::FoldIn(key, "seeds"));
  if (!vjp.ok()) {
    // Cases without a gradient still have outputs.
    for (const Tensor& t : RunOn(c.fn, *inputs, static_cast<int>(core::Backend::kReference))) {
      MixTensor(out_hash, t);
    }
    return absl::StrFormat("%016x no-vjp", out_hash);
  }
  for (const Tensor& t : vjp->outputs) MixTensor(out_hash, t);
  for (const Tensor& t : vjp->grads) MixTensor(grad_hash, t);
  return absl::StrFormat("%016x %016x", out_hash, grad_hash);
}

}  // namespace
}  // namespace mimetic::ops::testing

int main() {
  using namespace mimetic::ops::testing;  // NOLINT: a main over the registry
  for (const OpCase& c : RegisteredOpCases()) {
    for (mimetic::core::DType dtype : {mimetic::core::DType::kF64, mimetic::core::DType::kF32}) {
      std::printf("%s %s %s\n", c.name.c_str(), mimetic::core::DTypeName(dtype),
                  Fingerprint(c, dtype).c_str());
    }
  }
  return 0;
}
