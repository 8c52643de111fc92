// Safetensors files (https://github.com/huggingface/safetensors): the checkpoint format of a run
// directory, readable from PyTorch, JAX and numpy without mimetic.
//
//   RETURN_IF_ERROR(WriteSafetensors("run/ckpt_1000.safetensors", params, {{"step", "1000"}}));
//   std::map<std::string, std::string> metadata;
//   ASSIGN_OR_RETURN(ParamTree loaded, ReadSafetensors("run/ckpt_1000.safetensors", &metadata));
//
// Layout: an 8-byte little-endian header length n, n bytes of JSON
//   {"__metadata__": {"step": "1000"},
//    "layers/0/mixer/A_log": {"dtype": "F32", "shape": [16, 16], "data_offsets": [0, 1024]}, ...}
// padded with spaces so that n is a multiple of 8, then the tensors' bytes (row-major, little-endian),
// data_offsets counting from the end of the header.
#ifndef MIMETIC_INIT_SAFETENSORS_H_
#define MIMETIC_INIT_SAFETENSORS_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/core/param_tree.h"

namespace mimetic::init {

struct SafetensorsWriteOptions {
  // String-to-string pairs stored under "__metadata__" (omitted when empty).
  std::map<std::string, std::string> metadata;
  // The tensor name stored for a tree path; the path itself when unset. E.g. ToMambaSsmName
  // (checkpoint_names.h) writes a file that mamba_ssm's load_state_dict accepts.
  std::function<std::string(const std::string& path)> tensor_name;
};

// Writes every leaf of `tree` (F32, F64 or I32, named by its path) in tree order. Writes
// `path` + ".tmp" and renames it over `path`, so a failed write leaves an earlier file intact.
// CUDA leaves are copied to the host first; an error leaf gives its Status, naming the path.
absl::Status WriteSafetensors(const std::string& path, const core::ParamTree& tree,
                              const std::map<std::string, std::string>& metadata = {});
absl::Status WriteSafetensorsWithOptions(const std::string& path, const core::ParamTree& tree,
                                         const SafetensorsWriteOptions& options);

// Reads a safetensors file into a CPU tree whose paths are the file's tensor names, ordered by data
// offset. F32, F64 and I32 are read as they are; F16 and BF16 (common in PyTorch checkpoints) are
// converted to f32 exactly. Anything malformed (short file, header length past the end, bad JSON,
// unknown dtype, offsets outside the data, overlapping, leaving a gap or bytes after the last tensor, or
// not matching shape × dtype size) is an InvalidArgument naming the tensor and the expected and found
// values: the regions must tile the data exactly, as the reference reader requires; an unreadable file is
// NotFound or the errno's code. `metadata`, when given, receives "__metadata__".
absl::StatusOr<core::ParamTree> ReadSafetensors(const std::string& path,
                                                std::map<std::string, std::string>* metadata = nullptr);

// Exact conversions of IEEE binary16 and bfloat16 bit patterns to f32 (subnormals, ±inf and NaN
// included).
float HalfToFloat(uint16_t bits);
float BFloat16ToFloat(uint16_t bits);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_SAFETENSORS_H_
