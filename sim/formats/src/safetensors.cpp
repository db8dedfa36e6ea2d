// safetensors reader/writer (format and errors in safetensors.hpp).
#include "ctmc/sim/formats/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "ctmc/sim/formats/atomic_write.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/json_input.hpp"

namespace ctmc::sim {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw InputError(path + ": " + what); }

constexpr const char* kReadDtypes = "F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8 and BOOL are read";

// How the reader takes a dtype: bytes per element (0: unknown to this
// reader, so its byte count cannot be checked) and whether its values are
// read (F64, F32, the half formats PyTorch writes for .half() and bfloat16
// models, the integers and BOOL) or the tensor is only listed as unusable
// (the 8-bit floats, complex, and any dtype this reader does not know).
enum class Decode { None, Float, Half, BFloat16, Signed, Unsigned, Bool };
struct DtypeInfo {
  std::size_t size = 0;
  Decode decode = Decode::None;
};

DtypeInfo dtype_info(const std::string& dtype) {
  using D = Decode;
  static const std::map<std::string, DtypeInfo> kDtypes = {
      {"F64", {8, D::Float}},       {"F32", {4, D::Float}},       {"F16", {2, D::Half}},
      {"BF16", {2, D::BFloat16}},   {"I64", {8, D::Signed}},      {"I32", {4, D::Signed}},
      {"I16", {2, D::Signed}},      {"I8", {1, D::Signed}},       {"U64", {8, D::Unsigned}},
      {"U32", {4, D::Unsigned}},    {"U16", {2, D::Unsigned}},    {"U8", {1, D::Unsigned}},
      {"BOOL", {1, D::Bool}},       {"F8_E4M3", {1, D::None}},    {"F8_E5M2", {1, D::None}},
      {"F8_E8M0", {1, D::None}},    {"C64", {8, D::None}}};
  const auto it = kDtypes.find(dtype);
  return it == kDtypes.end() ? DtypeInfo{} : it->second;
}

// Writing supports F32, F64 and I64 (BatchNorm's num_batches_tracked, a
// state_dict's int64 counter).
std::size_t written_dtype_size(const std::string& path, const std::string& name, const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "F64" || dtype == "I64") return 8;
  fail(path, "tensor " + quote_excerpt(name) + " has dtype " + quote_excerpt(dtype) + " (only F32, F64 and I64 are written)");
}

