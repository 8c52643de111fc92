// Side-by-side speed of one training step: mimetic's jitted step (this process) vs the same model
// and step in plain PyTorch (tools/bench/torch_copy_step.py, run in the same invocation) with each of
// its scan cores (tools/bench/torch_scans.py; each checked against the reference core in float64
// before it is timed), printing each, the ratio against the fastest, and where mimetic's time goes.
// It also measures the machine's fp32 limit in the same run (a register-only FMA loop and an OpenBLAS
// sgemm, machine_peak.h) and prints mimetic's GFLOP/s (the step's arithmetic as counted in
// mimetic/models/flops.h) as a fraction of both, with the CPU model.
//
//   tools/bazel run //mimetic/experiments:speed_benchmark                 # Mamba 2 copy config, CPU
//   tools/bazel run //mimetic/experiments:speed_benchmark -- --mixer=mamba1
//   tools/bazel run //mimetic/experiments:gpu_benchmark                   # paper sizes on a GPU:
//       fig1 (4-layer Mamba 2, width 256), fig9 (2-layer Mamba 2, width 1024, N 128, headdim 64),
//       fig3 (24-layer Mamba 1, width 1024, N 32); PyTorch eager and torch.compile.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/random.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/data/batch.h"
#include "mimetic/experiments/bench/machine_peak.h"
#include "mimetic/experiments/runner/threads.h"
#include "mimetic/models/flops.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"
#include "mimetic/train/train_step.h"

namespace {

struct Config {
  std::string name = "copy";
  std::string device = "cpu";
  bool torch_compile = false;
  std::string mixer = "mamba2";
  int d_model = 64, n_layer = 2, d_state = 32, headdim = 16, chunk = 32, batch = 64, seq_len = 128,
      steps = 20;
  int threads = 2;
  bool profile_by_call = false;
  std::string python = "/usr/bin/python3";
  std::vector<std::string> scans;  // --scans: the peer's scan cores to time (empty: all)
};

mimetic::models::ModelSpec SpecOf(const Config& c) {
  using namespace mimetic;
  const std::string layer = c.mixer == "mamba2"
                                ? absl::StrCat("mamba2 { d_state: ", c.d_state, " headdim: ", c.headdim,
                                               " chunk_size: ", c.chunk, " }")
                                : absl::StrCat("mamba1 { d_state: ", c.d_state, " }");
  return models::ParseModelSpec(absl::StrCat("vocab_size: 30 d_model: ", c.d_model, " n_layer: ", c.n_layer,
                                             " default_layer { ", layer, " }"))
      .value();
}

double TimeMimetic(const Config& c, mimetic::core::JitPlanStats* stats) {
  using namespace mimetic;
  const models::ModelSpec spec = SpecOf(c);
  core::ParamTree params = models::Init(core::Key::FromSeed(0), spec).value();
  const core::Device device = c.device == "cuda" ? core::Device::kCuda : core::Device::kCpu;
  params = params.Map([device](const core::Tensor& t) { return t.ToDevice(device).value(); });
  train::TrainState state = train::InitTrainState(params).value();
  train::TrainStep step(spec, train::OptimizerConfig{});
  const int64_t n = int64_t(c.batch) * c.seq_len;
  std::vector<int32_t> tok = core::RandIntVector(core::Key::FromSeed(1), n, 0, 26).value();
  std::vector<int32_t> tgt = core::RandIntVector(core::Key::FromSeed(2), n, 0, 26).value();
  std::vector<float> mask = core::UniformVector(core::Key::FromSeed(3), n, 0, 1).value();
  for (float& m : mask) m = m < 0.5f ? 1.f : 0.f;
  data::Batch batch = data::BatchFromParts(tok, tgt, mask, c.batch, c.seq_len).value();
  batch.tokens = batch.tokens.ToDevice(device).value();
  batch.targets = batch.targets.ToDevice(device).value();
  batch.loss_mask = batch.loss_mask.ToDevice(device).value();
  for (int i = 0; i < 2; ++i) step(&state, batch, 1e-3).value();  // trace + first replay
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < c.steps; ++i) step(&state, batch, 1e-3).value();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / c.steps;
  *stats = step.jit().last_stats();
  // Where the time goes: a few more steps with per-op timing.
  step.mutable_jit().set_profiling(true, c.profile_by_call);
  for (int i = 0; i < 5; ++i) step(&state, batch, 1e-3).value();
  std::cout << "time per op over 5 profiled steps:\n" << step.jit().ProfileReport();
  return ms;
}

