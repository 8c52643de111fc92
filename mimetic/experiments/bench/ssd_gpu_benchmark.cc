// GPU speed of mimetic's CUDA SSD op (Mamba 2's state-space-duality scan, mimetic/ops/ssd/ssd.h) alone:
// ops::Ssd forward and Ssd + SsdBackward, f32, G = 1, at the paper's Mamba 2 sizes (batch 64 and 32,
// L 256, P 64, N 128; H = 2 d_model / P with d_model 256 and 1024). Prints one line per preset
//   [ssd] preset=fig1 B=64 L=256 H=8 P=64 N=128 fwd_ms=... fwdbwd_ms=...
// (medians over --reps after 3 warm-ups, each timed between core::Synchronize() calls) and writes the
// inputs and outputs to DIR/ssd_<preset>.safetensors (x, dt, A, B, C, D, dt_bias, dy, y, last_state,
// dx, ddt, dA, dB, dC, dD, ddt_bias; metadata preset, chunk) for the Triton peer
// tools/bench/triton_ssd.py, which checks both against a float64 reference and times
// mamba_ssm's mamba_chunk_scan_combined on the same inputs.
//
//   tools/bazel run //mimetic/experiments:ssd_gpu_benchmark -- --preset=fig1,fig9 --out=/tmp/ssd
//   python3 tools/bench/triton_ssd.py --mamba_path DIR --mimetic_log LOG /tmp/ssd/ssd_fig1.safetensors
//   ... ssd_gpu_benchmark --cpu --preset=tiny   # the same on the CPU backend: a smoke test of both programs
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/cuda_runtime.h"
#include "mimetic/core/key.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/core/random.h"
#include "mimetic/core/status.h"
#include "mimetic/core/tensor.h"
#include "mimetic/init/safetensors.h"
#include "mimetic/ops/ssd/ssd.h"

ABSL_FLAG(std::vector<std::string>, preset, std::vector<std::string>({"fig1", "fig9"}),
          "comma-separated presets: fig1 (B 64, H 8), fig9 (B 32, H 32), tiny (B 2, L 128, H 2, P 4, N 8)");
ABSL_FLAG(std::string, out, "",
          "folder for ssd_<preset>.safetensors (default: $TEST_UNDECLARED_OUTPUTS_DIR, else .)");
ABSL_FLAG(int, reps, 20, "timed repetitions per measurement (median reported)");
ABSL_FLAG(int, chunk, 64, "SSD chunk size");
ABSL_FLAG(bool, cpu, false, "run on the CPU backend instead (a smoke test of this program and the peer)");

