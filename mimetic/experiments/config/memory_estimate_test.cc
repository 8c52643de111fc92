// The memory estimate against the real thing: the runner binary trains each of a table of shapes
// (two steps, a small evaluation, one thread) in a fresh child process, whose peak resident memory
// wait4() reports, and the estimate must be within 25% of it. Each shape is sized to peak at
// 150-600 MB, so that the process itself (~15 MB) is a small part, and stresses one term: a wide MLP,
// a wide vocabulary (logits in training and evaluation), Mamba 2 with a large state, softmax
// attention, long rows, Mamba 1. Also: a 16M-token vocabulary is refused by the memory check
// before anything is built (its embedding alone would be 1 GB).
#include "mimetic/experiments/config/memory_estimate.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/runner/testing/run_test_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

// Two Mamba 2 layers of width 64 on the copy task. The evaluation after step 2 traces its plan and
// the final one replays it, so the table sees a replayed training step and a replayed evaluation.
constexpr char kBase[] = R"pb(
  name: "mem"
  model {
    vocab_size: 30
    d_model: 64
    n_layer: 2
    default_layer { mamba2 { d_state: 32 headdim: 16 chunk_size: 32 } }
  }
  variants { name: "default" }
  task { copy { vocab: 26 min_len: 5 max_len: 25 context_len: 128 } }
  train { steps: 2 batch_size: 4 eval_every: 2 log_every: 1 checkpoint_every: 1000 warmup_steps: 1 }
  eval {
    lengths: [ 25 ]
    batch_size: 4
    num_batches: 1
    final_batches: 1
  }
  seeds: [ 1 ]
)pb";

std::string BaseConfig() {
  const std::string path = ::testing::TempDir() + "/memory_base.textproto";
  std::ofstream(path) << kBase;
  return path;
}

struct Shape {
  const char* name;
  std::vector<std::string> sets;
};

const std::vector<Shape>& Shapes() {
  static const auto* shapes = new std::vector<Shape>{
      {"mlp d_intermediate 16384", {"model.n_layer=1", "model.d_intermediate=16384"}},
      {"vocab 32768, width 32", {"model.n_layer=1", "model.d_model=32", "model.vocab_size=32768"}},
      {"mamba2 N 256, batch 48", {"model.default_layer.mamba2.d_state=256", "train.batch_size=48"}},
      {"attention, rows of 512, batch 16",
       {"model.d_model=128", "model.default_layer={attention:{num_heads:4}}", "task.copy.context_len=512",
        "train.batch_size=16", "eval.batch_size=2"}},
      {"rows of 4096, width 128",
       {"model.d_model=128", "task.copy.context_len=4096", "train.batch_size=2", "eval.batch_size=1"}},
      {"mamba1 N 16, batch 96", {"model.default_layer={mamba1:{d_state:16}}", "train.batch_size=96"}},
  };
  return *shapes;
}

struct Child {
  int status = -1;       // the exit code, or 128 + the signal
  int64_t peak_rss = 0;  // bytes
  std::string log;
};

// Runs the runner on the base config with `sets` in a fresh process (stdout and stderr to a log),
// under an address-space limit when `address_space` > 0, and waits for it.
Child RunChild(const std::string& tag, const std::vector<std::string>& sets, int64_t address_space = 0) {
  const std::string out = ::testing::TempDir() + "/memory_" + tag;
  std::vector<std::string> argv = {RunBinary(), BaseConfig(), "--threads=1", "--noplots"};
  // A fixed limit for the runner's own check: the shapes fit it whatever this machine has free.
  argv.insert(argv.end(), {"--max_memory_gb=8", "--set", "output_dir=" + out});
  for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
  const std::string log_path = out + ".log";
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    if (address_space > 0) {
      const rlimit limit{static_cast<rlim_t>(address_space), static_cast<rlim_t>(address_space)};
      ::setrlimit(RLIMIT_AS, &limit);
    }
    ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
    std::vector<char*> c;
    for (std::string& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  ::close(log);
  Child child;
  int status = 0;
  rusage usage{};
  // A fresh child per shape: its own ru_maxrss (KiB), not the largest of all children so far.
  if (::wait4(pid, &status, 0, &usage) == pid) {
    child.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    child.peak_rss = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  }
  child.log = ReadFile(log_path);
  return child;
}

// The estimate of the shape's one grid point, as the runner's check computes it.
int64_t Estimate(const std::vector<std::string>& sets) {
  absl::StatusOr<Experiment> e = LoadExperiment(BaseConfig(), sets);
  absl::StatusOr<std::vector<GridPoint>> grid = e.ok() ? ExpandGrid(*e) : e.status();
  absl::StatusOr<Experiment> point = grid.ok() ? PointExperiment(*e, grid->at(0)) : grid.status();
  if (!point.ok()) {
    ADD_FAILURE() << point.status();
    return 0;
  }
  return EstimateTrainingMemory(*point).bytes;
}

TEST(MemoryEstimateTest, WithinAQuarterOfThePeakOfARealRunForEachShape) {
  std::string table = absl::StrFormat("%-36s %12s %12s %7s\n", "shape", "estimate MB", "peak MB", "ratio");
  for (size_t i = 0; i < Shapes().size(); ++i) {
    const Shape& shape = Shapes()[i];
    const int64_t estimate = Estimate(shape.sets);
    const Child run = RunChild(absl::StrCat("shape", i), shape.sets);
    ASSERT_EQ(run.status, 0) << shape.name << ":\n" << run.log;
    const double ratio = static_cast<double>(estimate) / run.peak_rss;
    absl::StrAppendFormat(&table, "%-36s %12.1f %12.1f %7.2f\n", shape.name, estimate / 1e6,
                          run.peak_rss / 1e6, ratio);
    EXPECT_GE(ratio, 0.75) << shape.name;
    EXPECT_LE(ratio, 1.25) << shape.name;
  }
  std::printf("%s", table.c_str());
  RecordProperty("table", table);
}

// Before, the narrow probe that checks the init transforms drew the whole 16M x 16 embedding (1 GB,
// twice over, for ~25 s) before the memory check ran; under a 1 GiB address space that ended in an
// allocation failure instead of the memory check's answer.
TEST(MemoryEstimateTest, ASixteenMillionTokenVocabularyIsRefusedBeforeAnythingIsBuilt) {
  const Child run = RunChild("vocab16m", {"model.vocab_size=16000000"}, int64_t{1} << 30);
  EXPECT_EQ(run.status, 1) << run.log;
  EXPECT_THAT(run.log, HasSubstr("needs about"));
  EXPECT_THAT(run.log, HasSubstr("is available; lower train.batch_size or the model size"));
}

}  // namespace
}  // namespace mimetic::experiments
