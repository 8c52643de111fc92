#include "mimetic/init/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "nlohmann/json.hpp"

// Safetensors stores little-endian bytes; tensors are copied to and from storage as they are.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes a little-endian host");

namespace mimetic::init {
namespace {

using core::DType;
using core::ParamTree;
using core::Shape;
using core::Tensor;
using Json = nlohmann::ordered_json;  // keeps the header's key order (tensor order on ties)

constexpr char kMetadataKey[] = "__metadata__";
// The safetensors library's own bound; a larger "header length" means a corrupt or foreign file.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;
// A real header nests 3 deep (object, entry, shape). The bound keeps a hostile one from driving the
// recursive parts of the JSON library (destruction, printing) past the stack.
constexpr int kMaxHeaderDepth = 64;
// Longest piece of an untrusted value quoted in an error message.
constexpr size_t kMaxQuotedChars = 80;

// Dtypes in a file: the three mimetic has, plus the half-precision ones read as f32.
enum class FileDType { kF32, kF64, kI32, kF16, kBF16 };

bool ParseFileDType(const std::string& name, FileDType* dtype) {
  static const std::pair<const char*, FileDType> kNames[] = {
      {"F32", FileDType::kF32}, {"F64", FileDType::kF64},   {"I32", FileDType::kI32},
      {"F16", FileDType::kF16}, {"BF16", FileDType::kBF16},
  };
  for (const auto& [n, d] : kNames) {
    if (name == n) {
      *dtype = d;
      return true;
    }
  }
  return false;
}

size_t FileDTypeSize(FileDType dtype) {
  switch (dtype) {
    case FileDType::kF64:
      return 8;
    case FileDType::kF16:
    case FileDType::kBF16:
      return 2;
    default:
      return 4;
  }
}

DType TreeDType(FileDType dtype) {
  switch (dtype) {
    case FileDType::kF64:
      return DType::kF64;
    case FileDType::kI32:
      return DType::kI32;
    default:
      return DType::kF32;
  }
}

const char* FileDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return "F64";
    case DType::kI32:
      return "I32";
    default:
      return "F32";
  }
}

using core::ErrnoError;
using Fd = core::ScopedFd;