// IEEE binary16 -> double, exactly: sign, 5 exponent bits (bias 15), 10
// fraction bits; exponent 0 is subnormal (fraction x 2^-24), 31 is inf/NaN.
double half_to_double(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int fraction = h & 0x3ff;
  double v;
  if (exponent == 0) v = std::ldexp(fraction, -24);
  else if (exponent == 31) v = fraction == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  else v = std::ldexp(fraction + 1024, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

// bfloat16 is the upper half of an IEEE binary32: exact as a float.
double bfloat16_to_double(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

// The element of a read dtype at p. Integers are exact up to 2^53 in
// magnitude and rounded to the nearest double beyond (class labels and
// indices are far below).
double element(const DtypeInfo& t, const std::uint8_t* p) {
  std::uint64_t u = 0;
  for (std::size_t k = 0; k < t.size; ++k) u |= static_cast<std::uint64_t>(p[k]) << (8 * k);
  switch (t.decode) {
    case Decode::Float:
      if (t.size == 4) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
      } else {
        double v;
        std::memcpy(&v, p, 8);
        return v;
      }
    case Decode::Half: return half_to_double(static_cast<std::uint16_t>(u));
    case Decode::BFloat16: return bfloat16_to_double(static_cast<std::uint16_t>(u));
    case Decode::Unsigned: return static_cast<double>(u);
    case Decode::Bool: return u != 0;
    case Decode::Signed: {
      const int shift = static_cast<int>(64 - 8 * t.size);  // sign-extend from the element's top bit
      return static_cast<double>(static_cast<std::int64_t>(u << shift) >> shift);
    }
    case Decode::None: break;
  }
  return std::numeric_limits<double>::quiet_NaN();  // not reached: only read dtypes are decoded
}

}  // namespace

std::int64_t Tensor::numel() const {
  // Checked: a negative dimension or a product past int64 is -1, which no
  // values.size() matches (signed overflow would be undefined behaviour).
  std::int64_t n = 1;
  for (auto d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

namespace {
SafetensorsFile read_tensors(const std::string& path, const std::set<std::string>* wanted);
}

SafetensorsFile read_safetensors(const std::string& path) { return read_tensors(path, nullptr); }
SafetensorsFile read_safetensors(const std::string& path, const std::set<std::string>& wanted) { return read_tensors(path, &wanted); }

namespace {
SafetensorsFile read_tensors(const std::string& path, const std::set<std::string>* wanted) {
  solvers::InputFile in(path, kSafetensorsKind.what);
  if (in.size() > kSafetensorsKind.max_bytes) solvers::refuse_too_large(path, kSafetensorsKind);
  std::uint8_t length[8];
  if (in.read(length, 8) < 8) fail(path, "truncated safetensors file (no 8-byte header length)");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | length[i];
  if (n > in.size() - 8)
    fail(path, "truncated safetensors file (header length " + std::to_string(n) + " exceeds the file)");
  if (n > kMaxSafetensorsHeaderBytes)
    fail(path, "header length " + std::to_string(n) + " is more than the " + std::to_string(kMaxSafetensorsHeaderBytes) +
                   " bytes the format allows");
  std::string header_text(static_cast<std::size_t>(n), '\0');
  if (in.read(header_text.data(), header_text.size()) < n)
    fail(path, "truncated safetensors file (header length " + std::to_string(n) + " exceeds the file)");
  // Strict: nesting capped, a duplicate tensor name or key refused (the last
  // one silently won).
  const nlohmann::json header = solvers::parse_json_strict<nlohmann::json>(header_text, path, nullptr, "safetensors header JSON");
  if (!header.is_object()) fail(path, "safetensors header is not a JSON object");
  // The data buffer: the rest of the file.
  const std::uint64_t want = in.size() - 8 - n;
  std::vector<std::uint8_t> data(static_cast<std::size_t>(want));
  data.resize(in.read(data.data(), data.size()));
  const std::uint8_t* buffer = data.data();
  const std::uint64_t buffer_size = data.size();

  SafetensorsFile f;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& [name, e] : header.items()) {
    if (name == "__metadata__") {
      if (!e.is_object()) fail(path, "__metadata__ is not an object");
      for (const auto& [k, v] : e.items()) {
        if (!v.is_string()) fail(path, "__metadata__ value " + quote_excerpt(k) + " is not a string");
        f.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets") || !e["dtype"].is_string() ||
        !e["shape"].is_array() || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
      fail(path, "tensor " + quote_excerpt(name) + " needs dtype (string), shape (array) and data_offsets ([begin, end])");
    if (wanted && !wanted->count(name)) {
      const auto& off = e["data_offsets"];
      if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned() || off[0].get<std::uint64_t>() > off[1].get<std::uint64_t>() ||
          off[1].get<std::uint64_t>() > buffer_size)
        fail(path, "tensor " + quote_excerpt(name) + " has data_offsets outside the data buffer");
      ranges.emplace_back(off[0].get<std::uint64_t>(), off[1].get<std::uint64_t>());
      continue;
    }
    Tensor t;
    t.dtype = e["dtype"].get<std::string>();
    const DtypeInfo info = dtype_info(t.dtype);
    // A dtype of unknown size still has its place in the buffer, checked
    // below; its elements count as bytes for the shape bound.
    const std::size_t esize = info.size ? info.size : 1;
    // Dimensions as uint64 (get<int64_t> turns 2^63 and above negative), each
    // bounded, and the element count bounded by what the buffer can hold
    // before it is multiplied further, so no product overflows.
    const std::uint64_t max_elems = buffer_size / esize;
    std::uint64_t elems = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned()) fail(path, "tensor " + quote_excerpt(name) + " has a shape entry that is not a non-negative integer");
      const std::uint64_t v = d.get<std::uint64_t>();
      if (v > (std::uint64_t(1) << 40)) fail(path, "tensor " + quote_excerpt(name) + " has an implausible dimension " + std::to_string(v));
      t.shape.push_back(static_cast<std::int64_t>(v));
      if (elems != 0 && v > max_elems / elems)
        fail(path, "tensor " + quote_excerpt(name) + " has a shape needing more than the " + std::to_string(buffer_size) + "-byte data buffer holds");
      elems *= v;
    }
    const auto& off = e["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) fail(path, "tensor " + quote_excerpt(name) + " has non-integer data_offsets");
    const std::uint64_t b = off[0].get<std::uint64_t>(), end = off[1].get<std::uint64_t>();
    if (b > end || end > buffer_size)
      fail(path, "tensor " + quote_excerpt(name) + " data_offsets [" + std::to_string(b) + ", " + std::to_string(end) + "] outside the " +
                     std::to_string(buffer_size) + "-byte data buffer (truncated file?)");
    const std::uint64_t need = elems * esize;  // <= buffer_size by the loop above
    if (info.size && end - b != need)
      fail(path, "tensor " + quote_excerpt(name) + " spans " + std::to_string(end - b) + " bytes but its shape and dtype need " + std::to_string(need));
    ranges.emplace_back(b, end);
    if (info.decode == Decode::None) {
      // Refused only where it is used (read_tensor_input, a manifest's layer).
      f.unusable.emplace(name, "has dtype " + quote_excerpt(t.dtype) + ", which is not read (" + kReadDtypes + ")");
      continue;
    }
    t.values.resize(static_cast<std::size_t>(elems));
    const std::uint8_t* p = buffer + b;
    for (std::size_t i = 0; i < t.values.size(); ++i, p += esize) t.values[i] = element(info, p);
    f.tensors.emplace(name, std::move(t));
  }
  // The format requires the tensors to tile the buffer exactly (no holes, no
  // overlap): check it, so a corrupted header cannot alias two tensors.
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t at = 0;
  for (const auto& [b, e] : ranges) {
    if (b != at) fail(path, b < at ? "tensors overlap in the data buffer" : "gap in the data buffer before offset " + std::to_string(b));
    at = e;
  }
  if (at != buffer_size) fail(path, std::to_string(buffer_size - at) + " unused bytes after the last tensor");
  return f;
}
}  // namespace

std::vector<std::uint8_t> encode_safetensors(const std::string& path, const SafetensorsFile& f) {
  nlohmann::json header = nlohmann::json::object();
  std::vector<std::uint8_t> data;
  for (const auto& [name, t] : f.tensors) {  // std::map: name order
    const std::size_t esize = written_dtype_size(path, name, t.dtype);
    if (static_cast<std::int64_t>(t.values.size()) != t.numel()) fail(path, "tensor " + quote_excerpt(name) + " values do not match its shape");
    const std::uint64_t b = data.size();
    data.resize(data.size() + t.values.size() * esize);
    std::uint8_t* p = data.data() + b;
    for (double v : t.values) {
      if (t.dtype == "I64") {
        // Whole numbers within int64 only: a cast of anything else is undefined.
        if (!(v == std::floor(v) && std::abs(v) < 0x1p63))
          fail(path, "tensor " + quote_excerpt(name) + " (I64) holds a value that is not a whole number in int64's range");
        const std::int64_t x = static_cast<std::int64_t>(v);
        std::memcpy(p, &x, 8);
      } else if (esize == 4) {
        const float x = static_cast<float>(v);
        std::memcpy(p, &x, 4);
      } else {
        std::memcpy(p, &v, 8);
      }
      p += esize;
    }
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {b, static_cast<std::uint64_t>(data.size())}}};
  }
  if (!f.metadata.empty()) header["__metadata__"] = f.metadata;
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  const std::uint64_t n = h.size();

  std::vector<std::uint8_t> out;
  out.reserve(8 + h.size() + data.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>((n >> (8 * i)) & 0xff));
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_safetensors(const std::string& path, const SafetensorsFile& f) { write_files_atomically({{path, encode_safetensors(path, f)}}); }

}  // namespace ctmc::sim
