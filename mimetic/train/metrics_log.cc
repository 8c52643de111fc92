#include "mimetic/train/metrics_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/train/tensorboard_event.pb.h"
#include "nlohmann/json.hpp"

namespace mimetic::train {
namespace {

constexpr char kJsonlName[] = "metrics.jsonl";
constexpr char kFileVersion[] = "brain.Event:2";

// The 256-entry table of the reflected CRC-32C: entry i is the CRC of the single byte i.
std::array<uint32_t, 256> MakeCrc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    table[i] = crc;
  }
  return table;
}

void PutLittleEndian(std::string* out, uint64_t value, int bytes) {
  for (int b = 0; b < bytes; ++b) out->push_back(static_cast<char>(value >> (8 * b)));
}

uint64_t GetLittleEndian(absl::string_view bytes) {
  uint64_t value = 0;
  for (size_t b = bytes.size(); b-- > 0;) value = (value << 8) | static_cast<unsigned char>(bytes[b]);
  return value;
}

using core::ErrnoError;
using core::MakeDirs;

// Appends `bytes` to `fd` whole or not at all: a write cut short (a full disk) is cut back off, so that the
// file still ends with its last whole record and a later append (a resumed run) starts a record of its own
// instead of finishing the torn one.
absl::Status AppendWhole(int fd, const std::string& path, absl::string_view bytes) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoError(errno, absl::StrCat("appending to '", path, "'"));
  absl::Status s = core::WriteAll(fd, path, bytes.data(), bytes.size());
  if (!s.ok() && ::ftruncate(fd, st.st_size) != 0) {
    return absl::Status(
        s.code(),
        absl::StrCat(s.message(), "; cutting the partial record off failed too: ", std::strerror(errno)));
  }
  return s;
}

// The length of `fd`'s bytes up to and including its last newline (0 when it has none).
absl::StatusOr<off_t> EndOfLastLine(int fd, const std::string& path, off_t size) {
  char buffer[4096];
  for (off_t end = size; end > 0;) {
    const off_t start = std::max<off_t>(0, end - static_cast<off_t>(sizeof(buffer)));
    const ssize_t n = ::pread(fd, buffer, static_cast<size_t>(end - start), start);
    if (n != end - start) return ErrnoError(n < 0 ? errno : EIO, absl::StrCat("reading '", path, "'"));
    for (ssize_t i = n; i-- > 0;) {
      if (buffer[i] == '\n') return start + i + 1;
    }
    end = start;
  }
  return 0;
}

