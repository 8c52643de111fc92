// MatMul / MatMulSumBatch on the GPU with cuBLAS: the core::CudaKernelFn MatMulCuda, registered for
// both op names at static initialisation, runs MakeGemmPlan's plan with LaunchGemmPlan.
//
// cuBLAS is column-major; a row-major matrix with leading dimension ld is the column-major
// transpose with the same ld. So the row-major C = op(A) op(B) is computed as the column-major
// C^T = op(B)^T op(A)^T: B is cuBLAS's first operand and the m and n of the plan swap places.
//
// Determinism: one cuBLAS handle per (device, stream), each with its own fixed workspace, so cuBLAS
// picks the same algorithm and gives the same bits every run (cuBLAS guarantees run-to-run
// reproducibility per handle/stream; a shared handle or the default workspace pool across streams
// would not). plan.accumulate is a fixed sequence of beta = 1 GEMMs, never atomics.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/cuda_check.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/matmul/matmul.h"

namespace mimetic::ops {
namespace {

using core::DType;

// cuBLAS's recommended workspace on Hopper (4 MiB suffices before it); one per handle, never freed,
// since captured CUDA graphs keep pointing at it.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

#define CUBLAS_RETURN_IF_ERROR(expr)                                                                \
  do {                                                                                              \
    const cublasStatus_t mimetic_cublas_status_ = (expr);                                           \
    if (mimetic_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                          \
      return absl::InternalError(absl::StrCat(__FILE__, ":", __LINE__, ": ", #expr, ": ",           \
                                              cublasGetStatusName(mimetic_cublas_status_), " (",    \
                                              cublasGetStatusString(mimetic_cublas_status_), ")")); \
    }                                                                                               \
  } while (false)

// Lets this thread call cudaMalloc (and cuBLAS set-up) while a stream is being captured into a CUDA
// graph in global mode; restores the previous mode on destruction.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

struct CublasHandle {
  std::mutex mu;  // host threads sharing a stream enqueue their GEMM sequences one at a time
  cublasHandle_t handle = nullptr;  // default math mode: no TF32, so f32 stays within the CPU tolerances
};

// The handle of (current device, stream), created on first use and kept for the process lifetime
// (destroying handles at exit races with CUDA's own teardown; captured graphs may use them).
absl::StatusOr<CublasHandle*> HandleFor(cudaStream_t stream) {
  static std::mutex* mu = new std::mutex;
  static auto* handles = new std::map<std::pair<int, cudaStream_t>, CublasHandle*>;
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(*mu);
  auto it = handles->find({device, stream});
  if (it != handles->end()) return it->second;
  RelaxedCaptureMode relaxed;
  cublasHandle_t handle = nullptr;
  CUBLAS_RETURN_IF_ERROR(cublasCreate(&handle));
  void* workspace = nullptr;
  const cudaError_t alloc = cudaMalloc(&workspace, kWorkspaceBytes);
  if (alloc != cudaSuccess) {
    cublasDestroy(handle);
    CUDA_RETURN_IF_ERROR(alloc);
  }
  // cublasSetStream resets the workspace to the default pool, so the stream comes first.
  CUBLAS_RETURN_IF_ERROR(cublasSetStream(handle, stream));
  CUBLAS_RETURN_IF_ERROR(cublasSetWorkspace(handle, workspace, kWorkspaceBytes));
  CUBLAS_RETURN_IF_ERROR(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  auto* entry = new CublasHandle;
  entry->handle = handle;
  (*handles)[{device, stream}] = entry;
  return entry;
}

// One GEMM or one strided batch of GEMMs in cuBLAS's column-major terms (see the file comment).
cublasStatus_t Gemm(cublasHandle_t h, const GemmPlan& p, const float* a, const float* b, float beta, float* c,
                    int batch) {
  const float alpha = 1.0f;
  const cublasOperation_t op_b = p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(p.n), n = static_cast<int>(p.m), k = static_cast<int>(p.k);
  const int ldb = static_cast<int>(p.ldb), lda = static_cast<int>(p.lda), ldc = static_cast<int>(p.ldc);
  if (batch == 1) return cublasSgemm(h, op_b, op_a, m, n, k, &alpha, b, ldb, a, lda, &beta, c, ldc);
  return cublasSgemmStridedBatched(h, op_b, op_a, m, n, k, &alpha, b, ldb, p.stride_b, a, lda, p.stride_a,
                                   &beta, c, ldc, p.stride_c, batch);
}

cublasStatus_t Gemm(cublasHandle_t h, const GemmPlan& p, const double* a, const double* b, double beta,
                    double* c, int batch) {
  const double alpha = 1.0;
  const cublasOperation_t op_b = p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(p.n), n = static_cast<int>(p.m), k = static_cast<int>(p.k);
  const int ldb = static_cast<int>(p.ldb), lda = static_cast<int>(p.lda), ldc = static_cast<int>(p.ldc);
  if (batch == 1) return cublasDgemm(h, op_b, op_a, m, n, k, &alpha, b, ldb, a, lda, &beta, c, ldc);
  return cublasDgemmStridedBatched(h, op_b, op_a, m, n, k, &alpha, b, ldb, p.stride_b, a, lda, p.stride_a,
                                   &beta, c, ldc, p.stride_c, batch);
}

template <typename T>
absl::Status RunGemms(cublasHandle_t h, const GemmPlan& p, const T* a, const T* b, T* c) {
  if (p.accumulate) {
    // sum_i op(A_i) op(B_i) into one C: beta = 0 for the first GEMM (C's contents are undefined),
    // then beta = 1, in batch order. A fixed summation order, so the same bits every run.
    for (int64_t i = 0; i < p.batch; ++i) {
      CUBLAS_RETURN_IF_ERROR(Gemm(h, p, a + i * p.stride_a, b + i * p.stride_b, i == 0 ? T(0) : T(1), c, 1));
    }
    return absl::OkStatus();
  }
  CUBLAS_RETURN_IF_ERROR(Gemm(h, p, a, b, T(0), c, static_cast<int>(p.batch)));
  return absl::OkStatus();
}

// Runs `plan` with cuBLAS on `stream` (a cudaStream_t): cublasSgemmStridedBatched (or Dgemm)
// for plain batches, sequential beta = 1 GEMMs for plan.accumulate. Row-major operands are passed
// to column-major cuBLAS as the transposed product (C^T = op(B)^T op(A)^T).
// a, b, c: device pointers of dtype `dtype` (f32 or f64).
absl::Status LaunchGemmPlan(const GemmPlan& plan, DType dtype, const void* a, const void* b, void* c,
                            void* stream) {
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return absl::InvalidArgumentError(
        absl::StrCat("matmul on CUDA supports f32 and f64, not ", core::DTypeName(dtype)));
  }
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  // Elements of C: one (M, N) matrix per GEMM, or a single one for a batch sum.
  const int64_t c_numel = (plan.accumulate ? 1 : plan.batch) * plan.m * plan.n;
  if (c_numel == 0) return absl::OkStatus();
  if (plan.k == 0 || plan.batch == 0) {  // an empty sum: every output element is zero (0 bits = +0.0)
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(c, 0, static_cast<size_t>(c_numel) * core::DTypeSize(dtype), s));
    return absl::OkStatus();
  }
  for (int64_t v : {plan.m, plan.n, plan.k, plan.lda, plan.ldb, plan.ldc, plan.batch}) {
    if (v > INT_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("a GEMM dimension of ", v, " exceeds the cuBLAS limit of ", INT_MAX));
    }
  }
  ASSIGN_OR_RETURN(CublasHandle * entry, HandleFor(s));
  std::lock_guard<std::mutex> lock(entry->mu);
  if (dtype == DType::kF64) {
    return RunGemms<double>(entry->handle, plan, static_cast<const double*>(a), static_cast<const double*>(b),
                            static_cast<double*>(c));
  }
  return RunGemms<float>(entry->handle, plan, static_cast<const float*>(a), static_cast<const float*>(b),
                         static_cast<float*>(c));
}

// The core::CudaKernelFn for MatMulOp: downcasts `op` to MatMulOp, builds the GemmPlan with
// MakeGemmPlan(op, a, b, /*flatten=*/true) and calls LaunchGemmPlan on ctx.cuda_stream.
absl::Status MatMulCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                        absl::Span<const core::Tensor> out) {
  const auto& matmul = static_cast<const MatMulOp&>(op);
  if (out[0].numel() == 0) return absl::OkStatus();
  const GemmPlan plan = MakeGemmPlan(matmul, in[0].meta(), in[1].meta(), /*flatten=*/true);
  // Empty operands may have no storage; LaunchGemmPlan never reads them (k == 0 zero-fills C).
  return LaunchGemmPlan(plan, in[0].dtype(), cuda::DevicePtr(in[0]), cuda::DevicePtr(in[1]),
                        cuda::DevicePtr(out[0]), ctx.cuda_stream);
}

const bool registered = [] {
  core::RegisterCudaKernel("matmul", &MatMulCuda);
  core::RegisterCudaKernel("matmul_sum_batch", &MatMulCuda);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops
