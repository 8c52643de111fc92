// Side-by-side speed of one training step on the copy experiment's config: mimetic's jitted step
// (this process) vs the same model and step in plain PyTorch on CPU (tools/bench/torch_copy_step.py,
// run in the same invocation), printing both and the ratio.
//
//   tools/bazel run //mimetic/experiments:speed_benchmark                 # Mamba 2 copy config
//   tools/bazel run //mimetic/experiments:speed_benchmark -- --mixer=mamba1
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/random.h"
#include "mimetic/data/batch.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"
#include "mimetic/train/train_step.h"

namespace {

struct Config {
  std::string mixer = "mamba2";
  int d_model = 64, n_layer = 2, d_state = 32, headdim = 16, chunk = 32, batch = 64, seq_len = 128, steps = 20;
  int threads = 2;
  std::string python = "/usr/bin/python3";
};

double TimeMimetic(const Config& c, mimetic::core::JitPlanStats* stats) {
  using namespace mimetic;
  const std::string layer = c.mixer == "mamba2"
                                ? absl::StrCat("mamba2 { d_state: ", c.d_state, " headdim: ", c.headdim,
                                               " chunk_size: ", c.chunk, " }")
                                : absl::StrCat("mamba1 { d_state: ", c.d_state, " }");
  models::ModelSpec spec = models::ParseModelSpec(absl::StrCat("vocab_size: 30 d_model: ", c.d_model, " n_layer: ",
                                                               c.n_layer, " default_layer { ", layer, " }"))
                               .value();
  train::TrainState state = train::InitTrainState(models::Init(core::Key::FromSeed(0), spec).value()).value();
  train::TrainStep step(spec, train::OptimizerConfig{});
  const int64_t n = int64_t(c.batch) * c.seq_len;
  std::vector<int32_t> tok = core::RandIntVector(core::Key::FromSeed(1), n, 0, 26).value();
  std::vector<int32_t> tgt = core::RandIntVector(core::Key::FromSeed(2), n, 0, 26).value();
  std::vector<float> mask = core::UniformVector(core::Key::FromSeed(3), n, 0, 1).value();
  for (float& m : mask) m = m < 0.5f ? 1.f : 0.f;
  data::Batch batch = data::BatchFromParts(tok, tgt, mask, c.batch, c.seq_len).value();
  for (int i = 0; i < 2; ++i) step(&state, batch, 1e-3).value();  // trace + first replay
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < c.steps; ++i) step(&state, batch, 1e-3).value();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / c.steps;
  *stats = step.jit().last_stats();
  // Where the time goes: a few more steps with per-op timing.
  step.mutable_jit().set_profiling(true);
  for (int i = 0; i < 5; ++i) step(&state, batch, 1e-3).value();
  std::cout << "time per op over 5 profiled steps:\n" << step.jit().ProfileReport();
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* name) { return a.substr(std::string(name).size()); };
    if (absl::StartsWith(a, "--mixer=")) c.mixer = val("--mixer=");
    else if (absl::StartsWith(a, "--d_model=")) c.d_model = std::stoi(val("--d_model="));
    else if (absl::StartsWith(a, "--n_layer=")) c.n_layer = std::stoi(val("--n_layer="));
    else if (absl::StartsWith(a, "--d_state=")) c.d_state = std::stoi(val("--d_state="));
    else if (absl::StartsWith(a, "--batch=")) c.batch = std::stoi(val("--batch="));
    else if (absl::StartsWith(a, "--seq_len=")) c.seq_len = std::stoi(val("--seq_len="));
    else if (absl::StartsWith(a, "--steps=")) c.steps = std::stoi(val("--steps="));
    else if (absl::StartsWith(a, "--python=")) c.python = val("--python=");
    else {
      std::cerr << "unknown flag " << a
                << "; flags: --mixer=mamba2|mamba1 --d_model= --n_layer= --d_state= --batch= --seq_len= --steps= "
                   "--python=\n";
      return 2;
    }
  }
  if (c.mixer != "mamba2" && c.mixer != "mamba1") {
    std::cerr << "--mixer must be mamba2 or mamba1, got '" << c.mixer << "'\n";
    return 2;
  }
  std::cout << absl::StrFormat("config: %s, d_model %d, %d layers, d_state %d, batch %d x %d tokens\n", c.mixer,
                               c.d_model, c.n_layer, c.d_state, c.batch, c.seq_len);
  mimetic::core::JitPlanStats stats;
  const double ours = TimeMimetic(c, &stats);
  std::cout << absl::StrFormat("mimetic (C++, jitted, OpenBLAS, OMP_NUM_THREADS=%s): %.1f ms/step  [%d nodes, %.1f MB planned vs %.1f MB eager]\n",
                               std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "unset", ours,
                               stats.num_nodes, stats.planned_bytes / 1e6, stats.unplanned_bytes / 1e6);
  const char* runfiles = std::getenv("RUNFILES_DIR");
  const std::string script =
      absl::StrCat(runfiles ? std::string(runfiles) + "/mimetic/" : std::string(), "tools/bench/torch_copy_step.py");
  const std::string cmd = absl::StrCat(c.python, " ", script, " --mixer ", c.mixer, " --d_model ", c.d_model,
                                       " --n_layer ", c.n_layer, " --d_state ", c.d_state, " --headdim ", c.headdim,
                                       " --chunk ", c.chunk, " --batch ", c.batch, " --seq_len ", c.seq_len,
                                       " --steps ", std::max(3, c.steps / 4), " --threads ", c.threads, " 2>&1");
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  if (pipe != nullptr) {
    char buf[4096];
    while (fgets(buf, sizeof(buf), pipe)) out += buf;
    const int rc = pclose(pipe);
    if (rc != 0) out = "failed (" + std::to_string(rc) + "): " + out;
  }
  const size_t pos = out.find("\"ms_per_step\": ");
  if (pos == std::string::npos) {
    std::cout << "PyTorch peer did not run (install Debian's python3-torch for the comparison): " << out << "\n";
    return 0;
  }
  const double torch_ms = std::stod(out.substr(pos + 15));
  std::cout << "PyTorch (plain torch ops, CPU): " << out;
  std::cout << absl::StrFormat("speedup: mimetic is %.1fx faster than PyTorch on this step\n", torch_ms / ours);
  return 0;
}