// Cuts a torn last line (what a full disk or a kill mid-write leaves) off the JSON lines file `fd`, so
// that the next line appended starts a line of its own.
absl::Status CutTornLine(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoError(errno, absl::StrCat("reading '", path, "'"));
  ASSIGN_OR_RETURN(const off_t keep, EndOfLastLine(fd, path, st.st_size));
  if (keep < st.st_size && ::ftruncate(fd, keep) != 0) {
    return ErrnoError(errno, absl::StrCat("cutting the torn last line off '", path, "'"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRunName(const std::string& run) {
  if (run.empty()) return absl::InvalidArgumentError("metrics run name is empty");
  for (absl::string_view segment : absl::StrSplit(run, '/')) {
    if (segment.empty() || segment == "." || segment == ".." ||
        segment.find('\0') != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metrics run name \"", run,
          "\" must be a relative '/'-separated name without empty, \".\" or \"..\" segments (e.g. "
          "\"mimetic/seed1\")"));
    }
  }
  return absl::OkStatus();
}

std::string HostName() {
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "localhost";
  return host;
}

}  // namespace

uint32_t Crc32c(absl::string_view data) {
  static const std::array<uint32_t, 256> table = MakeCrc32cTable();
  uint32_t crc = 0xFFFFFFFFu;
  for (char c : data) crc = table[(crc ^ static_cast<unsigned char>(c)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

std::string FrameRecord(absl::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  PutLittleEndian(&out, data.size(), 8);
  PutLittleEndian(&out, MaskCrc32c(Crc32c(out)), 4);
  out.append(data.data(), data.size());
  PutLittleEndian(&out, MaskCrc32c(Crc32c(data)), 4);
  return out;
}

absl::Status ReadRecord(absl::string_view file_bytes, size_t* offset, std::string* data) {
  const size_t start = *offset;
  if (start == file_bytes.size()) return absl::OutOfRangeError("end of records");
  if (file_bytes.size() - start < 12) {
    return absl::DataLossError(absl::StrCat("record at byte ", start, ": truncated header (",
                                            file_bytes.size() - start, " of 12 bytes)"));
  }
  const absl::string_view len_bytes = file_bytes.substr(start, 8);
  const uint32_t len_crc = static_cast<uint32_t>(GetLittleEndian(file_bytes.substr(start + 8, 4)));
  if (MaskCrc32c(Crc32c(len_bytes)) != len_crc) {
    return absl::DataLossError(absl::StrCat("record at byte ", start, ": length CRC mismatch"));
  }
  const uint64_t length = GetLittleEndian(len_bytes);
  if (length > file_bytes.size() - start - 12 || file_bytes.size() - start - 12 - length < 4) {
    return absl::DataLossError(absl::StrCat("record at byte ", start, ": truncated data (length ", length,
                                            ", ", file_bytes.size() - start - 12, " bytes left)"));
  }
  const absl::string_view payload = file_bytes.substr(start + 12, length);
  const uint32_t data_crc = static_cast<uint32_t>(GetLittleEndian(file_bytes.substr(start + 12 + length, 4)));
  if (MaskCrc32c(Crc32c(payload)) != data_crc) {
    return absl::DataLossError(absl::StrCat("record at byte ", start, ": data CRC mismatch"));
  }
  data->assign(payload.data(), payload.size());
  *offset = start + 12 + length + 4;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CutTornRecords(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string bytes, core::ReadTextFile(path));
  size_t offset = 0;
  std::string data;
  absl::Status s;
  while ((s = ReadRecord(bytes, &offset, &data)).ok()) {
  }
  // A record that does not read ends what a reader can use of the file (it cannot find the next record's
  // start), so everything from it on is cut: a torn tail, or zeros a crash left past the last write.
  if (absl::IsOutOfRange(s)) return 0;
  if (::truncate(path.c_str(), static_cast<off_t>(offset)) != 0) {
    return ErrnoError(errno, absl::StrCat("cutting the torn records off '", path, "' at byte ", offset));
  }
  return static_cast<int64_t>(bytes.size() - offset);
}

struct MetricsLog::State {
  // Files are written with plain write(2), not stdio: a failed write must leave no bytes in a buffer that
  // a later flush would append after the record was cut back.
  struct EventFile {
    std::string path;
    int fd = -1;
  };

  State(std::string dir, int jsonl_fd) : run_dir(std::move(dir)), jsonl(jsonl_fd) {}
  ~State() {
    if (jsonl >= 0) ::close(jsonl);
    for (auto& [run, events] : event_files) {
      if (events.fd >= 0) ::close(events.fd);
    }
  }
  std::string JsonlPath() const { return absl::StrCat(run_dir, "/", kJsonlName); }
  // The open event file of `run`, created (with its file_version record) on first use.
  absl::StatusOr<EventFile*> EventFileFor(const std::string& run, double wall_time)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  const std::string run_dir;
  mutable absl::Mutex mu;
  int jsonl ABSL_GUARDED_BY(mu);
  std::map<std::string, EventFile> event_files ABSL_GUARDED_BY(mu);
};

absl::StatusOr<MetricsLog> MetricsLog::Open(const std::string& run_dir) {
  if (run_dir.empty()) return absl::InvalidArgumentError("metrics log run directory is empty");
  if (absl::Status s = MakeDirs(run_dir); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("cannot open the metrics log in '", run_dir, "': ", s.message()));
  }
  const std::string path = absl::StrCat(run_dir, "/", kJsonlName);
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot open metrics log '", path, "' for appending"));
  auto state = std::make_unique<State>(run_dir, fd);
  // A resumed run appends: a line torn by the previous process must not swallow its first one.
  RETURN_IF_ERROR(CutTornLine(fd, path));
  return MetricsLog(std::move(state));
}

MetricsLog::MetricsLog(std::unique_ptr<State> state) : state_(std::move(state)) {}
MetricsLog::MetricsLog(MetricsLog&&) noexcept = default;
MetricsLog& MetricsLog::operator=(MetricsLog&&) noexcept = default;
MetricsLog::~MetricsLog() = default;

const std::string& MetricsLog::run_dir() const { return state_->run_dir; }

std::string MetricsLog::jsonl_path() const { return state_->JsonlPath(); }

std::string MetricsLog::EventFilePath(const std::string& run) const {
  absl::MutexLock lock(&state_->mu);
  auto it = state_->event_files.find(run);
  return it == state_->event_files.end() ? "" : it->second.path;
}

absl::StatusOr<MetricsLog::State::EventFile*> MetricsLog::State::EventFileFor(const std::string& run,
                                                                              double wall_time) {
  auto it = event_files.find(run);
  if (it != event_files.end()) return &it->second;
  const std::string dir = absl::StrCat(run_dir, "/tb/", run);
  RETURN_IF_ERROR(MakeDirs(dir));
  EventFile events;
  events.path = absl::StrCat(dir, "/events.out.tfevents.", static_cast<int64_t>(wall_time), ".", HostName());
  // Append, not truncate: a second MetricsLog on this run within the same second continues the file
  // (a repeated file_version record is harmless to readers) instead of erasing it, after cutting off a
  // record the earlier writer left torn.
  if (core::FileExists(events.path)) RETURN_IF_ERROR(CutTornRecords(events.path).status());
  events.fd = ::open(events.path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (events.fd < 0) return ErrnoError(errno, absl::StrCat("cannot create event file '", events.path, "'"));
  tb::Event version;
  version.set_wall_time(wall_time);
  version.set_file_version(kFileVersion);
  absl::Status s = AppendWhole(events.fd, events.path, FrameRecord(version.SerializeAsString()));
  if (!s.ok()) {
    ::close(events.fd);
    return s;
  }
  return &event_files.emplace(run, std::move(events)).first->second;
}

absl::Status MetricsLog::Log(int64_t step, const std::string& run,
                             const std::map<std::string, double>& scalars) {
  RETURN_IF_ERROR(ValidateRunName(run));
  for (const char* reserved : {"run", "step", "wall_time"}) {
    if (scalars.count(reserved) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("scalar name \"", reserved, "\" is reserved for the metrics log's own field"));
    }
  }
  const double wall_time = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());

  // One line, keys in a fixed order: run, step, wall_time, then the scalars by name.
  nlohmann::ordered_json line;
  line["run"] = run;
  line["step"] = step;
  line["wall_time"] = wall_time;
  for (const auto& [name, value] : scalars) {
    if (std::isfinite(value)) {
      line[name] = value;
    } else {
      line[name] = nullptr;  // JSON has no NaN or infinity
    }
  }
  std::string text;
  try {
    text = line.dump() + "\n";
  } catch (const nlohmann::json::exception& e) {  // a name that is not UTF-8
    return absl::InvalidArgumentError(
        absl::StrCat("metrics for run \"", run, "\" are not valid JSON: ", e.what()));
  }

  tb::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  tb::Summary* summary = event.mutable_summary();
  for (const auto& [name, value] : scalars) {
    tb::Summary::Value* v = summary->add_value();
    v->set_tag(name);
    v->set_simple_value(static_cast<float>(value));
  }
  const std::string record = FrameRecord(event.SerializeAsString());

  absl::MutexLock lock(&state_->mu);
  RETURN_IF_ERROR(AppendWhole(state_->jsonl, state_->JsonlPath(), text));
  ASSIGN_OR_RETURN(State::EventFile * events, state_->EventFileFor(run, wall_time));
  return AppendWhole(events->fd, events->path, record);
}

}  // namespace mimetic::train
