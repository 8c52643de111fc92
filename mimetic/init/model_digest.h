// A 64-bit fingerprint of a model (its resolved spec and every leaf's path, dtype, shape and bytes),
// for checking that two ways of building a model give bit-identical results, e.g. the same config
// and seed in two binaries that link different init transforms (docs/init_transforms.md).
//
//   ASSIGN_OR_RETURN(Model m, MakeModel(spec, transform, Key::FromSeed(1)));
//   std::cout << DigestHex(ModelDigest(m));   // "5f0c...": 16 hex digits
#ifndef MIMETIC_INIT_MODEL_DIGEST_H_
#define MIMETIC_INIT_MODEL_DIGEST_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "mimetic/init/transform.h"

namespace mimetic::init {

// FNV-1a over the spec's serialization and the tree; an error when a leaf cannot be read (an error
// tensor). Equal digests for equal models; a one-bit change in any leaf changes it.
absl::StatusOr<uint64_t> ModelDigest(const Model& model);
std::string DigestHex(uint64_t digest);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_MODEL_DIGEST_H_
