// Checkpoints of a training run: one safetensors file per save, `dir/step_<8-digit step>.safetensors`,
// holding everything a resumed run needs to continue bit-exactly.
//
//   RETURN_IF_ERROR(SaveCheckpoint(run_dir + "/checkpoints", state, data_key, {{"config", "copy.pbtxt"}},
//                                  /*keep_last=*/3));
//   ...
//   absl::StatusOr<LoadedCheckpoint> ckpt = LoadLatestCheckpoint(run_dir + "/checkpoints", params);
//   if (ckpt.ok()) { state = ckpt->state; data_key = ckpt->data_key; }      // resume
//   else if (!absl::IsNotFound(ckpt.status())) return ckpt.status();        // a real problem
//
// File contents (readable from PyTorch/JAX/numpy with the `safetensors` package):
//   tensors  <path>          the parameters, named by their tree paths ("layers/0/mixer/A_log")
//            opt/m/<path>    AdamW first moments
//            opt/v/<path>    AdamW second moments
//   metadata format          "mimetic-checkpoint-1"
//            step            the number of updates made, decimal ("1000")
//            data_key        the data-stream PRNG key's two words, decimal, "w0,w1"
//            <key>           each entry of `extra_metadata` (e.g. the resolved config)
//            digest_fnv1a64  CheckpointDigest: every tensor's name, dtype, shape and bytes and every other
//                            metadata entry, so that whatever a resume reads is covered
//
// Writes are atomic: the safetensors writer writes `<file>.tmp`, fsyncs it and renames it, and
// SaveCheckpoint then fsyncs the directory, so a crash leaves either the old set of checkpoints or the
// old set plus a complete new one, never a half-written `step_*.safetensors`.
//
// Corruption: because of the above, a newest checkpoint that does not read is not an interrupted write
// but real damage (disk, a user's edit, a copy cut short). LoadLatestCheckpoint therefore does NOT fall
// back to an older checkpoint by default: it fails with DataLoss naming the bad file, the error, and the
// newest older checkpoint that was checked to read (to move the damaged file away and resume from it).
// A library caller may set `LoadCheckpointOptions::fall_back_on_corrupt` to skip unreadable files
// (listed in LoadedCheckpoint::skipped); the runner does not. A name that leads nowhere (a dangling
// symlink) is skipped always: it holds no data to lose. A checkpoint that reads but does not match
// `like` (a different model) is never skipped: that is a configuration error.
//
// Integrity: safetensors has no checksum of its own, and its structural checks cannot see flipped data
// bytes, an edited step or data key, or two same-shape tensors' regions swapped in the header. The digest
// sees all of these, and a file without one is damaged (DataLoss): every checkpoint the project wrote has
// one. Checkpoints written before issue 51 carry only "content_fnv1a64" (their tensor bytes in file order);
// they still load with that checked, so that a run interrupted across the upgrade resumes instead of
// starting over, and the run's next save writes the full digest. (Neither digest is a signature: it
// catches damage and careless edits, not someone who recomputes it.)
#ifndef MIMETIC_TRAIN_CHECKPOINT_H_
#define MIMETIC_TRAIN_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/core/key.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/train/train_step.h"

namespace mimetic::train {

// The metadata key of the digest, and the digest (16 hex digits) of a checkpoint holding `tensors`
// (host tensors, all of them: parameters and moments) and `metadata` (everything but the digest itself).
// Exposed for tests that plant an edited state in a checkpoint and must sign it as a run would.
inline constexpr char kCheckpointDigestKey[] = "digest_fnv1a64";
std::string CheckpointDigest(const core::ParamTree& tensors,
                             const std::map<std::string, std::string>& metadata);

// "step_00001000.safetensors" for step 1000 (more digits past 99,999,999).
std::string CheckpointFileName(int64_t step);

// Writes `dir/CheckpointFileName(state.step)` (creating `dir` and its parents), replacing a file of the
// same step. `state.m` and `state.v` must have the structure of `state.params`; no parameter path may
// start with "opt/", and `extra_metadata` may not use the keys "format", "step", "data_key" or either
// digest's (InvalidArgument). When `keep_last` > 0, the oldest checkpoints beyond the newest `keep_last` are
// deleted after the new one is safely written; 0 keeps every checkpoint.
absl::Status SaveCheckpoint(const std::string& dir, const TrainState& state, core::Key data_key,
                            const std::map<std::string, std::string>& extra_metadata, int keep_last = 0);

struct CheckpointInfo {
  int64_t step = 0;
  std::string path;
};
// The checkpoints in `dir`, oldest first (ordered by step, not by file time). Files that do not match
// step_<digits>.safetensors (such as a leftover ".tmp") are ignored. A missing `dir` gives an empty list.
absl::StatusOr<std::vector<CheckpointInfo>> ListCheckpoints(const std::string& dir);

struct LoadedCheckpoint {
  TrainState state;  // CPU tensors, in the path order of `like`
  core::Key data_key = core::Key::FromSeed(0);
  std::map<std::string, std::string> metadata;  // extra_metadata as saved
  std::string path;                             // the file read
  std::vector<std::string> skipped;             // "path: error" of newer files skipped as unreadable
};

struct LoadCheckpointOptions {
  bool fall_back_on_corrupt = false;  // see the header comment
};

// Reads one checkpoint file and checks it against `like`: every path of `like` must be present as a
// parameter and as both moments with the same shape and dtype, and the file may hold nothing else.
// A mismatch is InvalidArgument naming the path and both shapes; an unreadable or malformed file is the
// reader's error (DataLoss for a damaged file), prefixed with the file name. A tensor that holds a NaN or
// an infinity is DataLoss naming it: a run never saves a non-finite state, so such a file is damaged.
absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(const std::string& path, const core::ParamTree& like);

// LoadCheckpoint of the highest-step checkpoint in `dir`; NotFound when `dir` holds none.
absl::StatusOr<LoadedCheckpoint> LoadLatestCheckpoint(const std::string& dir, const core::ParamTree& like,
                                                      const LoadCheckpointOptions& options = {});

}  // namespace mimetic::train

#endif  // MIMETIC_TRAIN_CHECKPOINT_H_