// Reads exactly `bytes` at `offset`; a short read means the file changed under us.
absl::Status ReadAt(int fd, const std::string& path, uint64_t offset, void* dst, size_t bytes) {
  char* out = static_cast<char*>(dst);
  while (bytes > 0) {
    ssize_t n = ::pread(fd, out, bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("reading '", path, "' at byte ", offset));
    }
    if (n == 0) {
      return absl::DataLossError(absl::StrCat("'", path, "' ended at byte ", offset, " while reading ", bytes,
                                              " more bytes (was it truncated while being read?)"));
    }
    out += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Whether `text` (JSON) nests arrays and objects deeper than kMaxHeaderDepth; brackets inside strings do
// not count. Checked before parsing so that no deep value is ever built.
bool NestedTooDeep(absl::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxHeaderDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// A bounded description of an untrusted value for an error message: a scalar as written (cut to
// kMaxQuotedChars), a container by its type and size, never printed whole.
std::string Describe(const Json& value) {
  if (value.is_array()) return absl::StrCat("an array of ", value.size(), " elements");
  if (value.is_object()) return absl::StrCat("an object of ", value.size(), " keys");
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kMaxQuotedChars) text = absl::StrCat(text.substr(0, kMaxQuotedChars), "...");
  return text;
}

// One tensor as the header describes it.
struct Entry {
  std::string name;
  FileDType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;
  size_t header_index = 0;
};

std::string OffsetsString(const Entry& e) { return absl::StrCat("[", e.begin, ", ", e.end, "]"); }

// Parses and checks one header entry (everything that does not need the other entries).
absl::StatusOr<Entry> ParseEntry(const std::string& where, const std::string& name, const Json& value,
                                 uint64_t data_bytes) {
  auto bad = [&](const std::string& msg) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": tensor '", name, "': ", msg));
  };
  if (!value.is_object()) return bad(absl::StrCat("expected an object, found ", Describe(value)));
  Entry e;
  e.name = name;
  auto dtype_it = value.find("dtype");
  if (dtype_it == value.end() || !dtype_it->is_string()) {
    return bad("expected a string \"dtype\"");
  }
  const std::string dtype_name = dtype_it->get<std::string>();
  if (!ParseFileDType(dtype_name, &e.dtype)) {
    return bad(
        absl::StrCat("unsupported dtype \"", dtype_name, "\"; expected one of F32, F64, I32, F16, BF16"));
  }
  auto shape_it = value.find("shape");
  if (shape_it == value.end() || !shape_it->is_array()) return bad("expected an array \"shape\"");
  // Element count and byte size, guarding against overflow from absurd dimensions.
  uint64_t bytes = FileDTypeSize(e.dtype);
  bool overflow = false;
  for (const Json& d : *shape_it) {
    if (!d.is_number_unsigned()) {
      return bad(absl::StrCat("shape entry ", Describe(d), ": expected non-negative integer sizes"));
    }
    const uint64_t size = d.get<uint64_t>();
    if (size > static_cast<uint64_t>(INT64_MAX)) overflow = true;
    e.shape.push_back(static_cast<int64_t>(size));
    overflow = overflow || __builtin_mul_overflow(bytes, size, &bytes);
  }
  auto offsets_it = value.find("data_offsets");
  if (offsets_it == value.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
      !(*offsets_it)[0].is_number_unsigned() || !(*offsets_it)[1].is_number_unsigned()) {
    return bad("expected \"data_offsets\": [begin, end] with non-negative integers");
  }
  e.begin = (*offsets_it)[0].get<uint64_t>();
  e.end = (*offsets_it)[1].get<uint64_t>();
  if (e.begin > e.end) {
    return bad(absl::StrCat("data_offsets ", OffsetsString(e), ": expected begin <= end"));
  }
  const std::string shape_str = absl::StrCat(dtype_name, core::ShapeString(e.shape));
  if (overflow || e.end - e.begin != bytes) {
    return bad(absl::StrCat("data_offsets ", OffsetsString(e), " span ", e.end - e.begin, " bytes but ",
                            shape_str, " needs ",
                            overflow ? std::string("more than 2^64") : absl::StrCat(bytes)));
  }
  if (e.end > data_bytes) {
    return bad(absl::StrCat("data_offsets ", OffsetsString(e), " run past the data: expected end <= ",
                            data_bytes, " (the bytes after the header), found ", e.end));
  }
  return e;
}

absl::Status ParseMetadata(const std::string& where, const Json& value,
                           std::map<std::string, std::string>* metadata) {
  if (!value.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"__metadata__\" must be an object of strings, found ", Describe(value)));
  }
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": \"__metadata__\" value for \"", key,
                                                     "\": expected a string, found ", Describe(v)));
    }
    if (metadata != nullptr) (*metadata)[key] = v.get<std::string>();
  }
  return absl::OkStatus();
}

// The regions, in data order, must tile the data exactly: no overlap, no gap, nothing after the last, as
// the reference reader requires (its validate()). A header length a few bytes short still parses (the
// padding is spaces) but starts the data early, shifting every tensor; only the bytes left over show it.
absl::Status CheckTiling(const std::string& where, const std::vector<Entry>& sorted, uint64_t data_bytes) {
  uint64_t expected = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const Entry& cur = sorted[i];
    const std::string after =
        i == 0 ? "the start of the data"
               : absl::StrCat("tensor '", sorted[i - 1].name, "' ", OffsetsString(sorted[i - 1]));
    if (cur.begin < expected) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": tensor '", cur.name, "': data_offsets ",
                                                     OffsetsString(cur), " overlap ", after,
                                                     ": expected begin >= ", expected));
    }
    if (cur.begin > expected) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": tensor '", cur.name, "': data_offsets ", OffsetsString(cur),
                       " leave a gap of ", cur.begin - expected, " bytes after ", after,
                       ": expected begin == ", expected, " (the tensors must cover the data exactly)"));
    }
    expected = cur.end;
  }
  if (expected != data_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", data_bytes - expected, " bytes follow the ",
        sorted.empty()
            ? std::string("header, which lists no tensor")
            : absl::StrCat("last tensor '", sorted.back().name, "' ", OffsetsString(sorted.back())),
        ": expected the data to end at byte ", expected,
        " (the tensors must cover the data exactly; is the header length wrong?)"));
  }
  return absl::OkStatus();
}