Config Preset(const std::string& name, const Config& base) {
  Config c = base;
  c.name = name;
  if (name == "fig1") {  // small 4-layer Mamba (paper Fig. 1), copy length 50 -> rows of 256
    c.d_model = 256, c.n_layer = 4, c.d_state = 128, c.headdim = 64, c.chunk = 64, c.seq_len = 256,
    c.batch = 64;
  } else if (name == "fig9") {  // 2-layer Mamba 2, width 1024, N 128, headdim 64 (paper Fig. 9)
    c.d_model = 1024, c.n_layer = 2, c.d_state = 128, c.headdim = 64, c.chunk = 64, c.seq_len = 256,
    c.batch = 32;
  } else if (name == "fig3") {  // 24-layer width-1024 Mamba 1, N 32 (paper Fig. 3)
    c.mixer = "mamba1", c.d_model = 1024, c.n_layer = 24, c.d_state = 32, c.seq_len = 256, c.batch = 16;
  }
  return c;
}

// The PyTorch peer's scan cores for a mixer, the reference first (tools/bench/torch_scans.py).
// `only` (from --scans), when not empty, keeps those of them.
std::vector<std::string> PeerScans(const std::string& mixer, const std::vector<std::string>& only) {
  std::vector<std::string> all = mixer == "mamba2"
                                     ? std::vector<std::string>{"ssd_minimal", "ssd_chunked", "quadratic"}
                                     : std::vector<std::string>{"loop", "fused", "pscan"};
  if (only.empty()) return all;
  std::vector<std::string> kept;
  for (const std::string& s : all) {
    if (std::find(only.begin(), only.end(), s) != only.end()) kept.push_back(s);
  }
  return kept;
}

// Runs the peer with one scan core; returns its ms per step, or -1 with the output in *raw.
double RunTorch(const Config& c, const std::string& scan, bool compile, std::string* raw) {
  const char* runfiles = std::getenv("RUNFILES_DIR");
  const std::string script = absl::StrCat(runfiles ? std::string(runfiles) + "/mimetic/" : std::string(),
                                          "tools/bench/torch_copy_step.py");
  std::vector<std::string> argv = {c.python,    script,
                                   "--mixer",   c.mixer,
                                   "--scan",    scan,
                                   "--d_model", absl::StrCat(c.d_model),
                                   "--n_layer", absl::StrCat(c.n_layer),
                                   "--d_state", absl::StrCat(c.d_state),
                                   "--headdim", absl::StrCat(c.headdim),
                                   "--chunk",   absl::StrCat(c.chunk),
                                   "--batch",   absl::StrCat(c.batch),
                                   "--seq_len", absl::StrCat(c.seq_len),
                                   "--steps",   absl::StrCat(std::max(3, c.steps / 4)),
                                   "--threads", absl::StrCat(c.threads),
                                   "--device",  c.device};
  if (compile) argv.push_back("--compile");
  absl::StatusOr<mimetic::core::ProgramResult> run =
      mimetic::core::RunProgram(argv, ".", "Debian: python3-torch");
  std::string out;
  if (!run.ok()) {
    out = std::string(run.status().message());
  } else {
    out = run->output;
    if (run->exit_code != 0) out = "failed (" + std::to_string(run->exit_code) + "): " + out;
  }
  *raw = out;
  const size_t pos = out.find("\"ms_per_step\": ");
  return pos == std::string::npos ? -1 : std::stod(out.substr(pos + 15));
}

struct Peak {
  double fma = 0, sgemm = 0;
};

