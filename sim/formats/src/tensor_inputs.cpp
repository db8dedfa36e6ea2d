#include "ctmc/sim/formats/tensor_inputs.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <cctype>
#include <limits>
#include <set>
#include <span>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/core/quote.hpp"

namespace ctmc::sim {
namespace {

// Test sets as tensors: MNIST's 10,000 x 784 float32 is 31 MB, CIFAR-10's
// 10,000 x 3072 float64 245 MB.
constexpr solvers::InputKind kNpyKind{".npy file", std::uint64_t(2) << 30, "a test set is a few hundred MB at most"};

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian machine");

struct NpyType {
  char kind;  // 'f', 'u', 'i', 'b'
  int size;   // bytes
};

// The value of an element of type t at p, exactly.
double element(const std::uint8_t* p, NpyType t) {
  switch (t.kind) {
    case 'f':
      if (t.size == 8) {
        double v;
        std::memcpy(&v, p, 8);
        return v;
      }
      if (t.size == 4) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
      }
      {  // IEEE half
        const unsigned h = p[0] | (p[1] << 8);
        const int e = (h >> 10) & 31, m = h & 1023;
        const double s = (h & 0x8000) ? -1.0 : 1.0;
        if (e == 0) return s * std::ldexp(m, -24);
        if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : s * std::numeric_limits<double>::infinity();
        return s * std::ldexp(1024 + m, e - 25);
      }
    case 'b':
      return p[0] != 0;
    default: {
      std::uint64_t u = 0;
      for (int k = 0; k < t.size; ++k) u |= static_cast<std::uint64_t>(p[k]) << (8 * k);
      if (t.kind == 'u') return static_cast<double>(u);
      const int bits = 8 * t.size;
      const std::int64_t v = bits == 64 ? static_cast<std::int64_t>(u)
                                        : static_cast<std::int64_t>(u << (64 - bits)) >> (64 - bits);
      return static_cast<double>(v);
    }
  }
}

// The header dict of a .npy file, read as numpy reads it (a Python literal,
// ast.literal_eval), restricted to what the format holds: string keys, each
// once, exactly descr, fortran_order and shape (numpy refuses any other
// set); descr a string, fortran_order True or False, shape a tuple of whole
// numbers. A duplicate key is refused: Python's dict keeps the last value,
// and a reader taking the first would see another array than numpy.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

class NpyHeaderParser {
 public:
  NpyHeaderParser(const std::string& h, const std::string& path) : h_(h), path_(path) {}

  NpyHeader parse() {
    NpyHeader out;
    std::set<std::string> seen;
    skip_space();
    expect('{', "the header is not a dict");
    skip_space();
    while (peek() != '}') {
      const std::string key = string_literal("a key");
      if (!seen.insert(key).second) fail("key " + quote_excerpt(key) + " appears twice (numpy would take the last)");
      skip_space();
      expect(':', "no ':' after key " + quote_excerpt(key));
      skip_space();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"')
          fail("descr is not a string (structured dtypes are not read)");
        out.descr = string_literal("descr");
      } else if (key == "fortran_order") {
        if (word("True")) out.fortran_order = true;
        else if (word("False")) out.fortran_order = false;
        else fail("fortran_order is not True or False");
      } else if (key == "shape") {
        out.shape = tuple();
      } else {
        fail("unknown key " + quote_excerpt(key) + " (a .npy header holds descr, fortran_order and shape)");
      }
      skip_space();
      if (peek() == ',') {
        ++i_;
        skip_space();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after the value of " + quote_excerpt(key));
      }
    }
    ++i_;
    skip_space();
    if (i_ != h_.size()) fail("text after the header dict");
    for (const char* k : {"descr", "fortran_order", "shape"})
      if (!seen.count(k)) fail(std::string("no '") + k + "'");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{}: .npy header: {}", path_, what));
  }
  char peek() const { return i_ < h_.size() ? h_[i_] : '\0'; }
  void skip_space() {
    while (i_ < h_.size() && (h_[i_] == ' ' || h_[i_] == '\t' || h_[i_] == '\n' || h_[i_] == '\r')) ++i_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c) fail(what);
    ++i_;
  }
  bool word(const std::string& w) {
    if (h_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  std::string string_literal(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') fail(what + " is not a quoted string");
    const auto end = h_.find(q, i_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string text = h_.substr(i_ + 1, end - i_ - 1);
    if (text.find('\\') != std::string::npos) fail("escapes in " + quote_excerpt(text) + " are not read");
    i_ = end + 1;
    return text;
  }
  // (d0, d1, ...): whole numbers (Python 2 wrote them with an L suffix).
  std::vector<std::int64_t> tuple() {
    expect('(', "shape is not a tuple");
    std::vector<std::int64_t> dims;
    skip_space();
    while (peek() != ')') {
      const std::size_t b = i_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
      const std::string digits = h_.substr(b, i_ - b);
      if (digits.empty()) {
        const auto e = h_.find_first_of(",)", b);
        fail("shape entry " + quote_excerpt(h_.substr(b, e == std::string::npos ? std::string::npos : e - b)) +
             " is not a whole number >= 0");
      }
      // 2^62 elements is beyond any file; the digit cap keeps stoll in range.
      if (digits.size() > 18) fail("shape entry " + quote_excerpt(digits) + " is too large");
      dims.push_back(std::stoll(digits));
      if (peek() == 'L') ++i_;
      skip_space();
      if (peek() == ',') {
        ++i_;
        skip_space();
      } else if (peek() != ')') {
        fail("shape: expected ',' or ')' after " + digits);
      }
    }
    ++i_;
    return dims;
  }

  const std::string& h_;
  const std::string& path_;
  std::size_t i_ = 0;
};

}  // namespace

Tensor read_npy(const std::string& path) {
  const std::string text = solvers::read_input_file(path, kNpyKind);
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  static const std::uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0)
    throw InputError(fmt::format("{}: not a .npy file (no \\x93NUMPY magic)", path));
  const int major = bytes[6];
  std::size_t header_len, start;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError(fmt::format("{}: .npy header is truncated", path));
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    start = 12;
  } else {
    throw InputError(fmt::format("{}: .npy format version {}.{} (1.0 to 3.0 are read)", path, major, bytes[7]));
  }
  if (header_len > bytes.size() - start) throw InputError(fmt::format("{}: .npy header runs past the file", path));
  const std::string h(bytes.begin() + static_cast<std::ptrdiff_t>(start),
                      bytes.begin() + static_cast<std::ptrdiff_t>(start + header_len));
  const NpyHeader header = NpyHeaderParser(h, path).parse();

  const std::string& descr = header.descr;
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    throw InputError(fmt::format("{}: .npy dtype {} is not little-endian or byte-order free", path,
                                 quote_excerpt(descr)));
  const NpyType type{descr[1], descr.size() == 3 && descr[2] >= '1' && descr[2] <= '8' ? descr[2] - '0' : 0};
  const bool known = (type.kind == 'f' && (type.size == 2 || type.size == 4 || type.size == 8)) ||
                     ((type.kind == 'u' || type.kind == 'i') &&
                      (type.size == 1 || type.size == 2 || type.size == 4 || type.size == 8)) ||
                     (type.kind == 'b' && type.size == 1);
  if (!known) throw InputError(fmt::format("{}: .npy dtype {} is not a real number type", path, quote_excerpt(descr)));
  if (header.fortran_order)
    throw InputError(fmt::format("{}: .npy array is in Fortran order; save it in C order (np.ascontiguousarray)", path));

  Tensor t;
  t.dtype = type.kind == 'f' && type.size == 8 ? "F64" : "F32";
  std::size_t count = 1;
  for (const std::int64_t d : header.shape) {
    if (d != 0 && count > (std::numeric_limits<std::size_t>::max() / 16) / static_cast<std::size_t>(d))
      throw InputError(fmt::format("{}: .npy shape is too large", path));
    count *= static_cast<std::size_t>(d);
    t.shape.push_back(d);
  }
  const std::size_t data = start + header_len;
  if (bytes.size() - data != count * static_cast<std::size_t>(type.size))
    throw InputError(fmt::format("{}: .npy shape needs {} bytes of data, the file has {}", path,
                                 count * static_cast<std::size_t>(type.size), bytes.size() - data));
  t.values.resize(count);
  for (std::size_t k = 0; k < count; ++k)
    t.values[k] = element(bytes.data() + data + k * static_cast<std::size_t>(type.size), type);
  return t;
}

