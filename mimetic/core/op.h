// Op: a differentiable primitive, and Call, the one dispatcher every primitive goes through.
//
// An op is an immutable object holding its static attributes (transpose flags, axis, eps, ...).
// Call validates inputs, infers output metadata, allocates outputs, runs the kernel of the
// selected backend, and reports the call to every active tracer (ValueAndGrad's tape, Jit's graph).
//
//   class ExpOp : public Op {
//     const char* name() const override { return "exp"; }
//     absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override;
//     absl::Status ComputeReference(absl::Span<const Tensor> in,
//                                   absl::Span<const Tensor> out) const override;
//     std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
//                             absl::Span<const Tensor> out_grads) const override {
//       return {ops::Mul(out_grads[0], out[0])};   // written in primitives, so itself traceable
//     }
//   };
//   Tensor Exp(const Tensor& x) { return Call(std::make_shared<ExpOp>(), {x})[0]; }
#ifndef MIMETIC_CORE_OP_H_
#define MIMETIC_CORE_OP_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

// Which implementation runs an op. kReference is the plain loop every other backend is tested
// against (and the only one supporting f64, used for gradient checks). kCpu is the fast CPU path
// (OpenBLAS, vectorised, OpenMP); ops without one fall back to kReference. kCuda runs on a GPU.
enum class Backend : uint8_t { kReference, kCpu, kCuda };
const char* BackendName(Backend backend);

struct ExecContext {
  Backend backend = Backend::kCpu;
  void* cuda_stream = nullptr;  // cudaStream_t when backend == kCuda
};

class Op {
 public:
  virtual ~Op() = default;
  // Short lowercase name used in errors and graph dumps, e.g. "matmul".
  virtual const char* name() const = 0;
  // Static attributes for errors and signatures, e.g. "transpose_a=1". Empty by default.
  virtual std::string AttrString() const { return ""; }
  // How many tensors Call returns: InferMeta gives exactly this many metas, and on failure every
  // output is the error tensor, so callers index outputs[0..num_outputs()) without patching.
  // Ops with several outputs (fused backward primitives, split) override it.
  virtual size_t num_outputs() const { return 1; }
  // Output metadata for these inputs, or InvalidArgument naming what does not fit and what was
  // expected. The dispatcher prefixes the op name and input metadata.
  virtual absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const = 0;
  // Fills every element of `out` (allocated by the caller with InferMeta's metadata; contents
  // undefined; never aliasing `in`). Must be deterministic: Jit replay equals eager bit for bit.
  // Dispatches on ctx.backend: kReference -> ComputeReference, kCpu -> ComputeCpu, kCuda -> the
  // kernel the CUDA backend registered under name() (see RegisterCudaKernel).
  virtual absl::Status Compute(const ExecContext& ctx, absl::Span<const Tensor> in,
                               absl::Span<const Tensor> out) const;
  // The plain implementation every other backend is tested against. Supports f64 where the op
  // has float inputs (gradient checks run in f64).
  virtual absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const = 0;
  // The fast CPU implementation; defaults to the reference.
  virtual absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
    return ComputeReference(in, out);
  }
  // Cotangents of the inputs given those of the outputs (each out_grads[i] has out[i]'s metadata;
  // zeros where an output did not influence the loss). Returns one tensor per input; an empty
  // Tensor() for inputs that are not differentiable (indices). Written in primitives.
  virtual std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                                  absl::Span<const Tensor> out_grads) const;
  // False for an output whose cotangent Vjp never reads (an output kept only for the backward, e.g.
  // CausalConv1dSilu's conv): autodiff then passes an empty Tensor() there instead of filling zeros.
  virtual bool VjpReadsOutputGrad(size_t /*output*/) const { return true; }
  // True when output 0 shares input 0's storage (reshape): no allocation, no Compute.
  virtual bool IsView() const { return false; }
};

using OpPtr = std::shared_ptr<const Op>;

// Runs `op` on `inputs` and returns op->num_outputs() tensors. Never crashes on bad input: if an
// input is an error tensor, or inference fails, or the kernel fails, every output is an error
// tensor whose status names the op and the input shapes. Inputs must all live on one device; the backend
// follows from it (CPU: the current CpuBackend(); CUDA: kCuda).
std::vector<Tensor> Call(const OpPtr& op, std::vector<Tensor> inputs);

// The backend used for CPU tensors on this thread (default kCpu).
Backend CpuBackend();
// Selects the CPU backend for the lifetime of the scope (tests compare kReference with kCpu).
class ScopedCpuBackend {
 public:
  explicit ScopedCpuBackend(Backend backend);
  ~ScopedCpuBackend();

 private:
  Backend saved_;
};

// A CUDA kernel for an op: downcasts `op` to the op's class (declared in its host-only header) to
// read the attributes. Registered at static initialisation by the CUDA backend library.
using CudaKernelFn = absl::Status (*)(const Op& op, const ExecContext& ctx, absl::Span<const Tensor> in,
                                      absl::Span<const Tensor> out);
void RegisterCudaKernel(const char* op_name, CudaKernelFn fn);
// nullptr when no kernel was registered for `op_name`.
CudaKernelFn FindCudaKernel(const char* op_name);

// Debug aid: when on, the dispatcher fills every freshly allocated CPU output with 0xFF bytes
// (NaN for floats) before the kernel runs, so a kernel that leaves elements unwritten (and would
// read stale data under Jit buffer reuse) fails tests. Also on when MIMETIC_POISON_OUTPUTS=1.
void SetPoisonOutputs(bool on);
bool PoisonOutputs();

// The CUDA backend registers its stream getter here when linked in.
void SetCudaStreamProvider(void* (*provider)());

// "op(f32(2, 3)@cpu, i32(4)@cpu)"; for error messages.
std::string DescribeCall(const Op& op, absl::Span<const TensorMeta> in);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_OP_H_
