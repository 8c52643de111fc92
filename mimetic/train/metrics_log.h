// MetricsLog: the metric log of a run directory, written twice over, as JSON lines for scripts and as
// TensorBoard event files for eyes.
//
//   ASSIGN_OR_RETURN(MetricsLog log, MetricsLog::Open("runs/copy"));
//   RETURN_IF_ERROR(log.Log(step, "mimetic/seed1", {{"loss", 0.25}, {"accuracy/len64", 0.9}}));
//
//   runs/copy/metrics.jsonl
//     {"run":"mimetic/seed1","step":100,"wall_time":1714000000.25,"accuracy/len64":0.9,"loss":0.25}
//   runs/copy/tb/mimetic/seed1/events.out.tfevents.1714000000.myhost
//     (`tensorboard --logdir runs/copy/tb` shows runs "mimetic/seed1", ... with tags "loss", ...)
//
// metrics.jsonl is opened in append mode, so a resumed run continues the same file (rows of steps
// that are logged again after a resume simply appear twice; readers keep the last). Each line is
// written whole or not at all: a write that fails (a full disk) is cut back off, and a torn last line
// that a crash left is cut off when the log is opened, so a crash loses at most the line being written
// and the file stays JSON lines. Event files are cut back the same way, to their last whole record.
// Non-finite values (a diverged loss) are written as JSON null, since JSON has no NaN; TensorBoard
// gets the float as is.
// pandas: pd.read_json("metrics.jsonl", lines=True).
//
// Event files use TensorFlow's TFRecord framing (see FrameRecord) of Event protos
// (tensorboard_event.proto): the first record of each file is Event{file_version: "brain.Event:2"},
// then one Event per Log call, holding a Summary with one simple_value per scalar. Each run gets one
// file per MetricsLog (a resumed run starts a new file; TensorBoard reads them all, in name order).
//
// Thread-safe: Log may be called from several threads (not while the log is being moved).
#ifndef MIMETIC_TRAIN_METRICS_LOG_H_
#define MIMETIC_TRAIN_METRICS_LOG_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mimetic::train {

// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78), as in iSCSI (RFC 3720) and
// TFRecord: Crc32c("123456789") == 0xE3069283. Table-driven, one byte at a time.
uint32_t Crc32c(absl::string_view data);
// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8, so that a CRC of data that itself
// contains CRCs is not trivially related to them.
uint32_t MaskCrc32c(uint32_t crc);
uint32_t UnmaskCrc32c(uint32_t masked);

// One TFRecord: uint64 length (little-endian), uint32 masked CRC of those 8 bytes, the data, uint32
// masked CRC of the data.
std::string FrameRecord(absl::string_view data);
// Reads the record at `*offset` of `file_bytes` into `*data` and advances `*offset`. OutOfRange at the
// clean end of the bytes; DataLoss naming the offset for a truncated record or a CRC mismatch.
absl::Status ReadRecord(absl::string_view file_bytes, size_t* offset, std::string* data);

// Cuts a file of records back to its last record that reads whole: what a write cut short (a full
// disk, a kill mid-write) leaves is a record's prefix, and records appended after it would be
// unreadable. Returns the number of bytes cut (0 for a whole file); an error names the file.
absl::StatusOr<int64_t> CutTornRecords(const std::string& path);

class MetricsLog {
 public:
  // Creates `run_dir` (and its parents) when missing and opens run_dir/metrics.jsonl for appending.
  // A directory that cannot be created or written is a Status naming the path and the reason.
  static absl::StatusOr<MetricsLog> Open(const std::string& run_dir);
  MetricsLog(MetricsLog&&) noexcept;
  MetricsLog& operator=(MetricsLog&&) noexcept;
  ~MetricsLog();  // closes the files

  // Appends one JSON line and one event to run_dir/tb/<run>/. `run` is a relative '/'-separated name
  // without empty, "." or ".." segments ("mimetic/seed1"); scalar names may not be "run", "step" or
  // "wall_time" (the JSON line's own keys). InvalidArgument for either; the errno's code when a write
  // fails.
  absl::Status Log(int64_t step, const std::string& run, const std::map<std::string, double>& scalars);

  const std::string& run_dir() const;
  std::string jsonl_path() const;
  // The event file of `run`, or "" before the first Log for it.
  std::string EventFilePath(const std::string& run) const;

 private:
  struct State;  // the files and their mutex, behind a pointer so that MetricsLog can move
  explicit MetricsLog(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace mimetic::train

#endif  // MIMETIC_TRAIN_METRICS_LOG_H_