// Reads one entry's bytes into a new CPU tensor, converting half precision to f32.
absl::StatusOr<Tensor> ReadTensor(int fd, const std::string& path, uint64_t data_start, const Entry& e) {
  const core::TensorMeta meta{e.shape, TreeDType(e.dtype), core::Device::kCpu};
  ASSIGN_OR_RETURN(Tensor t, Tensor::Uninitialized(meta));
  const uint64_t offset = data_start + e.begin;
  const size_t bytes = static_cast<size_t>(e.end - e.begin);
  if (bytes == 0) return t;
  switch (e.dtype) {
    case FileDType::kF32:
      RETURN_IF_ERROR(ReadAt(fd, path, offset, t.mutable_data<float>(), bytes));
      break;
    case FileDType::kF64:
      RETURN_IF_ERROR(ReadAt(fd, path, offset, t.mutable_data<double>(), bytes));
      break;
    case FileDType::kI32:
      RETURN_IF_ERROR(ReadAt(fd, path, offset, t.mutable_data<int32_t>(), bytes));
      break;
    case FileDType::kF16:
    case FileDType::kBF16: {
      std::vector<uint16_t> half(bytes / 2);
      RETURN_IF_ERROR(ReadAt(fd, path, offset, half.data(), bytes));
      float* out = t.mutable_data<float>();
      const bool is_f16 = e.dtype == FileDType::kF16;
      for (size_t i = 0; i < half.size(); ++i)
        out[i] = is_f16 ? HalfToFloat(half[i]) : BFloat16ToFloat(half[i]);
      break;
    }
  }
  return t;
}

}  // namespace

float BFloat16ToFloat(uint16_t bits) {
  // bfloat16 is the top half of an f32.
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}

float HalfToFloat(uint16_t bits) {
  // binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  uint32_t word;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, a normal f32 (exact).
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    std::memcpy(&word, &magnitude, sizeof(word));
    word |= sign;
  } else if (exponent == 0x1f) {
    word = sign | 0x7f800000u | (mantissa << 13);  // inf, or NaN keeping its payload
  } else {
    word = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}

absl::Status WriteSafetensors(const std::string& path, const ParamTree& tree,
                              const std::map<std::string, std::string>& metadata) {
  SafetensorsWriteOptions options;
  options.metadata = metadata;
  return WriteSafetensorsWithOptions(path, tree, options);
}

