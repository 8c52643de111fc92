// The CUDA backend of the shape ops: transpose as a strided gather of contiguous rows (when the
// innermost output dim is x's innermost dim, e.g. (B, L, H, P) -> (B, H, L, P)) or a
// shared-memory tiled transpose (e.g. the last two axes swapped); slice, pad, concat and split
// as row copies over x viewed as (outer, n, inner); stop_gradient as one device copy. Reshape is
// a view and needs no kernel. Registered under every op name at static initialisation.

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/shape/shape.h"
#include "mimetic/ops/shape/shape_kernels.h"

namespace mimetic::ops::cuda {
namespace {

namespace k = ::mimetic::ops::cuda_kernels;
using core::Shape;
using core::Tensor;

absl::Status TooManyDims(const core::Op& op, size_t dims) {
  return absl::UnimplementedError(
      absl::StrCat(op.name(), " collapses to ", dims, " dims; the CUDA kernels support ", k::kMaxCopyDims));
}

// TransposeOp: general permutation; tiled for swaps of the last two axes.
absl::Status LaunchTranspose(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                             absl::Span<const Tensor> out) {
  const auto& transpose = static_cast<const TransposeOp&>(op);
  const Shape& os = out[0].shape();
  if (out[0].numel() == 0) return absl::OkStatus();
  const std::vector<int>& perm = transpose.perm();
  const std::vector<int64_t> in_strides = internal::ContiguousStrides(in[0].shape());
  std::vector<int64_t> sx(os.size());
  for (size_t d = 0; d < os.size(); ++d) sx[d] = in_strides[perm[d]];
  // Operand 0: x's strides in output order; operand 1: the (contiguous) output. As the CPU path.
  const internal::LoopPlan loop = internal::MakeLoopPlan(os, {sx, internal::ContiguousStrides(os)});
  const int nd = static_cast<int>(loop.dims.size());
  if (nd > k::kMaxCopyDims) return TooManyDims(op, loop.dims.size());
  const std::vector<int64_t>& lsx = loop.strides[0];
  const std::vector<int64_t>& lsy = loop.strides[1];
  const int elem_size = static_cast<int>(core::DTypeSize(in[0].dtype()));
  if (lsx.back() == 1 || loop.inner() == 1) {
    // Rows contiguous in both: a gather (a plain copy when the permutation collapses to identity).
    k::GatherPlan plan;
    plan.ndim = nd;
    for (int d = 0; d < nd; ++d) {
      plan.dims[d] = loop.dims[d];
      plan.src_strides[d] = lsx[d];
    }
    return LaunchStatus(op, k::LaunchGather(In<char>(in[0]), in[0].numel(), Out<char>(out[0]), plan,
                                            elem_size, ctx.cuda_stream));
  }
  // Tiles of (x's unit-stride dim q) x (the output's innermost dim).
  int q = -1;
  for (int d = 0; d < nd; ++d) {
    if (lsx[d] == 1) q = d;
  }
  if (q < 0) return absl::InternalError("transpose: no unit-stride input dim");
  k::TransposePlan plan;
  plan.rows = loop.dims[q];
  plan.cols = loop.inner();
  plan.src_col_stride = lsx.back();
  plan.dst_row_stride = lsy[q];
  for (int d = 0; d + 1 < nd; ++d) {
    if (d == q) continue;
    plan.batch_dims[plan.batch_ndim] = loop.dims[d];
    plan.batch_src_strides[plan.batch_ndim] = lsx[d];
    plan.batch_dst_strides[plan.batch_ndim] = lsy[d];
    ++plan.batch_ndim;
  }
  return LaunchStatus(
      op, k::LaunchTransposeTiled(In<char>(in[0]), Out<char>(out[0]), plan, elem_size, ctx.cuda_stream));
}

absl::Status LaunchSlice(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                         absl::Span<const Tensor> out) {
  const auto& slice = static_cast<const SliceOp&>(op);
  ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(slice.axis(), in[0].rank()));
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const int64_t row = inner * static_cast<int64_t>(core::DTypeSize(in[0].dtype()));
  const int64_t m = slice.end() - slice.start();
  if (m == 0 || row == 0) return absl::OkStatus();
  return LaunchStatus(op, k::LaunchRowCopy(In<char>(in[0]) + slice.start() * row, n * row, m * row,
                                           Out<char>(out[0]), m * row, m * row, 0, outer, ctx.cuda_stream));
}

absl::Status LaunchPad(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const auto& pad = static_cast<const PadOp&>(op);
  ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(pad.axis(), in[0].rank()));
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const int64_t row = inner * static_cast<int64_t>(core::DTypeSize(in[0].dtype()));
  const int64_t m = n + pad.before() + pad.after();
  return LaunchStatus(op, k::LaunchRowCopy(In<char>(in[0]), n * row, n * row, Out<char>(out[0]), m * row,
                                           m * row, pad.before() * row, outer, ctx.cuda_stream));
}

absl::Status LaunchConcat(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                          absl::Span<const Tensor> out) {
  const auto& concat = static_cast<const ConcatOp&>(op);
  ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(concat.axis(), out[0].rank()));
  int64_t outer, m, inner;
  internal::SplitAroundAxis(out[0].shape(), axis, &outer, &m, &inner);
  const int64_t row = inner * static_cast<int64_t>(core::DTypeSize(out[0].dtype()));
  int64_t offset = 0;  // along axis
  for (const Tensor& x : in) {
    const int64_t n = x.dim(axis);
    if (n > 0) {
      RETURN_IF_ERROR(
          LaunchStatus(op, k::LaunchRowCopy(In<char>(x), n * row, n * row, Out<char>(out[0]) + offset * row,
                                            m * row, n * row, 0, outer, ctx.cuda_stream)));
    }
    offset += n;
  }
  return absl::OkStatus();
}

absl::Status LaunchSplit(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                         absl::Span<const Tensor> out) {
  const auto& split = static_cast<const SplitOp&>(op);
  ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(split.axis(), in[0].rank()));
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const int64_t row = inner * static_cast<int64_t>(core::DTypeSize(in[0].dtype()));
  const std::vector<int64_t>& sizes = split.sizes();
  int64_t offset = 0;
  for (size_t p = 0; p < out.size() && p < sizes.size(); ++p) {
    const int64_t s = sizes[p];
    if (s > 0) {
      RETURN_IF_ERROR(
          LaunchStatus(op, k::LaunchRowCopy(In<char>(in[0]) + offset * row, n * row, s * row,
                                            Out<char>(out[p]), s * row, s * row, 0, outer, ctx.cuda_stream)));
    }
    offset += s;
  }
  return absl::OkStatus();
}

absl::Status LaunchCopy(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                        absl::Span<const Tensor> out) {
  return LaunchStatus(op, k::LaunchDeviceCopy(Out<char>(out[0]), In<char>(in[0]),
                                              static_cast<int64_t>(in[0].bytes()), ctx.cuda_stream));
}

const bool registered = [] {
  core::RegisterCudaKernel("transpose", &LaunchTranspose);
  core::RegisterCudaKernel("slice", &LaunchSlice);
  core::RegisterCudaKernel("pad", &LaunchPad);
  core::RegisterCudaKernel("concat", &LaunchConcat);
  core::RegisterCudaKernel("split", &LaunchSplit);
  core::RegisterCudaKernel("stop_gradient", &LaunchCopy);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops::cuda
