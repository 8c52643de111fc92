// The CUDA backend of the elementwise ops: reads each op's attributes, collapses broadcasts with
// the same ops::internal::MakeLoopPlan as the fast CPU path, and calls the launchers of
// elementwise.cu on ctx.cuda_stream. Registered under every op name at static initialisation.
// ZerosLike / OnesLike are core fills ("fill"), which the CUDA runtime registers itself.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/elementwise/elementwise_kernels.h"

namespace mimetic::ops::cuda {
namespace {

namespace k = ::mimetic::ops::cuda_kernels;
using core::DType;
using core::Tensor;

static_assert(static_cast<int>(DType::kF32) == k::kDTypeF32 &&
              static_cast<int>(DType::kF64) == k::kDTypeF64 && static_cast<int>(DType::kI32) == k::kDTypeI32);
static_assert(static_cast<int>(BinaryKind::kAdd) == k::kBinaryAdd &&
              static_cast<int>(BinaryKind::kSub) == k::kBinarySub &&
              static_cast<int>(BinaryKind::kMul) == k::kBinaryMul &&
              static_cast<int>(BinaryKind::kDiv) == k::kBinaryDiv &&
              static_cast<int>(BinaryKind::kMaximum) == k::kBinaryMaximum &&
              static_cast<int>(BinaryKind::kGreaterEqual) == k::kBinaryGreaterEqual);
static_assert(static_cast<int>(UnaryKind::kNeg) == k::kUnaryNeg &&
              static_cast<int>(UnaryKind::kExp) == k::kUnaryExp &&
              static_cast<int>(UnaryKind::kLog) == k::kUnaryLog &&
              static_cast<int>(UnaryKind::kSigmoid) == k::kUnarySigmoid &&
              static_cast<int>(UnaryKind::kSoftplus) == k::kUnarySoftplus &&
              static_cast<int>(UnaryKind::kSilu) == k::kUnarySilu &&
              static_cast<int>(UnaryKind::kSiluGrad) == k::kUnarySiluGrad &&
              static_cast<int>(UnaryKind::kSquare) == k::kUnarySquare &&
              static_cast<int>(UnaryKind::kSqrt) == k::kUnarySqrt &&
              static_cast<int>(UnaryKind::kRsqrt) == k::kUnaryRsqrt &&
              static_cast<int>(UnaryKind::kTanh) == k::kUnaryTanh &&
              static_cast<int>(UnaryKind::kAbs) == k::kUnaryAbs &&
              static_cast<int>(UnaryKind::kSign) == k::kUnarySign &&
              static_cast<int>(UnaryKind::kAddScalar) == k::kUnaryAddScalar &&
              static_cast<int>(UnaryKind::kMulScalar) == k::kUnaryMulScalar &&
              static_cast<int>(UnaryKind::kPowScalar) == k::kUnaryPowScalar);

// The operands' broadcast strides over `out_shape`, collapsed as on the CPU; the output is the
// last operand of the plan (contiguous) and is dropped from the kernel plan.
absl::StatusOr<k::BroadcastPlan> MakePlan(const core::Shape& out_shape, absl::Span<const Tensor> operands) {
  std::vector<std::vector<int64_t>> strides;
  for (const Tensor& t : operands) strides.push_back(internal::BroadcastStrides(t.shape(), out_shape));
  strides.push_back(internal::BroadcastStrides(out_shape, out_shape));
  const internal::LoopPlan loop = internal::MakeLoopPlan(out_shape, strides);
  if (loop.dims.size() > static_cast<size_t>(k::kMaxBroadcastDims) ||
      operands.size() > static_cast<size_t>(k::kMaxBroadcastOperands)) {
    return absl::UnimplementedError(absl::StrCat("broadcast of ", loop.dims.size(), " collapsed dims over ",
                                                 operands.size(), " operands; the CUDA kernels support ",
                                                 k::kMaxBroadcastDims, " dims"));
  }
  k::BroadcastPlan plan;
  plan.ndim = static_cast<int>(loop.dims.size());
  for (int d = 0; d < plan.ndim; ++d) {
    plan.dims[d] = loop.dims[d];
    for (size_t o = 0; o < operands.size(); ++o) plan.strides[o][d] = loop.strides[o][d];
  }
  return plan;
}

// BinaryOp (every BinaryKind): in = {a, b} broadcast to out[0].
absl::Status LaunchBinary(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                          absl::Span<const Tensor> out) {
  const auto& binary = static_cast<const BinaryOp&>(op);
  const int64_t n = out[0].numel();
  if (n == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(k::BroadcastPlan plan, MakePlan(out[0].shape(), in.subspan(0, 2)));
  return LaunchStatus(
      op, k::LaunchBinary(static_cast<int>(binary.kind()), static_cast<int>(in[0].dtype()), plan,
                          DevicePtr(in[0]), DevicePtr(in[1]), DevicePtr(out[0]), n, ctx.cuda_stream));
}

absl::Status LaunchUnary(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                         absl::Span<const Tensor> out) {
  const auto& unary = static_cast<const UnaryOp&>(op);
  return LaunchStatus(
      op, k::LaunchUnary(static_cast<int>(unary.kind()), static_cast<int>(in[0].dtype()), unary.scalar(),
                         DevicePtr(in[0]), DevicePtr(out[0]), in[0].numel(), ctx.cuda_stream));
}

absl::Status LaunchCast(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                        absl::Span<const Tensor> out) {
  const auto& cast = static_cast<const CastOp&>(op);
  return LaunchStatus(op, k::LaunchCast(static_cast<int>(in[0].dtype()), static_cast<int>(cast.dtype()),
                                        DevicePtr(in[0]), DevicePtr(out[0]), in[0].numel(), ctx.cuda_stream));
}

absl::Status LaunchWhere(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                         absl::Span<const Tensor> out) {
  const int64_t n = out[0].numel();
  if (n == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(k::BroadcastPlan plan, MakePlan(out[0].shape(), in.subspan(0, 3)));
  return LaunchStatus(op, k::LaunchWhere(static_cast<int>(in[0].dtype()), static_cast<int>(in[1].dtype()),
                                         plan, DevicePtr(in[0]), DevicePtr(in[1]), DevicePtr(in[2]),
                                         DevicePtr(out[0]), n, ctx.cuda_stream));
}

const bool registered = [] {
  for (const char* name : {"add", "sub", "mul", "div", "maximum", "greater_equal"}) {
    core::RegisterCudaKernel(name, &LaunchBinary);
  }
  for (const char* name : {"neg", "exp", "log", "sigmoid", "softplus", "silu", "silu_grad", "square", "sqrt",
                           "rsqrt", "tanh", "abs", "sign", "add_scalar", "mul_scalar", "pow_scalar"}) {
    core::RegisterCudaKernel(name, &LaunchUnary);
  }
  core::RegisterCudaKernel("cast", &LaunchCast);
  core::RegisterCudaKernel("where", &LaunchWhere);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops::cuda
