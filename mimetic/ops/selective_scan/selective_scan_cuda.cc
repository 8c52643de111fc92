// CUDA entry points of the selective scan: read the op's attributes and the
// sizes, take the device pointers and call the launchers of selective_scan.cu
// (selective_scan_kernels.h) on ctx.cuda_stream. Registered for "selective_scan" and
// "selective_scan_backward" at static initialisation.
//
// The backward's scratch (chunk-boundary states, the current chunk's states, per-warp dB/dC partials
// and per-batch dA/dD/ddelta_bias partials; SelectiveScanBackwardScratchBytes) comes from the CUDA
// allocator per call and is released on return while the kernels may still be queued: safe because
// all device work runs on core/cuda_runtime's one stream (a later user of the block is enqueued
// after these kernels).

#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/selective_scan/selective_scan.h"
#include "mimetic/ops/selective_scan/selective_scan_kernels.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Tensor;
using cuda::In;
using cuda::LaunchStatus;
using cuda::Out;

// Sizes and flags from the inputs (already validated by InferMeta) and the attributes.
absl::StatusOr<cuda::SelectiveScanShape> GetShape(const core::Op& op, const SelectiveScanAttrs& a,
                                                  absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  for (const Tensor& t : in) {
    if (t.device() != core::Device::kCuda) {
      return absl::InvalidArgumentError(
          absl::StrCat(op.name(), " (CUDA): input ", t.DebugString(), " is not on the CUDA device"));
    }
  }
  for (const Tensor& t : out) {
    if (t.device() != core::Device::kCuda) {
      return absl::InvalidArgumentError(
          absl::StrCat(op.name(), " (CUDA): output ", t.DebugString(), " is not on the CUDA device"));
    }
  }
  cuda::SelectiveScanShape s;
  s.B = in[0].dim(0);
  s.L = in[0].dim(1);
  s.E = in[0].dim(2);
  s.N = in[2].dim(1);
  s.has_z = a.has_z;
  s.has_delta_bias = a.has_delta_bias;
  s.delta_softplus = a.delta_softplus;
  s.chunk_size = a.chunk_size;
  if (s.N > cuda::kSelectiveScanMaxN) {
    return absl::UnimplementedError(
        absl::StrCat(op.name(), " (CUDA): state size N = ", s.N,
                     "; the CUDA kernels support N <= ", cuda::kSelectiveScanMaxN));
  }
  return s;
}

template <typename T>
cuda::SelectiveScanInputs<T> Inputs(const SelectiveScanAttrs& a, absl::Span<const Tensor> in) {
  cuda::SelectiveScanInputs<T> p;
  p.u = In<T>(in[0]);
  p.delta = In<T>(in[1]);
  p.A = In<T>(in[2]);
  p.Bm = In<T>(in[3]);
  p.Cm = In<T>(in[4]);
  p.D = In<T>(in[5]);
  p.z = a.has_z ? In<T>(in[a.z_index()]) : nullptr;
  p.delta_bias = a.has_delta_bias ? In<T>(in[a.delta_bias_index()]) : nullptr;
  return p;
}

template <typename T>
absl::Status Forward(const core::Op& op, const SelectiveScanAttrs& a, const cuda::SelectiveScanShape& s,
                     void* stream, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  return LaunchStatus(
      op, cuda::LaunchSelectiveScanForward(s, Inputs<T>(a, in), Out<T>(out[0]), Out<T>(out[1]), stream));
}

template <typename T>
absl::Status Backward(const core::Op& op, const SelectiveScanAttrs& a, const cuda::SelectiveScanShape& s,
                      void* stream, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const int nf = a.num_forward_inputs();
  cuda::SelectiveScanGradients<T> g;
  g.du = Out<T>(out[0]);
  g.ddelta = Out<T>(out[1]);
  g.dA = Out<T>(out[2]);
  g.dB = Out<T>(out[3]);
  g.dC = Out<T>(out[4]);
  g.dD = Out<T>(out[5]);
  g.dz = a.has_z ? Out<T>(out[a.z_index()]) : nullptr;
  g.ddelta_bias = a.has_delta_bias ? Out<T>(out[a.delta_bias_index()]) : nullptr;
  const size_t bytes = cuda::SelectiveScanBackwardScratchBytes(s, sizeof(T));
  std::shared_ptr<core::Storage> scratch;
  if (bytes > 0) {
    ASSIGN_OR_RETURN(scratch, core::Storage::Allocate(bytes, core::Device::kCuda));
  }
  return LaunchStatus(
      op, cuda::LaunchSelectiveScanBackward(s, Inputs<T>(a, in), In<T>(in[nf]), In<T>(in[nf + 1]), g,
                                            scratch == nullptr ? nullptr : scratch->data(), bytes, stream));
}

// Registered as "selective_scan"; `op` is a SelectiveScanOp.
absl::Status SelectiveScanForwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                      absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  const SelectiveScanAttrs& a = static_cast<const SelectiveScanOp&>(op).attrs();
  ASSIGN_OR_RETURN(const cuda::SelectiveScanShape s, GetShape(op, a, in, out));
  if (in[0].dtype() == DType::kF64) return Forward<double>(op, a, s, ctx.cuda_stream, in, out);
  return Forward<float>(op, a, s, ctx.cuda_stream, in, out);
}

// Registered as "selective_scan_backward"; `op` is a SelectiveScanBackwardOp.
absl::Status SelectiveScanBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                       absl::Span<const core::Tensor> in,
                                       absl::Span<const core::Tensor> out) {
  const SelectiveScanAttrs& a = static_cast<const SelectiveScanBackwardOp&>(op).attrs();
  ASSIGN_OR_RETURN(const cuda::SelectiveScanShape s, GetShape(op, a, in, out));
  if (in[0].dtype() == DType::kF64) return Backward<double>(op, a, s, ctx.cuda_stream, in, out);
  return Backward<float>(op, a, s, ctx.cuda_stream, in, out);
}

[[maybe_unused]] const bool registered = [] {
  core::RegisterCudaKernel("selective_scan", &SelectiveScanForwardCuda);
  core::RegisterCudaKernel("selective_scan_backward", &SelectiveScanBackwardCuda);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops
