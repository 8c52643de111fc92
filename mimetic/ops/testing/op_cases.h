// The backend-consistency harness (after ggml's test-backend-ops): every op family registers a
// table of cases; one test binary runs each case on every available backend against the reference
// implementation and checks each VJP against central finite differences in float64.
//
// In <family>_cases.cc, linked into //mimetic/ops:backend_consistency_test with alwayslink:
//
//   std::vector<OpCase> MatMulCases() {
//     return {
//         {"matmul/nn/odd", {Input::Normal({3, 5}), Input::Normal({5, 7})},
//          [](absl::Span<const Tensor> in) { return std::vector<Tensor>{ops::MatMul(in[0], in[1])}; }},
//     };
//   }
//   MIMETIC_REGISTER_OP_CASES(MatMulCases);
#ifndef MIMETIC_OPS_TESTING_OP_CASES_H_
#define MIMETIC_OPS_TESTING_OP_CASES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/key.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::testing {

using core::Shape;
using core::Tensor;

// How to draw one input of a case.
struct Input {
  enum Kind { kNormal, kUniform, kIndex };
  Kind kind = kNormal;
  Shape shape;
  double lo = 0, hi = 1;       // kUniform range; kIndex: integers in [lo, hi)
  bool differentiable = true;  // kIndex inputs never are
  double scale = 1.0;          // kNormal: N(0, scale^2)

  static Input Normal(Shape s, double scale = 1.0) { return {kNormal, std::move(s), 0, 1, true, scale}; }
  static Input Uniform(Shape s, double lo, double hi) { return {kUniform, std::move(s), lo, hi, true, 1}; }
  // A float input excluded from the gradient check (e.g. a 0/1 mask).
  static Input Constant(Shape s, double lo, double hi) { return {kUniform, std::move(s), lo, hi, false, 1}; }
  static Input Index(Shape s, int32_t lo, int32_t hi) {
    return {kIndex, std::move(s), double(lo), double(hi), false, 1};
  }
};

using CaseFn = std::function<std::vector<Tensor>(absl::Span<const Tensor>)>;

struct OpCase {
  std::string name;  // "family/variant/shape", unique
  std::vector<Input> inputs;
  CaseFn fn;
  // f32 fast backend vs f32 reference: |a - b| <= atol + rtol * |b| elementwise.
  double atol = 1e-5;
  double rtol = 1e-4;
  // f64 VJP vs f64 central differences: same form.
  double grad_atol = 1e-6;
  double grad_rtol = 1e-5;
  double fd_eps = 1e-6;
  bool check_grad = true;
};

void RegisterOpCases(std::vector<OpCase> cases);
const std::vector<OpCase>& RegisteredOpCases();

// A fresh copy of integer ids on the same device, off the tape, so the harness' core::Vjp (which
// watches every input) never asks for their cotangent (core's tape rejects the empty Tensor() a Vjp
// returns for a watched index input). It stays on the ids' device: a CUDA case must hand the op CUDA
// ids (ops refuse mixed devices).
Tensor Unwatched(const Tensor& ids);

// `host` moved to `like`'s device (a case's host-built tensor next to inputs that may be on the GPU).
Tensor OnDeviceOf(const Tensor& like, absl::StatusOr<Tensor> host);

// Draws the case's inputs with `dtype` for float inputs (indices are always i32).
absl::StatusOr<std::vector<Tensor>> MakeInputs(const OpCase& c, core::Key key, core::DType dtype);

// OK, or a message naming the first element where `actual` and `expected` differ beyond tolerance.
absl::Status CompareTensors(const Tensor& actual, const Tensor& expected, double atol, double rtol);

// Runs fn on `inputs` under `backend` (CPU backends) and returns the outputs.
std::vector<Tensor> RunOn(const CaseFn& fn, absl::Span<const Tensor> inputs, int backend /* core::Backend */);

// A case's outputs under the reference backend and the VJP of L = sum_k <seeds_k, outputs_k>
// (seeds drawn from `key` in the outputs' dtype, zero for integer outputs) with respect to the
// inputs marked differentiable; grads[i] is absent for the others.
struct CaseVjp {
  std::vector<Tensor> outputs;
  std::vector<std::vector<double>> seeds;
  std::vector<Tensor> grads;
};
absl::StatusOr<CaseVjp> ReferenceVjp(const OpCase& c, absl::Span<const Tensor> inputs, core::Key key);

// f64 check of the VJP of fn at `inputs` (f64) against central finite differences of
// L = sum_k <seed_k, fn(inputs)_k> with random seeds. Checks the inputs marked differentiable.
absl::Status CheckGradients(const OpCase& c, absl::Span<const Tensor> inputs, core::Key key);

}  // namespace mimetic::ops::testing

#define MIMETIC_OP_CASES_CONCAT_INNER(a, b) a##b
#define MIMETIC_OP_CASES_CONCAT(a, b) MIMETIC_OP_CASES_CONCAT_INNER(a, b)
#define MIMETIC_REGISTER_OP_CASES(fn)                                           \
  static const bool MIMETIC_OP_CASES_CONCAT(mimetic_op_cases_, __LINE__) = [] { \
    ::mimetic::ops::testing::RegisterOpCases(fn());                             \
    return true;                                                                \
  }()

#endif  // MIMETIC_OPS_TESTING_OP_CASES_H_
