#include "mimetic/experiments/runner/point_run.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "mimetic/core/dir_lock.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/untrusted_tree.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/render/plots.h"
#include "mimetic/experiments/runner/point_result_check.h"
#include "mimetic/experiments/runner/progress.h"
#include "mimetic/experiments/runner/stop_signal.h"
#include "mimetic/experiments/runner/threads.h"
#include "mimetic/init/transform.h"
#include "mimetic/models/attention_maps.h"
#include "mimetic/ops/shape/shape.h"
#include "mimetic/train/checkpoint.h"
#include "mimetic/train/evaluate.h"
#include "mimetic/train/metrics_log.h"
#include "mimetic/train/train_step.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Checkpoint metadata: the CPU threads of the process that wrote it.
constexpr char kThreadsKey[] = "threads";
// Checkpoint metadata: the training losses of the last log_every steps ("%.17g", comma-separated).
constexpr char kRecentLossesKey[] = "recent_losses";
constexpr char kModelSpecKey[] = "model_spec";

// Seconds between progress lines when log_every steps take longer.
constexpr double kProgressPeriod = 5.0;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// `tree` with every leaf on `device` (leaves already there are shared, not copied).
absl::StatusOr<core::ParamTree> OnDevice(const core::ParamTree& tree, core::Device device) {
  std::vector<core::Tensor> leaves;
  for (const core::Tensor& t : tree.Leaves()) {
    ASSIGN_OR_RETURN(core::Tensor d, t.ToDevice(device));
    leaves.push_back(d);
  }
  return tree.WithLeaves(std::move(leaves));
}

// The experiment's device, checked: CUDA needs the CUDA backend linked in (//mimetic/experiments: run_cuda)
// and a GPU; otherwise the error says what was found.
absl::StatusOr<core::Device> ResolveDevice(const Experiment& e) {
  if (e.device() != "cuda") return core::Device::kCpu;
  absl::Status backend = core::CudaBackendStatus();
  if (absl::IsNotFound(backend)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device: \"cuda\" was requested but this binary has no CUDA backend (", backend.message(),
        "); run //mimetic/experiments:run_cuda (built where nvcc is installed), or set device: \"cpu\""));
  }
  if (!backend.ok() || core::GetCudaMemoryHooks().allocate == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("device: \"cuda\" was requested but no usable GPU was found: ", backend.message()));
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

absl::Status MakePointDirectory(const fs::path& dir) {
  absl::Status made = core::MakeDirs(dir.string());
  if (!made.ok()) return absl::PermissionDeniedError(absl::StrCat("output_dir: ", made.message()));
  return absl::OkStatus();
}

// The fields that change what is trained (TrainedState), as text.
std::string TrainedStateKey(const Experiment& e) {
  std::string key;
  google::protobuf::TextFormat::PrintToString(TrainedState(e), &key);
  return key;
}

// Makes `dir` (created and locked by `lock`) ready for a (re)start. resume: refuses a directory of
// another experiment. No resume: moves an earlier run aside (with its lock) and locks a fresh `dir`,
// so a fresh start can never pick up another run's state.
absl::Status PrepareDirectory(const Experiment& e, const fs::path& dir, std::ostream& progress,
                              core::DirLock* lock) {
  std::error_code ec;
  const fs::path saved_config = dir / "config.textproto";
  if (fs::exists(saved_config, ec)) {
    if (!e.resume()) {
      const fs::path aside =
          dir.string() + absl::StrFormat(".old-%d", static_cast<int64_t>(std::time(nullptr)));
      fs::rename(dir, aside, ec);
      if (ec)
        return absl::PermissionDeniedError(
            absl::StrCat("cannot move '", dir.string(), "' aside: ", ec.message()));
      progress << "resume: false: moved the earlier run in " << dir.string() << " to " << aside.string()
               << "\n";
      RETURN_IF_ERROR(MakePointDirectory(dir));
      ASSIGN_OR_RETURN(*lock, core::DirLock::Acquire(dir.string()));
    } else {
      ASSIGN_OR_RETURN(std::string text, core::ReadTextFile(saved_config.string()));
      Experiment saved;
      if (!MergeConfigText(text, &saved).ok()) {
        return absl::DataLossError(absl::StrCat("'", saved_config.string(),
                                                "' cannot be parsed; move the directory ",
                                                "aside or set resume: false"));
      }
      if (TrainedStateKey(saved) != TrainedStateKey(e)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "'", dir.string(),
            "' holds a different experiment (see its config.textproto; train.steps and every ",
            "model, task, init and optimiser field must match); resuming would mix them. Use another name ",
            "(--set name=...), delete the directory, or set resume: false (which moves it aside)"));
      }
    }
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(e, &text);
  return core::WriteTextFile((dir / "config.textproto").string(), text);
}

absl::StatusOr<PointResult> ReadResultFile(const fs::path& path) {
  ASSIGN_OR_RETURN(std::string text, core::ReadTextFile(path.string()));
  PointResult r;
  if (!MergeConfigText(text, &r).ok()) {
    return absl::DataLossError(absl::StrCat("'", path.string(), "' cannot be parsed as a PointResult"));
  }
  return r;
}

absl::Status WriteResultFile(const fs::path& path, const PointResult& r) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(r, &text);
  return core::WriteTextFile(path.string(), text);
}

// One training run of a point: the state that the steps below share.
class PointTrainer {
 public:
  PointTrainer(const Experiment& e, const GridPoint& point, const fs::path& dir, const PointOptions& options,
               std::ostream& progress)
      : e_(e),
        point_(point),
        dir_(dir),
        options_(options),
        progress_(progress),
        name_(absl::StrCat(point.variant, point.axes.empty() ? "" : " " + AxesLabel(point), " seed ",
                           point.seed)),
        run_(absl::StrCat(point.variant, "/seed", point.seed)) {}

  absl::StatusOr<RunResult> Run() {
    RETURN_IF_ERROR(Setup());
    RETURN_IF_ERROR(Train());
    RunResult out;
    out.point = point_;
    out.losses = losses_;
    if (state_.step < e_.train().steps() && !early_stopped_ && !diverged_) {
      out.result = partial_;  // stopped by the step budget: not finished
      return out;
    }
    RETURN_IF_ERROR(Finish());
    out.result = partial_;
    out.finished = true;
    return out;
  }

 private:
  static std::string AxesLabel(const GridPoint& p) {
    std::string s;
    for (const AxisValue& a : p.axes) absl::StrAppend(&s, s.empty() ? "" : ",", a.axis, "=", a.value);
    return s;
  }

  // Builds the model (default init + the variant's transforms) and resumes from a checkpoint.
  absl::Status Setup() {
    const Variant& v = e_.variants(0);
    const core::Key key = core::Key::FromSeed(point_.seed);
    // The same data and eval examples for every variant of a seed: a paired comparison.
    data_key_ = core::FoldIn(key, "data");
    eval_key_ = core::FoldIn(key, "eval");
    ASSIGN_OR_RETURN(task_, MakeTask(e_.task()));
    if (e_.eval().has_task()) {
      ASSIGN_OR_RETURN(eval_task_, MakeTask(e_.eval().task()));
    }
    ASSIGN_OR_RETURN(init::Transform transform, MakeTransform(v));
    ASSIGN_OR_RETURN(model_, init::MakeModel(VariantModel(e_, v), transform, core::FoldIn(key, "init")));
    ASSIGN_OR_RETURN(device_, ResolveDevice(e_));
    // Init runs on the host (same bits everywhere); the tree then moves to the experiment's device.
    ASSIGN_OR_RETURN(model_.params, OnDevice(model_.params, device_));
    ASSIGN_OR_RETURN(state_, train::InitTrainState(model_.params));
    partial_.set_variant(v.name());
    partial_.set_seed(point_.seed);
    absl::StatusOr<train::LoadedCheckpoint> loaded =
        train::LoadLatestCheckpoint((dir_ / "checkpoints").string(), model_.params);
    if (loaded.ok()) {
      // A checkpoint loads as host tensors (checkpoint.h); the step runs where the experiment says.
      state_.step = loaded->state.step;
      ASSIGN_OR_RETURN(state_.params, OnDevice(loaded->state.params, device_));
      ASSIGN_OR_RETURN(state_.m, OnDevice(loaded->state.m, device_));
      ASSIGN_OR_RETURN(state_.v, OnDevice(loaded->state.v, device_));
      progress_ << "[" << name_ << "] resuming from step " << state_.step << "\n";
      if (auto it = loaded->metadata.find(kRecentLossesKey); it != loaded->metadata.end()) {
        for (absl::string_view part : absl::StrSplit(it->second, ',', absl::SkipEmpty())) {
          double loss = 0;
          if (!absl::SimpleAtod(part, &loss)) {
            return absl::DataLossError(
                absl::StrCat("'", loaded->path, "': metadata ", kRecentLossesKey, " holds '", part, "'"));
          }
          recent_.push_back(loss);
        }
      }
      // Reductions split work by thread count, so the last bits depend on it: say so when it changed.
      auto threads = loaded->metadata.find(kThreadsKey);
      if (threads != loaded->metadata.end() && threads->second != absl::StrCat(ThreadCount())) {
        progress_ << "[" << name_ << "] warning: " << loaded->path << " was written with " << threads->second
                  << " CPU threads and this process uses " << ThreadCount()
                  << "; the results will differ in the last bits from a run that kept " << threads->second
                  << " (use --threads=" << threads->second << " for a bit-identical resume)\n";
      }
      absl::StatusOr<PointResult> saved = ReadResultFile(dir_ / "progress.textproto");
      if (saved.ok()) partial_ = *saved;
      // Keep only evaluations up to the checkpoint (later ones are repeated by this process).
      auto* curve = partial_.mutable_curve();
      while (!curve->empty() && curve->rbegin()->step() > state_.step) curve->RemoveLast();
    } else if (!absl::IsNotFound(loaded.status())) {
      return loaded.status();
    }
    evaluator_ = std::make_unique<train::Evaluator>(model_.spec, device_);
    ASSIGN_OR_RETURN(train::MetricsLog log, train::MetricsLog::Open(dir_.string()));
    log_ = std::make_unique<train::MetricsLog>(std::move(log));
    return absl::OkStatus();
  }