absl::Status WriteSafetensorsWithOptions(const std::string& path, const ParamTree& tree,
                                         const SafetensorsWriteOptions& options) {
  const std::string where = absl::StrCat("writing safetensors '", path, "'");
  // Everything that can fail short of I/O happens before the temporary file exists.
  std::vector<Tensor> host;
  host.reserve(tree.size());
  Json header = Json::object();
  if (!options.metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [key, value] : options.metadata) meta[key] = value;
    header[kMetadataKey] = std::move(meta);
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (size_t i = 0; i < tree.size(); ++i) {
    const std::string& tree_path = tree.Paths()[i];
    const Tensor& leaf = tree.Leaves()[i];
    if (!leaf.ok()) {
      return absl::Status(leaf.status().code(), absl::StrCat(where, ": leaf '", tree_path,
                                                             "' holds an error: ", leaf.status().message()));
    }
    ASSIGN_OR_RETURN(Tensor cpu, leaf.ToDevice(core::Device::kCpu));
    const std::string name = options.tensor_name ? options.tensor_name(tree_path) : tree_path;
    if (name.empty() || name == kMetadataKey || !names.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": leaf '", tree_path, "' would be stored as '",
                                                     name, "', which is empty, reserved or already used"));
    }
    Json entry = Json::object();
    entry["dtype"] = FileDTypeName(cpu.dtype());
    entry["shape"] = cpu.shape();
    entry["data_offsets"] = Json::array({offset, offset + cpu.bytes()});
    header[name] = std::move(entry);
    offset += cpu.bytes();
    host.push_back(std::move(cpu));
  }
  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const Json::exception& e) {  // names or metadata that are not UTF-8
    return absl::InvalidArgumentError(absl::StrCat(where, ": header is not valid JSON text: ", e.what()));
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  const uint64_t header_len = header_text.size();
  unsigned char len_bytes[8];
  for (int b = 0; b < 8; ++b) len_bytes[b] = static_cast<unsigned char>(header_len >> (8 * b));

  std::vector<absl::string_view> chunks = {
      absl::string_view(reinterpret_cast<const char*>(len_bytes), sizeof(len_bytes)), header_text};
  for (const Tensor& t : host) {
    if (t.bytes() > 0) chunks.emplace_back(static_cast<const char*>(t.storage()->data()), t.bytes());
  }
  if (absl::Status s = core::WriteFileAtomically(path, chunks); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<ParamTree> ReadSafetensors(const std::string& path,
                                          std::map<std::string, std::string>* metadata) {
  const std::string where = absl::StrCat("safetensors '", path, "'");
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(errno, absl::StrCat("cannot open ", where));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("cannot stat ", where));
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(where, " is not a regular file"));
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  if (file_bytes < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": file too short: expected at least 8 bytes (the header ", "length), found ", file_bytes));
  }
  unsigned char len_bytes[8];
  RETURN_IF_ERROR(ReadAt(fd.get(), path, 0, len_bytes, sizeof(len_bytes)));
  uint64_t header_len = 0;
  for (int b = 7; b >= 0; --b) header_len = (header_len << 8) | len_bytes[b];
  if (header_len > file_bytes - 8 || header_len > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": header length ", header_len, " beyond the file: expected <= ",
                     std::min(file_bytes - 8, kMaxHeaderBytes), " (the bytes after the 8-byte length)"));
  }
  std::string header_text(static_cast<size_t>(header_len), '\0');
  RETURN_IF_ERROR(ReadAt(fd.get(), path, 8, header_text.data(), header_text.size()));
  if (NestedTooDeep(header_text)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": header JSON is nested deeper than ",
                                                   kMaxHeaderDepth, " levels (a real header has 3)"));
  }
  Json header;
  try {
    header = Json::parse(header_text);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": header is not valid JSON: ", e.what()));
  }
  if (!header.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": header must be a JSON object, found ", header.type_name()));
  }

  const uint64_t data_start = 8 + header_len;
  const uint64_t data_bytes = file_bytes - data_start;
  std::vector<Entry> entries;
  if (metadata != nullptr) metadata->clear();
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey) {
      RETURN_IF_ERROR(ParseMetadata(where, value, metadata));
      continue;
    }
    ASSIGN_OR_RETURN(Entry e, ParseEntry(where, name, value, data_bytes));
    e.header_index = entries.size();
    entries.push_back(std::move(e));
  }
  // Tree order is data order; zero-size tensors sharing an offset keep the header's order.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end, a.header_index) < std::tie(b.begin, b.end, b.header_index);
  });
  RETURN_IF_ERROR(CheckTiling(where, entries, data_bytes));

  std::vector<std::pair<std::string, Tensor>> pairs;
  pairs.reserve(entries.size());
  for (const Entry& e : entries) {
    ASSIGN_OR_RETURN(Tensor t, ReadTensor(fd.get(), path, data_start, e));
    pairs.emplace_back(e.name, std::move(t));
  }
  absl::StatusOr<ParamTree> tree = ParamTree::FromPairs(std::move(pairs));
  if (!tree.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": tensor names are not valid tree paths: ", tree.status().message()));
  }
  return tree;
}

}  // namespace mimetic::init