std::vector<std::uint8_t> encode_npy(const Tensor& t) {
  const bool f64 = t.dtype == "F64";
  std::string shape;  // "5," for one dimension, "2, 3" for more (numpy's tuple text)
  for (std::size_t k = 0; k < t.shape.size(); ++k) shape += (k ? ", " : "") + std::to_string(t.shape[k]);
  if (t.shape.size() == 1) shape += ",";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", f64 ? "<f8" : "<f4", shape);
  // Pad with spaces and a newline so the data starts at a multiple of 64, as numpy does.
  const std::size_t unpadded = 10 + header.size() + 1;
  header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  const std::string head = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 255) +
                           static_cast<char>(header.size() >> 8) + header;
  std::vector<std::uint8_t> out(head.begin(), head.end());
  for (double v : t.values) {
    std::uint8_t b[8];
    if (f64) {
      std::memcpy(b, &v, 8);
      out.insert(out.end(), b, b + 8);
    } else {
      const float f = static_cast<float>(v);
      std::memcpy(b, &f, 4);
      out.insert(out.end(), b, b + 4);
    }
  }
  return out;
}

Tensor read_tensor_input(const std::string& spec, const std::string& option) {
  const auto colon = spec.rfind(':');
  const std::string file = colon == std::string::npos ? spec : spec.substr(0, colon);
  const bool safetensors = file.size() > 12 && file.compare(file.size() - 12, 12, ".safetensors") == 0;
  if (!safetensors) return read_npy(spec);
  const std::string name = spec.substr(colon + 1);
  const SafetensorsFile f = read_safetensors(file);
  const auto it = f.tensors.find(name);
  if (it == f.tensors.end()) {
    const auto u = f.unusable.find(name);
    if (u != f.unusable.end()) throw InputError(option, fmt::format("{}: tensor {} {}", file, quote_excerpt(name), u->second));
    throw InputError(option, fmt::format("{} has no tensor {}", file, quote_excerpt(name)));
  }
  return it->second;
}

Dataset dataset_from_tensors(const Tensor& images, const Tensor& labels, const std::string& images_name,
                             const std::string& labels_name) {
  if (images.shape.size() < 2)
    throw InputError(fmt::format("{}: images need a shape (n, features...), got {} dimension(s)", images_name,
                                 images.shape.size()));
  const std::int64_t n = images.shape[0];
  if (labels.shape.size() != 1 || labels.shape[0] != n)
    throw InputError(fmt::format("{}: labels need the shape ({},) of the {} images", labels_name, n, n));
  if (n == 0) throw InputError(fmt::format("{}: no images", images_name));
  const std::size_t features = images.values.size() / static_cast<std::size_t>(n);
  Dataset d;
  d.channels = images.shape.size() == 4 ? static_cast<int>(images.shape[1]) : 1;
  d.rows = images.shape.size() >= 3 ? static_cast<int>(images.shape[images.shape.size() - 2]) : 1;
  d.cols = static_cast<int>(images.shape.back());
  d.images.resize(static_cast<Eigen::Index>(features), static_cast<Eigen::Index>(n));
  for (std::size_t k = 0; k < images.values.size(); ++k) {
    const double v = images.values[k];
    if (!std::isfinite(v) || std::abs(v) > std::numeric_limits<float>::max())
      throw InputError(fmt::format("{}: value {} ({}) is not a finite float", images_name, k, v));
    d.images.data()[k] = static_cast<float>(v);
  }
  for (std::size_t k = 0; k < labels.values.size(); ++k) {
    const double v = labels.values[k];
    if (!(v >= 0 && v < 1e6) || v != std::floor(v))
      throw InputError(fmt::format("{}: label {} ({}) is not a class index (a whole number >= 0)", labels_name, k, v));
    d.labels.push_back(static_cast<int>(v));
  }
  return d;
}

Normalization parse_normalization(const std::string& text, const std::string& option) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || text.find('/', slash + 1) != std::string::npos)
    throw InputError(option, fmt::format("'{}' is not MEAN/SD (comma-separated per channel)", text));
  const auto list = [&](const std::string& part, bool positive) {
    std::vector<double> v;
    for (const std::string& item : ctmc::split_input_list(part, option)) {
      const auto x = ctmc::parse_double(item);
      if (!x || !std::isfinite(*x) || (positive && !(*x > 0)))
        throw InputError(option, fmt::format("'{}' is not a {}number", item, positive ? "positive " : ""));
      v.push_back(*x);
    }
    return v;
  };
  Normalization n{list(text.substr(0, slash), false), list(text.substr(slash + 1), true)};
  if (n.mean.size() != n.sd.size())
    throw InputError(option, fmt::format("{} means but {} standard deviations", n.mean.size(), n.sd.size()));
  return n;
}

void normalize(Dataset& d, const Normalization& n, const std::string& option) {
  if (n.mean.empty()) return;
  const auto C = static_cast<std::size_t>(d.channels);
  if (n.mean.size() != 1 && n.mean.size() != C)
    throw InputError(option, fmt::format("{} values per list for images of {} channel(s)", n.mean.size(), C));
  const Eigen::Index per_channel = d.images.rows() / static_cast<Eigen::Index>(C);
  for (Eigen::Index j = 0; j < d.images.cols(); ++j)
    for (Eigen::Index i = 0; i < d.images.rows(); ++i) {
      const std::size_t c = n.mean.size() == 1 ? 0 : static_cast<std::size_t>(i / per_channel);
      d.images(i, j) = static_cast<float>((d.images(i, j) - n.mean[c]) / n.sd[c]);
    }
}

std::string data_source_text(const DataSource& s) {
  std::string t = s.dir;
  const auto add = [&](const std::string& what, const std::string& value) {
    if (!value.empty()) t += (t.empty() ? "" : ", ") + what + " " + value;
  };
  add("test images", s.test_images);
  add("test labels", s.test_labels);
  add("train images", s.train_images);
  add("train labels", s.train_labels);
  add("normalized", s.normalization);
  return t;
}

std::vector<std::string> data_source_files(const DataSource& s) {
  std::vector<std::string> files;
  if (!s.dir.empty()) files.push_back(s.dir);
  for (const std::string* t : {&s.test_images, &s.test_labels, &s.train_images, &s.train_labels}) {
    if (t->empty()) continue;
    // FILE.safetensors:NAME reads FILE.
    const auto colon = t->rfind(':');
    const bool named = colon != std::string::npos && colon >= 12 && t->compare(colon - 12, 12, ".safetensors") == 0;
    files.push_back(named ? t->substr(0, colon) : *t);
  }
  return files;
}

DatasetSplit load_data(const DataSource& src) {
  const auto pair = [](const std::string& images, const std::string& labels, const char* split) {
    if (images.empty() != labels.empty())
      throw InputError(fmt::format("{}_images", split), fmt::format("give the {} images and labels both or neither", split));
    return !images.empty();
  };
  for (const auto& [spec, input] : {std::pair{&src.test_images, "test_images"}, {&src.test_labels, "test_labels"},
                                    {&src.train_images, "train_images"}, {&src.train_labels, "train_labels"}}) {
    const auto colon = spec->rfind(':');
    const bool named = colon != std::string::npos && colon >= 12 && spec->compare(colon - 12, 12, ".safetensors") == 0;
    if (!spec->empty()) require_regular_file(named ? spec->substr(0, colon) : *spec, input);
  }
  const bool test = pair(src.test_images, src.test_labels, "test");
  const bool train = pair(src.train_images, src.train_labels, "train");
  if (src.dir.empty() && !test)
    throw InputError("data", "give a data folder, or the test images and labels as tensors");
  DatasetSplit d = src.dir.empty() ? DatasetSplit{} : load_dataset_dir(src.dir);
  if (test)
    d.test = dataset_from_tensors(read_tensor_input(src.test_images, "test_images"),
                                  read_tensor_input(src.test_labels, "test_labels"), src.test_images, src.test_labels);
  if (train)
    d.train = dataset_from_tensors(read_tensor_input(src.train_images, "train_images"),
                                   read_tensor_input(src.train_labels, "train_labels"), src.train_images,
                                   src.train_labels);
  if (!src.normalization.empty()) {
    const Normalization n = parse_normalization(src.normalization);
    normalize(d.test, n);
    normalize(d.train, n);
  }
  return d;
}

}  // namespace ctmc::sim
