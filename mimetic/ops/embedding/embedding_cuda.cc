// The CUDA kernels of Embedding and EmbeddingBackward, registered with the
// dispatcher at static initialisation. The kernels themselves live in embedding.cu.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/embedding/embedding.h"
#include "mimetic/ops/embedding/embedding_kernels.h"

namespace mimetic::ops {
namespace {

using core::DType;

using cuda::DevicePtr;
// The CPU op's message for the first bad id, so both backends fail alike.
absl::Status IdStatus(const char* error, const cuda::IdCheck& check, int64_t num_rows) {
  if (error != nullptr) return absl::InternalError(absl::StrCat("CUDA error: ", error));
  if (check.checked && check.bad_position >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("id ", check.bad_id, " at flat position ", check.bad_position,
                     " is out of range; expected ids in [0, V) with V=", num_rows));
  }
  return absl::OkStatus();
}

// Gather: in = {table (V, D), ids (...) i32}, out = {(..., D)}. Out-of-range ids are counted on the
// device and reported as InvalidArgument (naming the first bad id and V) after the launch; not
// while the stream is being captured into a CUDA graph (no host synchronisation is possible then).
absl::Status EmbeddingCuda(const core::Op&, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                           absl::Span<const core::Tensor> out) {
  const Tensor& table = in[0];  // (V, D)
  const Tensor& ids = in[1];    // (...) i32
  const int64_t v = table.dim(0), d = table.dim(1);
  cuda::IdCheck check;
  const char* error = cuda::LaunchEmbeddingForward(
      DevicePtr(table), static_cast<const int32_t*>(DevicePtr(ids)), cuda::DevicePtr(out[0]), ids.numel(), v,
      d, table.dtype() == DType::kF64 ? 8 : 4, ctx.cuda_stream, &check);
  return IdStatus(error, check, v);
}

// Deterministic scatter-add: in = {grad (..., D), ids (...) i32}, out = {(V, D)}. Sort-free: each
// thread block owns a range of table rows and a column tile, scans the ids in token order and sums
// its rows' gradients in token order (embedding.cu), so there are no float atomics and the result
// has the reference's bits, every run. Out-of-range ids are reported like EmbeddingCuda's.
absl::Status EmbeddingBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                   absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  const int64_t v = static_cast<const EmbeddingBackwardOp&>(op).num_rows();
  const Tensor& grad = in[0];  // (..., D)
  const Tensor& ids = in[1];   // (...) i32
  cuda::IdCheck check;
  const char* error = cuda::LaunchEmbeddingBackward(
      grad.dtype() == DType::kF64, DevicePtr(grad), static_cast<const int32_t*>(DevicePtr(ids)),
      cuda::DevicePtr(out[0]), ids.numel(), v, grad.dim(-1), ctx.cuda_stream, &check);
  return IdStatus(error, check, v);
}

const bool registered = [] {
  core::RegisterCudaKernel("embedding", &EmbeddingCuda);
  core::RegisterCudaKernel("embedding_backward", &EmbeddingBackwardCuda);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops
