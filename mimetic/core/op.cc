#include "mimetic/core/op.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/trace.h"

namespace mimetic::core {
namespace {

thread_local Backend t_cpu_backend = Backend::kCpu;
std::atomic<bool> g_poison{std::getenv("MIMETIC_POISON_OUTPUTS") != nullptr &&
                           std::string(std::getenv("MIMETIC_POISON_OUTPUTS")) == "1"};
void* (*g_cuda_stream_provider)() = nullptr;

std::vector<Tensor> Errors(size_t n, const absl::Status& status) {
  return std::vector<Tensor>(n, Tensor::Error(status));
}

}  // namespace

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kReference:
      return "reference";
    case Backend::kCpu:
      return "cpu";
    case Backend::kCuda:
      return "cuda";
  }
  return "?";
}

Backend CpuBackend() { return t_cpu_backend; }
void SetPoisonOutputs(bool on) { g_poison = on; }
bool PoisonOutputs() { return g_poison; }
ScopedCpuBackend::ScopedCpuBackend(Backend backend) : saved_(t_cpu_backend) { t_cpu_backend = backend; }
ScopedCpuBackend::~ScopedCpuBackend() { t_cpu_backend = saved_; }

void SetCudaStreamProvider(void* (*provider)()) { g_cuda_stream_provider = provider; }

absl::flat_hash_map<std::string, CudaKernelFn>& CudaKernels() {
  static auto* kernels = new absl::flat_hash_map<std::string, CudaKernelFn>();
  return *kernels;
}

void RegisterCudaKernel(const char* op_name, CudaKernelFn fn) { CudaKernels()[op_name] = fn; }

CudaKernelFn FindCudaKernel(const char* op_name) {
  auto it = CudaKernels().find(op_name);
  return it == CudaKernels().end() ? nullptr : it->second;
}

absl::Status Op::Compute(const ExecContext& ctx, absl::Span<const Tensor> in,
                         absl::Span<const Tensor> out) const {
  switch (ctx.backend) {
    case Backend::kReference:
      return ComputeReference(in, out);
    case Backend::kCpu:
      return ComputeCpu(in, out);
    case Backend::kCuda: {
      CudaKernelFn fn = FindCudaKernel(name());
      if (fn == nullptr) {
        return absl::UnimplementedError(absl::StrCat("no CUDA kernel registered for op '", name(), "'"));
      }
      return fn(*this, ctx, in, out);
    }
  }
  return absl::InternalError("unknown backend");
}

std::vector<Tensor> Op::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                            absl::Span<const Tensor>) const {
  std::vector<Tensor> grads(in.size());
  for (Tensor& g : grads) {
    g = Tensor::Error(absl::UnimplementedError(absl::StrCat("op '", name(), "' is not differentiable")));
  }
  return grads;
}

std::string DescribeCall(const Op& op, absl::Span<const TensorMeta> in) {
  std::vector<std::string> parts;
  for (const TensorMeta& m : in) parts.push_back(m.DebugString());
  std::string attrs = op.AttrString();
  return absl::StrCat(op.name(), "(", absl::StrJoin(parts, ", "), attrs.empty() ? "" : "; ", attrs, ")");
}

std::vector<Tensor> Call(const OpPtr& op, std::vector<Tensor> inputs) {
  std::vector<TensorMeta> metas;
  metas.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].ok()) {
      // Pass the first error along unchanged: it already names the op that failed.
      return Errors(op->num_outputs(), inputs[i].status());
    }
    metas.push_back(inputs[i].meta());
  }
  for (size_t i = 1; i < metas.size(); ++i) {
    if (metas[i].device != metas[0].device) {
      return Errors(op->num_outputs(),
                    absl::InvalidArgumentError(absl::StrCat(
                        DescribeCall(*op, metas), ": inputs are on different devices (input 0 on ",
                        DeviceName(metas[0].device), ", input ", i, " on ", DeviceName(metas[i].device),
                        "); expected one device")));
    }
  }
  absl::StatusOr<std::vector<TensorMeta>> out_metas = op->InferMeta(metas);
  if (!out_metas.ok()) {
    return Errors(op->num_outputs(),
                  absl::Status(out_metas.status().code(),
                               absl::StrCat(DescribeCall(*op, metas), ": ", out_metas.status().message())));
  }
  const size_t n_out = out_metas->size();
  MIMETIC_CHECK(n_out == op->num_outputs()) << "op " << op->name() << " inferred " << n_out
                                            << " outputs; its num_outputs() is " << op->num_outputs();
  std::vector<Tensor> outputs;
  outputs.reserve(n_out);
  if (op->IsView()) {
    MIMETIC_CHECK(n_out == 1 && !inputs.empty() && (*out_metas)[0].bytes() == inputs[0].bytes())
        << "view op " << op->name() << " must have one output of its input's size";
    outputs.push_back(Tensor::Wrap(inputs[0].storage(), (*out_metas)[0]));
  } else {
    for (const TensorMeta& m : *out_metas) {
      absl::StatusOr<Tensor> t = Tensor::Uninitialized(m);
      if (!t.ok()) {
        return Errors(n_out, absl::Status(t.status().code(), absl::StrCat(DescribeCall(*op, metas), ": ",
                                                                           t.status().message())));
      }
      if (g_poison && m.device == Device::kCpu && m.bytes() > 0) std::memset(t->storage()->data(), 0xFF, m.bytes());
      outputs.push_back(*std::move(t));
    }
    ExecContext ctx;
    const Device device = metas.empty() ? (*out_metas)[0].device : metas[0].device;
    if (device == Device::kCuda) {
      ctx.backend = Backend::kCuda;
      ctx.cuda_stream = g_cuda_stream_provider ? g_cuda_stream_provider() : nullptr;
    } else {
      ctx.backend = t_cpu_backend;
    }
    absl::Status status = op->Compute(ctx, inputs, outputs);
    if (!status.ok()) {
      return Errors(n_out, absl::Status(status.code(), absl::StrCat(DescribeCall(*op, metas), " on ",
                                                                     BackendName(ctx.backend), ": ",
                                                                     status.message())));
    }
  }
  for (Tracer* tracer : ActiveTracers()) tracer->Record(op, inputs, outputs);
  return outputs;
}

}  // namespace mimetic::core