  // Never saves a non-finite state (a DivergenceError instead): the last good checkpoint stays the
  // newest, so a restart cannot pick up a diverged model.
  absl::Status SaveCheckpoint() {
    RETURN_IF_ERROR(train::CheckFinite(state_));
    partial_.set_seconds(partial_.seconds() + Seconds(since_save_));
    since_save_ = Clock::now();
    partial_.set_steps(state_.step);
    partial_.set_final_loss(RecentLoss());
    // progress.textproto first: a kill between the two leaves evaluations newer than the newest
    // checkpoint, which a resume drops and repeats; the other order would lose the evaluations made
    // since the previous checkpoint.
    RETURN_IF_ERROR(WriteResultFile(dir_ / "progress.textproto", partial_));
    std::string recent;
    for (double loss : recent_)
      absl::StrAppend(&recent, recent.empty() ? "" : ",", absl::StrFormat("%.17g", loss));
    return train::SaveCheckpoint((dir_ / "checkpoints").string(), state_, data_key_,
                                 {{"variant", point_.variant},
                                  // The model as trained, after the init transforms: a reader outside
                                  // mimetic needs it to rebuild the forward (the mimetic init's
                                  // A = -exp(a_log_scale A_log) lives in the spec, not the weights).
                                  {kModelSpecKey, OneLineText(model_.spec)},
                                  {"seed", absl::StrCat(point_.seed)},
                                  {kThreadsKey, absl::StrCat(ThreadCount())},
                                  {kRecentLossesKey, recent}});
  }

  // A stop signal: the current step is done; checkpoint it and say where.
  absl::Status StopWithCheckpoint(int signo) {
    RETURN_IF_ERROR(SaveCheckpoint());
    const std::string path = (dir_ / "checkpoints" / train::CheckpointFileName(state_.step)).string();
    progress_ << "[" << name_ << "] " << SignalName(signo) << ": checkpointed step " << state_.step << " in "
              << path << "\n";
    return StoppedError(signo, absl::StrCat("at step ", state_.step, " of ", name_, " (checkpoint ", path,
                                            "); running the same command again resumes from it"));
  }

  // The mean loss of the last log_every steps, across processes (the window is saved in checkpoints),
  // so that it does not depend on where a run was interrupted.
  double RecentLoss() const {
    if (recent_.empty()) return partial_.final_loss();
    double sum = 0;
    for (double loss : recent_) sum += loss;
    return sum / static_cast<double>(recent_.size());
  }

  void AddLoss(double loss) {
    losses_.push_back(loss);
    recent_.push_back(loss);
    while (recent_.size() > static_cast<size_t>(std::max(1, e_.train().log_every()))) recent_.pop_front();
  }

  // Evaluates at every eval length; returns whether every exact accuracy reached early_stop_accuracy.
  absl::StatusOr<bool> Evaluate(int64_t num_batches, bool final) {
    // A non-finite model has no accuracy worth printing: a DivergenceError instead.
    RETURN_IF_ERROR(train::CheckFinite(state_));
    const TrainSpec& t = e_.train();
    std::map<std::string, double> scalars;
    EvalPoint* point = final ? nullptr : partial_.add_curve();
    if (point != nullptr) point->set_step(state_.step);
    bool all_done = true;
    std::string line;
    for (int len : e_.eval().lengths()) {
      ASSIGN_OR_RETURN(train::EvalResult r,
                       evaluator_->AtLength(state_.params, eval_task_ ? *eval_task_ : *task_,
                                            core::FoldIn(eval_key_, static_cast<uint32_t>(len)), len,
                                            e_.eval().batch_size(), num_batches));
      scalars[absl::StrCat("eval/exact@", len)] = r.exact_accuracy;
      scalars[absl::StrCat("eval/token@", len)] = r.token_accuracy;
      absl::StrAppend(&line, absl::StrFormat(" exact@%d=%.3f token@%d=%.3f", len, r.exact_accuracy, len,
                                             r.token_accuracy));
      all_done = all_done && r.exact_accuracy >= t.early_stop_accuracy();
      LengthAccuracy* a = final ? partial_.add_final() : point->add_accuracy();
      a->set_length(len);
      a->set_exact(r.exact_accuracy);
      a->set_token(r.token_accuracy);
      if (len == e_.eval().lengths(0)) last_exact_ = r.exact_accuracy;
    }
    RETURN_IF_ERROR(log_->Log(state_.step, run_, scalars));
    progress_ << "[" << name_ << "] " << (final ? "final" : "eval") << " step " << state_.step << line
              << "\n";
    return t.early_stop_accuracy() > 0 && all_done;
  }

  // A metric that cannot be written (a full disk) stops the run: a log with holes would mislead.
  absl::Status LogProgress(const train::StepMetrics& m, int64_t first_step, int64_t tokens) {
    const double elapsed = Seconds(start_);
    absl::Status s = log_->Log(state_.step, run_,
                               {{"train/loss", m.loss},
                                {"train/grad_norm", m.grad_norm},
                                {"train/lr", m.lr},
                                {"train/tokens_per_s", tokens / elapsed}});
    RETURN_IF_ERROR(s);
    PrintProgress(m.loss, first_step, tokens);
    return absl::OkStatus();
  }

  // The progress line (runner/progress.h reads it back for the sweep's live
  // status): at every log step, and between them at least every kProgressPeriod
  // seconds so that slow steps still show movement.
  void PrintProgress(double loss, int64_t first_step, int64_t tokens) {
    const TrainSpec& t = e_.train();
    const double elapsed = Seconds(start_);
    const double rate = (state_.step - first_step) / std::max(elapsed, 1e-9);
    progress_ << absl::StrFormat(
        "[%s] step %d/%d loss %.4f%s %.0f tok/s, %s left\n", name_, state_.step, t.steps(), loss,
        last_exact_ >= 0 ? absl::StrFormat(" acc@%d %.3f", e_.eval().lengths(0), last_exact_) : std::string(),
        tokens / elapsed, FormatDuration((t.steps() - state_.step) / rate));
    last_print_ = Clock::now();
  }

  // Divergence, seen by the step (loss, gradient norm) or in the updated state (before an evaluation or
  // a checkpoint), stops the point: the state is not saved, and the point is recorded as diverged
  // (accuracy 0), so a learning-rate sweep can go on with the other rates.
  absl::Status Train() {
    absl::Status s = TrainSteps();
    if (!train::IsDivergence(s)) return s;
    progress_ << "[" << name_ << "] " << s.message() << "; the last good checkpoint is kept\n";
    diverged_ = true;
    return absl::OkStatus();
  }

  absl::Status TrainSteps() {
    const TrainSpec& t = e_.train();
    const train::Schedule schedule = MakeSchedule(t);
    train::TrainStep step(model_.spec, MakeOptimizerConfig(t));
    start_ = since_save_ = last_print_ = Clock::now();
    const int64_t first_step = state_.step;
    int64_t tokens = 0;
    while (state_.step < t.steps()) {
      if (const int signo = StopSignal(); signo != 0) return StopWithCheckpoint(signo);
      if (options_.step_budget > 0 && state_.step - first_step >= options_.step_budget) {
        RETURN_IF_ERROR(SaveCheckpoint());
        progress_ << "[" << name_ << "] step budget reached at step " << state_.step << "; checkpointed\n";
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(
          data::Batch host_batch,
          task_->SampleTrain(core::FoldIn(data_key_, static_cast<uint32_t>(state_.step)), t.batch_size()));
      ASSIGN_OR_RETURN(data::Batch batch, OnDevice(std::move(host_batch), device_));
      absl::StatusOr<train::StepMetrics> m = step(&state_, batch, schedule.LearningRate(state_.step));
      RETURN_IF_ERROR(m.status());
      AddLoss(m->loss);
      tokens += batch.tokens.numel();
      if (state_.step % t.log_every() == 0 || state_.step == t.steps()) {
        RETURN_IF_ERROR(LogProgress(*m, first_step, tokens));
      } else if (Seconds(last_print_) >= kProgressPeriod) {
        PrintProgress(m->loss, first_step, tokens);
      }
      if (state_.step % t.eval_every() == 0 || state_.step == t.steps()) {
        ASSIGN_OR_RETURN(const bool done, Evaluate(e_.eval().num_batches(), false));
        if (done) {
          progress_ << "[" << name_ << "] early stop: every eval length reached " << t.early_stop_accuracy()
                    << "\n";
          early_stopped_ = true;
          return SaveCheckpoint();
        }
      }
      if (state_.step % t.checkpoint_every() == 0 || state_.step == t.steps())
        RETURN_IF_ERROR(SaveCheckpoint());
    }
    return absl::OkStatus();
  }

  // The final evaluation, attention maps, and result.textproto.
  absl::Status Finish() {
    partial_.set_steps(state_.step);
    partial_.set_final_loss(diverged_ ? std::numeric_limits<double>::quiet_NaN() : RecentLoss());
    partial_.set_early_stopped(early_stopped_);
    partial_.set_diverged(diverged_);
    partial_.set_threads(ThreadCount());
    partial_.clear_final();
    if (diverged_) {
      // A non-finite model has no meaningful accuracy: record 0 and say why.
      for (int len : e_.eval().lengths()) {
        LengthAccuracy* a = partial_.add_final();
        a->set_length(len);
        a->set_exact(0);
        a->set_token(0);
      }
    } else {
      RETURN_IF_ERROR(Evaluate(e_.eval().final_batches(), true).status());
      if (options_.plots) RETURN_IF_ERROR(WriteMaps());
    }
    partial_.set_seconds(partial_.seconds() + Seconds(since_save_));
    return WriteResultFile(dir_ / "result.textproto", partial_);
  }

  // Attention maps of every layer on one eval example; an error only when they cannot be computed.
  absl::Status WriteMaps() {
    const int64_t len = e_.eval().map_length() > 0 ? e_.eval().map_length() : e_.eval().lengths(0);
    ASSIGN_OR_RETURN(data::EvalBatch eb, task_->SampleEval(core::FoldIn(eval_key_, "map"), 1, len));
    data::Batch example = eb.batch;
    // Only the example itself, not the padding after it.
    if (!eb.answer_positions.empty() && !eb.answer_positions[0].empty()) {
      const int64_t end = std::min<int64_t>(eb.answer_positions[0].back() + 2, example.tokens.dim(1));
      example.tokens = ops::Slice(example.tokens, 1, 0, end);
    }
    ASSIGN_OR_RETURN(data::Batch map_batch, OnDevice(example, device_));
    ASSIGN_OR_RETURN(std::vector<models::LayerMap> maps,
                     models::ComputeAllLayerMaps(state_.params, model_.spec, map_batch.tokens, 0));
    // A picture that cannot be written (a full disk) is a warning, as a gnuplot plot is (runner.cc): each
    // PNG replaces the old one only once written whole, so the old picture stays, and the result the
    // point trained for is still recorded.
    if (absl::Status drawn = WriteAttentionMapPngs((dir_ / "plots").string(), point_.variant, maps);
        !drawn.ok()) {
      progress_ << "[" << name_
                << "] warning: attention maps not written (the earlier pictures stay): " << drawn.message()
                << "\n";
    }
    return absl::OkStatus();
  }

  const Experiment& e_;
  const GridPoint& point_;
  const fs::path dir_;
  const PointOptions& options_;
  std::ostream& progress_;
  const std::string name_;  // in progress lines
  const std::string run_;   // in the metric log
  core::Key data_key_ = core::Key::FromSeed(0), eval_key_ = core::Key::FromSeed(0);
  std::unique_ptr<data::Task> task_;
  std::unique_ptr<data::Task>
      eval_task_;  // eval.task when set (a held-out split), else evaluation uses task_
  init::Model model_;
  core::Device device_ = core::Device::kCpu;
  train::TrainState state_;
  std::unique_ptr<train::MetricsLog> log_;
  std::unique_ptr<train::Evaluator> evaluator_;
  PointResult partial_;
  std::vector<double> losses_;  // of this process
  std::deque<double> recent_;   // the last log_every losses, restored on resume
  Clock::time_point start_, since_save_, last_print_;
  double last_exact_ = -1;
  bool early_stopped_ = false, diverged_ = false;
};

}  // namespace

absl::StatusOr<RunResult> RunPoint(const Experiment& e, const GridPoint& point, const std::string& point_dir,
                                   const PointOptions& options) {
  std::ostream& progress = options.progress != nullptr ? *options.progress : std::cerr;
  if (e.variants_size() != 1 || e.seeds_size() != 1) {
    return absl::InvalidArgumentError("RunPoint: expected a point experiment (one variant, one seed)");
  }
  const fs::path dir(point_dir);
  RETURN_IF_ERROR(ResolveDevice(e).status());
  // One writer per point directory: a second process (another run of this sweep, a cluster job of the
  // same point) is refused here, naming the holder, before it can replace this one's checkpoints.
  RETURN_IF_ERROR(MakePointDirectory(dir));
  ASSIGN_OR_RETURN(core::DirLock lock, core::DirLock::Acquire(point_dir));
  RETURN_IF_ERROR(core::RemoveStaleTemps((dir / "checkpoints").string()).status());
  RETURN_IF_ERROR(PrepareDirectory(e, dir, progress, &lock));
  if (e.resume()) {
    absl::StatusOr<PointResult> done = ReadPointResult(point_dir, e);
    if (done.ok()) {
      RunResult r;
      r.point = point;
      r.result = *done;
      r.finished = true;
      return r;
    }
    if (!absl::IsNotFound(done.status())) return done.status();
  }
  return PointTrainer(e, point, dir, options, progress).Run();
}

Experiment TrainedState(Experiment e) {
  e.clear_output_dir();
  e.clear_resume();
  e.clear_eval();
  e.clear_name();
  TrainSpec* t = e.mutable_train();
  t->clear_eval_every();
  t->clear_log_every();
  t->clear_checkpoint_every();
  t->clear_early_stop_accuracy();
  return e;
}

absl::Status CheckDevice(const Experiment& experiment) { return ResolveDevice(experiment).status(); }

absl::StatusOr<PointResult> ReadPointResult(const std::string& point_dir, const Experiment& point_experiment) {
  const fs::path path = fs::path(point_dir) / "result.textproto";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) {
    return absl::NotFoundError(absl::StrCat("'", path.string(), "' does not exist"));
  }
  ASSIGN_OR_RETURN(PointResult r, ReadResultFile(path));
  RETURN_IF_ERROR(CheckPointResult(r, point_experiment, path.string()));
  return r;
}

absl::StatusOr<PointResult> ReadGridPointResult(const std::string& run_dir, const Experiment& experiment,
                                                const GridPoint& point) {
  const fs::path dir = fs::path(run_dir) / point.dir;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir / "result.textproto", ec))) {
    return absl::NotFoundError(absl::StrCat("'", (dir / "result.textproto").string(), "' does not exist"));
  }
  // A point directory or result that is a link (unpacked from someone's archive, say) would make a read
  // judge another file and the figure's later writes beside it (final_maps.pb) land outside the run.
  absl::Status linked = core::CheckNoLinksBelow(run_dir, (dir / "result.textproto").string());
  if (!linked.ok()) return absl::DataLossError(linked.message());
  ASSIGN_OR_RETURN(Experiment one, PointExperiment(experiment, point));
  return ReadPointResult(dir.string(), one);
}

double FinalExact(const PointResult& r, int length) {
  for (const LengthAccuracy& a : r.final()) {
    if (a.length() == length) return a.exact();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double FinalToken(const PointResult& r, int length) {
  for (const LengthAccuracy& a : r.final()) {
    if (a.length() == length) return a.token();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace mimetic::experiments