Peak MeasurePeak(int threads) {
  using namespace mimetic::experiments;
  Peak p;
  p.fma = FmaPeakGflops(threads);
  p.sgemm = SgemmGflops(/*n=*/2048, threads);
  std::cout << absl::StrFormat(
      "machine: %s, %d threads; fp32 limit: register-only FMA loop (%s) %.1f GFLOP/s, OpenBLAS sgemm "
      "2048^3 %.1f GFLOP/s\n",
      CpuModel(), threads, FmaIsa(), p.fma, p.sgemm);
  return p;
}

// "1.3x faster" or "1.5x slower": mimetic's time against a peer's, never a "0.7x faster".
std::string Relative(double ours_ms, double peer_ms) {
  return ours_ms <= peer_ms ? absl::StrFormat("%.2fx faster", peer_ms / ours_ms)
                            : absl::StrFormat("%.2fx slower", ours_ms / peer_ms);
}

// Times every peer core and prints each against mimetic and the fastest.
void ComparePeers(const Config& p, double ours) {
  for (bool compile : {false, true}) {
    if (compile && !(p.torch_compile || p.device == "cuda")) continue;
    const char* what = compile ? "PyTorch torch.compile" : "PyTorch eager";
    std::string fastest;
    double fastest_ms = -1;
    for (const std::string& scan : PeerScans(p.mixer, p.scans)) {
      std::string raw;
      const double torch_ms = RunTorch(p, scan, compile, &raw);
      if (torch_ms < 0) {
        std::cout << "[" << p.name << "] " << what << " " << scan
                  << " did not run or disagreed with the reference core (the peer needs Debian's "
                     "python3-torch): "
                  << raw << "\n";
        continue;
      }
      std::cout << absl::StrFormat("[%s] %s, scan %s: %.1f ms/step, mimetic is %s; %s", p.name, what, scan,
                                   torch_ms, Relative(ours, torch_ms), raw);
      if (fastest_ms < 0 || torch_ms < fastest_ms) fastest_ms = torch_ms, fastest = scan;
    }
    if (fastest_ms > 0) {
      std::cout << absl::StrFormat("[%s] fastest %s peer: scan %s, %.1f ms/step; mimetic is %s\n", p.name,
                                   what, fastest, fastest_ms, Relative(ours, fastest_ms));
    }
  }
}

}  // namespace

ABSL_FLAG(std::string, mixer, "mamba2", "mamba2 or mamba1");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda");
ABSL_FLAG(std::vector<std::string>, preset, {},
          "comma-separated presets: copy, fig1, fig9, fig3 (default copy)");
ABSL_FLAG(bool, torch_compile, false, "also time torch.compile (always on for cuda)");
ABSL_FLAG(int, d_model, 0, "override the preset's width (0: keep)");
ABSL_FLAG(int, n_layer, 0, "override the preset's depth (0: keep)");
ABSL_FLAG(int, d_state, 0, "override the preset's state size (0: keep)");
ABSL_FLAG(int, batch, 0, "override the preset's batch (0: keep)");
ABSL_FLAG(int, seq_len, 0, "override the preset's tokens per row (0: keep)");
ABSL_FLAG(int, steps, 0, "override the number of timed steps (0: keep)");
ABSL_FLAG(std::vector<std::string>, scans, {},
          "the PyTorch peer's scan cores to time (default: all of the mixer's; e.g. quadratic,pscan)");
ABSL_FLAG(bool, peers, true, "also time the PyTorch peers (false: mimetic and the machine's limit only)");
ABSL_FLAG(int, threads, 2, "threads for mimetic (OpenMP and OpenBLAS), the peak and the PyTorch peer");
ABSL_FLAG(std::string, python, "", "the Python that runs the PyTorch peer (default: the preset's)");
ABSL_FLAG(bool, profile_by_call, false,
          "time per op call (op, input shapes, attributes) instead of per op name: which GEMM is slow");

int main(int argc, char** argv) {
  // The waits a training run uses (run and figure do the same); the PyTorch peer inherits them.
  mimetic::experiments::UseShortSpinWaits(argv);
  absl::SetProgramUsageMessage(
      "times one training step against the same model and step in PyTorch; e.g. --mixer=mamba1, "
      "--device=cuda --preset=fig1,fig9,fig3");
  absl::ParseCommandLine(argc, argv);
  Config c;
  c.mixer = absl::GetFlag(FLAGS_mixer);
  c.device = absl::GetFlag(FLAGS_device);
  c.torch_compile = absl::GetFlag(FLAGS_torch_compile);
  if (absl::GetFlag(FLAGS_steps) > 0) c.steps = absl::GetFlag(FLAGS_steps);
  c.threads = std::max(1, absl::GetFlag(FLAGS_threads));
  c.profile_by_call = absl::GetFlag(FLAGS_profile_by_call);
  if (!absl::GetFlag(FLAGS_python).empty()) c.python = absl::GetFlag(FLAGS_python);
  c.scans = absl::GetFlag(FLAGS_scans);
  std::vector<std::string> presets = absl::GetFlag(FLAGS_preset);
  if (c.mixer != "mamba2" && c.mixer != "mamba1") {
    std::cerr << "--mixer must be mamba2 or mamba1, got '" << c.mixer << "'\n";
    return 2;
  }
  if (c.device != "cpu" && c.device != "cuda") {
    std::cerr << "--device must be cpu or cuda, got '" << c.device << "'\n";
    return 2;
  }
  if (c.device == "cuda" && mimetic::core::GetCudaMemoryHooks().allocate == nullptr) {
    std::cerr << "--device=cuda: no usable GPU in this binary/machine: " << mimetic::core::CudaBackendStatus()
              << " (use //mimetic/experiments:gpu_benchmark on a machine with a GPU)\n";
    return 1;
  }
  if (presets.empty()) presets.push_back("copy");
  Peak peak;
  if (c.device == "cpu") {
    mimetic::experiments::SetThreadCount(c.threads);
    peak = MeasurePeak(c.threads);
  }
  for (const std::string& name : presets) {
    // The size flags override the preset's sizes (applied after it, so --preset=fig1 --d_model=128 works).
    Config p = Preset(name, c);
    if (absl::GetFlag(FLAGS_d_model) > 0) p.d_model = absl::GetFlag(FLAGS_d_model);
    if (absl::GetFlag(FLAGS_n_layer) > 0) p.n_layer = absl::GetFlag(FLAGS_n_layer);
    if (absl::GetFlag(FLAGS_d_state) > 0) p.d_state = absl::GetFlag(FLAGS_d_state);
    if (absl::GetFlag(FLAGS_batch) > 0) p.batch = absl::GetFlag(FLAGS_batch);
    if (absl::GetFlag(FLAGS_seq_len) > 0) p.seq_len = absl::GetFlag(FLAGS_seq_len);
    std::cout << absl::StrFormat("[%s] %s on %s, d_model %d, %d layers, d_state %d, batch %d x %d tokens\n",
                                 p.name, p.mixer, p.device, p.d_model, p.n_layer, p.d_state, p.batch,
                                 p.seq_len);
    mimetic::core::JitPlanStats stats;
    const double ours = TimeMimetic(p, &stats);
    std::cout << absl::StrFormat(
        "[%s] mimetic (jitted%s): %.1f ms/step  [%d nodes, %.1f MB planned vs %.1f MB eager]\n", p.name,
        p.device == "cpu" ? absl::StrCat(", OpenBLAS, ", mimetic::experiments::ThreadCount(), " threads")
                          : std::string(", CUDA graph"),
        ours, stats.num_nodes, stats.planned_bytes / 1e6, stats.unplanned_bytes / 1e6);
    if (p.device == "cpu") {
      const absl::StatusOr<double> flops = mimetic::models::TrainStepFlops(SpecOf(p), p.batch, p.seq_len);
      if (flops.ok()) {
        const double gflops = *flops / ours * 1e-6;
        std::cout << absl::StrFormat(
            "[%s] mimetic: %.2f GFLOP per step (mimetic/models/flops.h), %.1f GFLOP/s = %.0f%% of the FMA "
            "peak, %.0f%% of sgemm\n",
            p.name, *flops * 1e-9, gflops, 100 * gflops / peak.fma, 100 * gflops / peak.sgemm);
      }
    }
    if (absl::GetFlag(FLAGS_peers)) ComparePeers(p, ours);
  }
  return 0;
}
