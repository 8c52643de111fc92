#include "mimetic/experiments/runner.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/text_format.h"
#include "mimetic/core/jit.h"
#include "mimetic/experiments/config.h"
#include "mimetic/experiments/plots.h"
#include "mimetic/init/transform.h"
#include "mimetic/models/attention_maps.h"
#include "mimetic/models/lm.h"
#include "mimetic/ops/shape/shape.h"
#include "mimetic/train/checkpoint.h"
#include "mimetic/train/evaluate.h"
#include "mimetic/train/metrics_log.h"
#include "mimetic/train/train_step.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string FormatDuration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const int64_t t = static_cast<int64_t>(s + 0.5);
  return t >= 60 ? absl::StrFormat("%dm%02ds", t / 60, t % 60) : absl::StrFormat("%ds", t);
}

struct Curve {
  std::vector<double> steps;
  std::map<int64_t, std::vector<double>> exact;  // length -> per eval point
};

// The experiment's device, checked: CUDA needs the CUDA backend linked in (//mimetic/experiments:
// run_cuda) and a GPU; otherwise the error says what was found.
absl::StatusOr<core::Device> ResolveDevice(const Experiment& e) {
  if (e.device() != "cuda") return core::Device::kCpu;
  absl::Status backend = core::CudaBackendStatus();
  if (absl::IsNotFound(backend)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device: \"cuda\" was requested but this binary has no CUDA backend (", backend.message(),
        "); run //mimetic/experiments:run_cuda (built where nvcc is installed), or set device: \"cpu\""));
  }
  if (!backend.ok() || core::GetCudaMemoryHooks().allocate == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("device: \"cuda\" was requested but no usable GPU was found: ",
                                                      backend.message()));
  }
  return core::Device::kCuda;
}

absl::StatusOr<data::Batch> OnDevice(data::Batch b, core::Device device) {
  if (device == core::Device::kCpu) return b;
  ASSIGN_OR_RETURN(b.tokens, b.tokens.ToDevice(device));
  ASSIGN_OR_RETURN(b.targets, b.targets.ToDevice(device));
  ASSIGN_OR_RETURN(b.loss_mask, b.loss_mask.ToDevice(device));
  return b;
}

absl::Status WriteText(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write '", tmp.string(), "'"));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path.string(), "': ", ec.message()));
  return absl::OkStatus();
}

// One (variant, seed) training run.
absl::StatusOr<RunResult> RunOne(const Experiment& e, const Variant& v, uint64_t seed, const data::Task& task,
                                 const fs::path& run_dir, train::MetricsLog* log, std::ostream& progress,
                                 Curve* curve, const RunOptions& options) {
  const std::string run = absl::StrCat(v.name(), "/seed", seed);
  const core::Key key = core::Key::FromSeed(seed);
  const core::Key init_key = core::FoldIn(key, "init");
  // The same data and eval examples for every variant of a seed: a paired comparison.
  const core::Key data_key = core::FoldIn(key, "data");
  const core::Key eval_key = core::FoldIn(key, "eval");
  ASSIGN_OR_RETURN(init::Transform transform, MakeTransform(v));
  ASSIGN_OR_RETURN(init::Model model, init::MakeModel(VariantModel(e, v), transform, init_key));
  // Init runs on the host (same bits everywhere); the tree then moves to the experiment's device.
  ASSIGN_OR_RETURN(const core::Device device, ResolveDevice(e));
  if (device != core::Device::kCpu) {
    std::vector<core::Tensor> leaves;
    for (const core::Tensor& t : model.params.Leaves()) {
      ASSIGN_OR_RETURN(core::Tensor d, t.ToDevice(device));
      leaves.push_back(d);
    }
    ASSIGN_OR_RETURN(model.params, model.params.WithLeaves(std::move(leaves)));
  }
  ASSIGN_OR_RETURN(train::TrainState state, train::InitTrainState(model.params));
  const fs::path ckpt_dir = run_dir / "checkpoints" / v.name() / absl::StrCat("seed", seed);
  if (e.resume()) {
    absl::StatusOr<train::LoadedCheckpoint> loaded = train::LoadLatestCheckpoint(ckpt_dir.string(), model.params);
    if (loaded.ok()) {
      state = loaded->state;
      progress << "[" << run << "] resuming from step " << state.step << "\n";
    } else if (!absl::IsNotFound(loaded.status())) {
      return loaded.status();
    }
  }
  const TrainSpec& t = e.train();
  const train::Schedule schedule = MakeSchedule(t);
  train::TrainStep step(model.spec, MakeOptimizerConfig(t));
  train::Evaluator evaluator(model.spec, device);
  RunResult result;
  result.variant = v.name();
  result.seed = seed;
  const auto start = Clock::now();
  const int64_t first_step = state.step;
  int64_t tokens = 0;
  double last_exact = -1;
  auto evaluate = [&](int64_t num_batches, bool final) -> absl::Status {
    std::map<std::string, double> scalars;
    bool all_done = true;
    std::string line;
    for (int len : e.eval().lengths()) {
      ASSIGN_OR_RETURN(train::EvalResult r,
                       evaluator.AtLength(state.params, task, core::FoldIn(eval_key, static_cast<uint32_t>(len)), len,
                                          e.eval().batch_size(), num_batches));
      scalars[absl::StrCat("eval/exact@", len)] = r.exact_accuracy;
      scalars[absl::StrCat("eval/token@", len)] = r.token_accuracy;
      absl::StrAppend(&line, absl::StrFormat(" exact@%d=%.3f token@%d=%.3f", len, r.exact_accuracy, len,
                                             r.token_accuracy));
      all_done = all_done && r.exact_accuracy >= t.early_stop_accuracy();
      if (final) {
        result.exact[len] = r.exact_accuracy;
        result.token[len] = r.token_accuracy;
      } else {
        curve->exact[len].push_back(r.exact_accuracy);
      }
      if (len == e.eval().lengths(0)) last_exact = r.exact_accuracy;
    }
    if (!final) curve->steps.push_back(static_cast<double>(state.step));
    RETURN_IF_ERROR(log->Log(state.step, run, scalars));
    progress << "[" << run << "] " << (final ? "final" : "eval") << " step " << state.step << line << "\n";
    if (!final && t.early_stop_accuracy() > 0 && all_done) return absl::CancelledError("early stop");
    return absl::OkStatus();
  };
  for (; state.step < t.steps();) {
    if (options.step_budget > 0 && state.step - first_step >= options.step_budget) {
      RETURN_IF_ERROR(train::SaveCheckpoint(ckpt_dir.string(), state, data_key,
                                            {{"variant", v.name()}, {"seed", absl::StrCat(seed)}}));
      progress << "[" << run << "] step budget reached at step " << state.step << "; checkpointed\n";
      break;
    }
    ASSIGN_OR_RETURN(data::Batch host_batch,
                     task.SampleTrain(core::FoldIn(data_key, static_cast<uint32_t>(state.step)), t.batch_size()));
    ASSIGN_OR_RETURN(data::Batch batch, OnDevice(std::move(host_batch), device));
    ASSIGN_OR_RETURN(train::StepMetrics m, step(&state, batch, schedule.LearningRate(state.step)));
    result.losses.push_back(m.loss);
    tokens += batch.tokens.numel();
    if (state.step % t.log_every() == 0 || state.step == t.steps()) {
      const double elapsed = Seconds(start);
      const double rate = (state.step - first_step) / std::max(elapsed, 1e-9);
      RETURN_IF_ERROR(log->Log(state.step, run, {{"train/loss", m.loss}, {"train/grad_norm", m.grad_norm},
                                                 {"train/lr", m.lr}, {"train/tokens_per_s", tokens / elapsed}}));
      progress << absl::StrFormat("[%s] step %d/%d loss %.4f%s %.0f tok/s, %s left\n", run, state.step, t.steps(),
                                  m.loss,
                                  last_exact >= 0 ? absl::StrFormat(" acc@%d %.3f", e.eval().lengths(0), last_exact)
                                                  : std::string(),
                                  tokens / elapsed, FormatDuration((t.steps() - state.step) / rate));
    }
    if (state.step % t.eval_every() == 0 || state.step == t.steps()) {
      absl::Status s = evaluate(e.eval().num_batches(), false);
      if (absl::IsCancelled(s)) {
        progress << "[" << run << "] early stop: every eval length reached " << t.early_stop_accuracy() << "\n";
        break;
      }
      RETURN_IF_ERROR(s);
    }
    if (state.step % t.checkpoint_every() == 0 || state.step == t.steps()) {
      RETURN_IF_ERROR(train::SaveCheckpoint(ckpt_dir.string(), state, data_key,
                                            {{"variant", v.name()}, {"seed", absl::StrCat(seed)}}));
    }
  }
  RETURN_IF_ERROR(evaluate(e.eval().final_batches(), true));
  result.steps = state.step;
  result.seconds = Seconds(start);
  if (options.plots) {
    // Attention maps of every layer on one eval example (spec §7).
    const int64_t len = e.eval().map_length() > 0 ? e.eval().map_length() : e.eval().lengths(0);
    ASSIGN_OR_RETURN(data::EvalBatch eb, task.SampleEval(core::FoldIn(eval_key, "map"), 1, len));
    // Only the example itself, not the padding after it.
    data::Batch example = eb.batch;
    if (!eb.answer_positions.empty() && !eb.answer_positions[0].empty()) {
      const int64_t end = std::min<int64_t>(eb.answer_positions[0].back() + 2, example.tokens.dim(1));
      example.tokens = ops::Slice(example.tokens, 1, 0, end);
    }
    ASSIGN_OR_RETURN(data::Batch map_batch, OnDevice(example, device));
    ASSIGN_OR_RETURN(std::vector<models::LayerMap> maps,
                     models::ComputeAllLayerMaps(state.params, model.spec, map_batch.tokens, 0));
    RETURN_IF_ERROR(WriteAttentionMapPngs((run_dir / "plots").string(), absl::StrCat(v.name(), "_seed", seed), maps));
  }
  return result;
}

}  // namespace

std::string SummaryTable(const Experiment& e, const std::vector<RunResult>& runs) {
  std::ostringstream out;
  out << "| variant | seeds |";
  for (int len : e.eval().lengths()) out << " exact@" << len << " |";
  for (int len : e.eval().lengths()) out << " token@" << len << " |";
  out << "\n|---|---|";
  for (int i = 0; i < 2 * e.eval().lengths_size(); ++i) out << "---|";
  out << "\n";
  for (const Variant& v : e.variants()) {
    std::vector<const RunResult*> rs;
    for (const RunResult& r : runs) {
      if (r.variant == v.name()) rs.push_back(&r);
    }
    if (rs.empty()) continue;
    out << "| " << v.name() << " | " << rs.size() << " |";
    for (bool exact : {true, false}) {
      for (int len : e.eval().lengths()) {
        double mean = 0, var = 0;
        for (const RunResult* r : rs) mean += (exact ? r->exact : r->token).at(len) / rs.size();
        for (const RunResult* r : rs) {
          const double d = (exact ? r->exact : r->token).at(len) - mean;
          var += d * d / std::max<size_t>(1, rs.size() - 1);
        }
        out << absl::StrFormat(" %.3f ± %.3f |", mean, std::sqrt(var));
      }
    }
    out << "\n";
  }
  return out.str();
}

absl::StatusOr<ExperimentSummary> RunExperiment(const Experiment& e, const RunOptions& options) {
  std::ostream& progress = options.progress != nullptr ? *options.progress : std::cerr;
  const fs::path run_dir = fs::path(e.output_dir()) / e.name();
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec || !fs::is_directory(run_dir)) {
    return absl::PermissionDeniedError(absl::StrCat("output_dir: cannot create run directory '", run_dir.string(),
                                                    "'", ec ? ": " + ec.message() : ""));
  }
  {
    // Refuse an unwritable directory before any training starts.
    const fs::path probe = run_dir / ".write_probe";
    std::ofstream out(probe);
    if (!out) return absl::PermissionDeniedError(absl::StrCat("output_dir: '", run_dir.string(), "' is not writable"));
    out.close();
    fs::remove(probe, ec);
  }
  // Refuse an unavailable device before anything is written or trained.
  RETURN_IF_ERROR(ResolveDevice(e).status());
  std::string text;
  google::protobuf::TextFormat::PrintToString(e, &text);
  // Resuming into a directory that holds a different experiment would mix runs (or fail on a
  // checkpoint of another shape): only bookkeeping fields may differ.
  if (e.resume() && fs::exists(run_dir / "config.textproto")) {
    std::ifstream in(run_dir / "config.textproto");
    std::stringstream saved_text;
    saved_text << in.rdbuf();
    Experiment saved;
    if (google::protobuf::TextFormat::ParseFromString(saved_text.str(), &saved)) {
      Experiment a = e, b = saved;
      for (Experiment* x : {&a, &b}) {
        x->clear_output_dir();
        x->clear_resume();
        TrainSpec* t = x->mutable_train();
        t->clear_steps();
        t->clear_eval_every();
        t->clear_log_every();
        t->clear_checkpoint_every();
        t->clear_early_stop_accuracy();
      }
      if (a.SerializeAsString() != b.SerializeAsString()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "output_dir: '", run_dir.string(), "' holds a different experiment (see its config.textproto); ",
            "resuming would mix them. Use another name (--set name=...), delete the directory, or set resume: false"));
      }
    }
  }
  RETURN_IF_ERROR(WriteText(run_dir / "config.textproto", text));
  ASSIGN_OR_RETURN(std::unique_ptr<data::Task> task, MakeTask(e.task()));
  ASSIGN_OR_RETURN(train::MetricsLog log, train::MetricsLog::Open(run_dir.string()));
  ExperimentSummary summary;
  summary.run_dir = run_dir.string();
  std::map<int64_t, std::vector<Series>> curves;  // eval length -> one series per run
  for (uint64_t seed : e.seeds()) {
    for (const Variant& v : e.variants()) {
      Curve curve;
      ASSIGN_OR_RETURN(RunResult r, RunOne(e, v, seed, *task, run_dir, &log, progress, &curve, options));
      for (const auto& [len, ys] : curve.exact) {
        curves[len].push_back(Series{absl::StrCat(v.name(), " seed ", seed), curve.steps, ys});
      }
      summary.runs.push_back(std::move(r));
    }
  }
  summary.table = SummaryTable(e, summary.runs);
  RETURN_IF_ERROR(WriteText(run_dir / "summary.md", summary.table));
  std::ostringstream csv;
  csv << "variant,seed,steps,seconds,length,exact_accuracy,token_accuracy\n";
  for (const RunResult& r : summary.runs) {
    for (const auto& [len, acc] : r.exact) {
      csv << r.variant << "," << r.seed << "," << r.steps << "," << absl::StrFormat("%.1f", r.seconds) << "," << len
          << "," << acc << "," << r.token.at(len) << "\n";
    }
  }
  RETURN_IF_ERROR(WriteText(run_dir / "summary.csv", csv.str()));
  if (options.plots) {
    for (const auto& [len, series] : curves) {
      absl::Status s = PlotCurves((run_dir / "plots" / absl::StrCat("accuracy_len", len, ".png")).string(),
                                  absl::StrCat(e.name(), ": exact-string accuracy at length ", len), "step",
                                  "exact accuracy", series);
      if (!s.ok()) progress << "warning: plot not written: " << s.message() << "\n";
    }
  }
  return summary;
}

}  // namespace mimetic::experiments