namespace {

using mimetic::core::Tensor;
namespace core = mimetic::core;
namespace ops = mimetic::ops;

struct Preset {
  std::string name;
  int64_t batch, length, heads, head_dim, state;  // B, L, H, P, N (G = 1)
};

absl::StatusOr<Preset> PresetByName(const std::string& name) {
  if (name == "fig1") return Preset{name, 64, 256, 8, 64, 128};   // d_model 256 -> E 512
  if (name == "fig9") return Preset{name, 32, 256, 32, 64, 128};  // d_model 1024 -> E 2048
  if (name == "tiny") return Preset{name, 2, 128, 2, 4, 8};       // for --cpu
  return absl::InvalidArgumentError(absl::StrCat("unknown preset '", name, "' (fig1, fig9, tiny)"));
}

// OK when `t` holds a value whose elements are all finite (copies it to the host).
absl::Status CheckFinite(const std::string& name, const Tensor& t) {
  if (!t.ok()) return absl::InternalError(absl::StrCat(name, ": ", t.status().ToString()));
  ASSIGN_OR_RETURN(Tensor host, t.ToDevice(core::Device::kCpu));
  ASSIGN_OR_RETURN(std::vector<float> v, host.ToVector<float>());
  const int64_t bad = std::count_if(v.begin(), v.end(), [](float f) { return !std::isfinite(f); });
  if (bad > 0) return absl::InternalError(absl::StrCat(name, ": ", bad, " non-finite values"));
  return absl::OkStatus();
}

absl::Status Sync(core::Device device) {
  return device == core::Device::kCuda ? core::Synchronize() : absl::OkStatus();
}

// Median wall-clock ms of `f` (returns absl::Status) over `reps` runs after 3 warm-ups; the device is
// synchronised before each clock read.
template <typename F>
absl::StatusOr<double> MedianMs(F f, int reps, core::Device device) {
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(f());
  RETURN_IF_ERROR(Sync(device));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    RETURN_IF_ERROR(Sync(device));
    const auto t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(f());
    RETURN_IF_ERROR(Sync(device));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

absl::Status RunPreset(const Preset& p, int64_t chunk, int reps, core::Device device,
                       const std::string& out_dir) {
  const int64_t B = p.batch, L = p.length, H = p.heads, P = p.head_dim, N = p.state, G = 1;
  const core::Key key = core::Key::FromSeed(5);
  std::vector<std::pair<std::string, Tensor>> in;  // host tensors, the file's order
  auto normal = [&](const std::string& name, int i, core::Shape s) -> absl::Status {
    ASSIGN_OR_RETURN(Tensor t, core::Normal(core::FoldIn(key, i), s));
    in.emplace_back(name, t);
    return absl::OkStatus();
  };
  auto uniform = [&](const std::string& name, int i, core::Shape s, double lo, double hi) -> absl::Status {
    ASSIGN_OR_RETURN(Tensor t, core::Uniform(core::FoldIn(key, i), s, lo, hi));
    in.emplace_back(name, t);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(normal("x", 0, {B, L, H, P}));
  RETURN_IF_ERROR(normal("dt", 1, {B, L, H}));
  RETURN_IF_ERROR(uniform("A", 2, {H}, -8.0, -1.0));
  RETURN_IF_ERROR(normal("B", 3, {B, L, G, N}));
  RETURN_IF_ERROR(normal("C", 4, {B, L, G, N}));
  RETURN_IF_ERROR(normal("D", 5, {H}));
  RETURN_IF_ERROR(uniform("dt_bias", 6, {H}, -4.0, -2.0));
  RETURN_IF_ERROR(normal("dy", 7, {B, L, H, P}));
  std::vector<Tensor> g;  // the same on `device`: x, dt, A, B, C, D, dt_bias, dy
  for (const auto& [name, t] : in) {
    ASSIGN_OR_RETURN(Tensor d, t.ToDevice(device));
    g.push_back(d);
  }

  ops::SsdResult r;
  ops::SsdGrads d;
  auto forward = [&]() -> absl::Status {
    r = ops::Ssd(g[0], g[1], g[2], g[3], g[4], g[5], g[6], chunk);
    if (!r.y.ok()) return r.y.status();
    return r.last_state.status();
  };
  auto forward_backward = [&]() -> absl::Status {
    RETURN_IF_ERROR(forward());
    d = ops::SsdBackward(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], Tensor(), chunk);
    for (const Tensor* t : {&d.dx, &d.ddt, &d.dA, &d.dB, &d.dC, &d.dD, &d.ddt_bias}) {
      if (!t->ok()) return t->status();
    }
    return absl::OkStatus();
  };
  ASSIGN_OR_RETURN(const double fwd_ms, MedianMs(forward, reps, device));
  ASSIGN_OR_RETURN(const double fwdbwd_ms, MedianMs(forward_backward, reps, device));

  const std::vector<std::string> names = {"y", "last_state", "dx", "ddt", "dA", "dB", "dC", "dD", "ddt_bias"};
  const std::vector<Tensor> outs = {r.y, r.last_state, d.dx, d.ddt, d.dA, d.dB, d.dC, d.dD, d.ddt_bias};
  for (size_t i = 0; i < outs.size(); ++i) {
    RETURN_IF_ERROR(CheckFinite(names[i], outs[i]));
    ASSIGN_OR_RETURN(Tensor host, outs[i].ToDevice(core::Device::kCpu));
    in.emplace_back(names[i], host);
  }
  std::cout << absl::StrFormat("[ssd] preset=%s B=%d L=%d H=%d P=%d N=%d fwd_ms=%.4f fwdbwd_ms=%.4f\n",
                               p.name, B, L, H, P, N, fwd_ms, fwdbwd_ms)
            << std::flush;
  ASSIGN_OR_RETURN(core::ParamTree tree, core::ParamTree::FromPairs(in));
  const std::string path = absl::StrCat(out_dir, "/ssd_", p.name, ".safetensors");
  RETURN_IF_ERROR(
      mimetic::init::WriteSafetensors(path, tree, {{"preset", p.name}, {"chunk", absl::StrCat(chunk)}}));
  std::cout << "wrote " << path << "\n";
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const bool cpu = absl::GetFlag(FLAGS_cpu);
  if (!cpu && core::GetCudaMemoryHooks().allocate == nullptr) {
    absl::StatusOr<core::CudaDeviceInfo> dev = core::CudaDevice();
    std::cerr << "ssd_gpu_benchmark: no usable GPU in this binary/machine: "
              << (dev.ok() ? std::string("CUDA hooks not installed") : dev.status().ToString()) << "\n";
    return 1;
  }
  absl::StatusOr<core::CudaDeviceInfo> dev = core::CudaDevice();
  std::cout << "gpu: "
            << (cpu        ? "none (--cpu)"
                : dev.ok() ? dev->DebugString()
                           : dev.status().ToString())
            << "\n";
  std::string out_dir = absl::GetFlag(FLAGS_out);
  if (out_dir.empty()) {
    const char* env = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    out_dir = env != nullptr ? env : ".";
  }
  int failures = 0;
  for (const std::string& name : absl::GetFlag(FLAGS_preset)) {
    absl::Status s = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(const Preset p, PresetByName(name));
      return RunPreset(p, absl::GetFlag(FLAGS_chunk), std::max(1, absl::GetFlag(FLAGS_reps)),
                       cpu ? core::Device::kCpu : core::Device::kCuda, out_dir);
    }();
    if (!s.ok()) {
      std::cout << "[ssd] preset=" << name << " FAILED: " << s << "\n";
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
