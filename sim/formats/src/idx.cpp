// IDX reader/writer (see idx.hpp for the format and the errors raised).
#include "ctmc/sim/formats/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <limits>

#include "ctmc/sim/formats/atomic_write.hpp"
#include "ctmc/sim/formats/read_file.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::sim {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw InputError(path + ": " + what); }

std::size_t element_size(IdxType t) {
  switch (t) {
    case IdxType::U8:
    case IdxType::I8: return 1;
    case IdxType::I16: return 2;
    case IdxType::I32:
    case IdxType::F32: return 4;
    case IdxType::F64: return 8;
  }
  return 0;
}

bool valid_type(std::uint8_t t) {
  return t == 0x08 || t == 0x09 || t == 0x0B || t == 0x0C || t == 0x0D || t == 0x0E;
}

std::vector<std::uint8_t> gzip(const std::string& path, const std::vector<std::uint8_t>& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) fail(path, "cannot initialise zlib");
  std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  const std::size_t n = out.size() - zs.avail_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) fail(path, "gzip compression failed");
  out.resize(n);
  return out;
}

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

}  // namespace

std::size_t IdxArray::count() const {
  std::size_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

namespace {

void check_idx_magic(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  if (bytes[0] != 0 || bytes[1] != 0 || !valid_type(bytes[2]) || bytes[3] == 0)
    fail(path, "not an IDX file (bad magic number)");
}

// The size a file starting with `bytes` must have: its header plus the
// elements its dimensions need (unknown while the header is incomplete).
// Bounds the reading of the file by its own header; dimensions needing more
// than kMaxIdxDataBytes are refused at once.
SizeLimit idx_size_from_header(const std::string& path, const std::vector<std::uint8_t>& bytes, const IdxLimit& limit) {
  if (bytes.size() < 4) return {};
  check_idx_magic(path, bytes);
  const std::size_t header = 4 + 4 * std::size_t(bytes[3]);
  if (bytes.size() < header) return {};
  const std::size_t esize = element_size(static_cast<IdxType>(bytes[2]));
  std::uint64_t n = esize;
  std::string dims;
  bool over = false;  // the product passed the cap (so it cannot overflow: the cap and each factor are below 2^32)
  for (std::size_t i = 0; i < bytes[3]; ++i) {
    const std::uint32_t d = be32(&bytes[4 + 4 * i]);
    dims += (i ? " x " : "") + std::to_string(d);
    if (!over) n *= d;
    over = over || n > limit.bytes;
  }
  // Overflow-free: a zero dimension after the cap was passed makes 0 elements.
  for (std::size_t i = 0; i < bytes[3]; ++i)
    if (be32(&bytes[4 + 4 * i]) == 0) over = false, n = 0;
  if (over)
    fail(path, "header describes " + dims + " elements of " + std::to_string(esize) + " byte" + (esize > 1 ? "s" : "") +
                   ", more than " + (limit.why.empty() ? "the " + solvers::byte_size_text(limit.bytes) +
                                                              " of data an IDX file may hold here"
                                                        : limit.why));
  return {static_cast<std::size_t>(n + header), "its header describes (trailing data)", true};
}
}  // namespace

std::uint64_t data_budget_bytes() {
  constexpr std::uint64_t kDefault = std::uint64_t(2) << 30;
  const char* text = std::getenv("CTMC_SNN_MAX_DATA_GIB");
  if (!text) return kDefault;
  const auto gib = ctmc::parse_double(text);
  if (!gib || !(*gib > 0) || !(*gib <= 1024))
    throw InputError("CTMC_SNN_MAX_DATA_GIB", std::string("'") + std::string(text).substr(0, 40) +
                                                  "' is not a number of GiB in (0, 1024] (the memory a data folder's "
                                                  "images may take)");
  return static_cast<std::uint64_t>(*gib * static_cast<double>(kGiB));
}

IdxArray read_idx(const std::string& path, const IdxLimit& limit) {
  auto bytes = read_maybe_gz(path, [&](const std::vector<std::uint8_t>& b) { return idx_size_from_header(path, b, limit); });
  if (bytes.size() < 4) fail(path, "truncated IDX file (" + std::to_string(bytes.size()) + " bytes, no header)");
  check_idx_magic(path, bytes);
  IdxArray a;
  a.type = static_cast<IdxType>(bytes[2]);
  const std::size_t rank = bytes[3];
  const std::size_t header = 4 + 4 * rank;
  if (bytes.size() < header) fail(path, "truncated IDX file (header of rank " + std::to_string(rank) + " incomplete)");
  for (std::size_t i = 0; i < rank; ++i) a.dims.push_back(be32(&bytes[4 + 4 * i]));
  // Overflow-safe: the product is checked against the bytes actually present.
  const std::size_t esize = element_size(a.type);
  const std::size_t avail = (bytes.size() - header) / esize;
  std::size_t n = 1;
  for (auto d : a.dims) {
    if (d != 0 && n > avail / d + 1) fail(path, "truncated IDX file (dimensions exceed the data present)");
    n *= d;
  }
  const std::size_t need = header + n * esize;
  if (bytes.size() < need)
    fail(path, "truncated IDX file (" + std::to_string(bytes.size()) + " bytes, dimensions need " + std::to_string(need) + ")");
  if (bytes.size() > need)
    fail(path, "IDX file has " + std::to_string(bytes.size() - need) + " trailing bytes after the data");
  // The content moves into the array (a copy would hold it twice).
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(header));
  a.data = std::move(bytes);
  return a;
}

std::vector<std::uint8_t> encode_idx(const std::string& path, const IdxArray& a) {
  if (a.dims.empty() || a.dims.size() > 255) fail(path, "IDX rank must be 1..255");
  if (a.data.size() != a.count() * element_size(a.type)) fail(path, "IDX data size does not match the dimensions");
  std::vector<std::uint8_t> out;
  out.reserve(4 + 4 * a.dims.size() + a.data.size());
  out.insert(out.end(), {0, 0, static_cast<std::uint8_t>(a.type), static_cast<std::uint8_t>(a.dims.size())});
  for (auto d : a.dims)
    out.insert(out.end(), {std::uint8_t(d >> 24), std::uint8_t(d >> 16), std::uint8_t(d >> 8), std::uint8_t(d)});
  out.insert(out.end(), a.data.begin(), a.data.end());
  const bool gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  return gz ? gzip(path, out) : out;
}

void write_idx(const std::string& path, const IdxArray& a) { write_files_atomically({{path, encode_idx(path, a)}}); }

Dataset read_idx_images(const std::string& path, const IdxLimit& max_pixels) {
  IdxArray a = read_idx(path, max_pixels);
  if (a.type != IdxType::U8) fail(path, "image file must hold unsigned bytes (IDX type 0x08)");
  if (a.dims.size() != 3) fail(path, "image file must have 3 dimensions (n x rows x cols), found " + std::to_string(a.dims.size()));
  if (a.dims[1] == 0 || a.dims[2] == 0) fail(path, "image file has zero rows or columns");
  // Sizes are ints downstream (Dataset, Eigen indices via int): a dimension
  // that does not fit would wrap. The data check above does not catch it when
  // another dimension is zero.
  if (a.dims[1] > 65535 || a.dims[2] > 65535 || std::uint64_t(a.dims[1]) * a.dims[2] > INT_MAX)
    fail(path, "image size " + std::to_string(a.dims[1]) + " x " + std::to_string(a.dims[2]) + " is too large (at most 65535 per side and " +
                   std::to_string(INT_MAX) + " pixels)");
  if (a.dims[0] > INT_MAX) fail(path, std::to_string(a.dims[0]) + " images is too many (at most " + std::to_string(INT_MAX) + ")");
  Dataset d;
  d.rows = static_cast<int>(a.dims[1]);
  d.cols = static_cast<int>(a.dims[2]);
  const Eigen::Index pixels = Eigen::Index(d.rows) * d.cols;
  const Eigen::Index n = a.dims[0];
  d.images.resize(pixels, n);
  const std::uint8_t* p = a.data.data();
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < pixels; ++i) d.images(i, j) = float(*p++) / 255.0f;
  a.data = {};
  return d;
}

std::vector<int> read_idx_labels(const std::string& path, int num_classes, const IdxLimit& max_labels) {
  const IdxArray a = read_idx(path, max_labels);
  if (a.type != IdxType::U8) fail(path, "label file must hold unsigned bytes (IDX type 0x08)");
  if (a.dims.size() != 1) fail(path, "label file must have 1 dimension, found " + std::to_string(a.dims.size()));
  if (a.dims[0] > INT_MAX) fail(path, std::to_string(a.dims[0]) + " labels is too many (at most " + std::to_string(INT_MAX) + ")");
  std::vector<int> labels(a.data.begin(), a.data.end());
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= num_classes)
      fail(path, "label " + std::to_string(labels[i]) + " at index " + std::to_string(i) + " is not below " + std::to_string(num_classes));
  return labels;
}

Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path, int num_classes,
                      const IdxLimit& max_pixels) {
  Dataset d = read_idx_images(images_path, max_pixels);
  const auto images = static_cast<std::uint64_t>(d.images.cols());
  d.labels = read_idx_labels(labels_path, num_classes,
                             {images, std::to_string(images) + " labels, one for each image of " + images_path});
  if (static_cast<Eigen::Index>(d.labels.size()) != d.images.cols())
    fail(labels_path, std::to_string(d.labels.size()) + " labels but " + images_path + " has " + std::to_string(d.images.cols()) + " images");
  return d;
}

std::vector<PendingFile> encode_idx_pair(const std::string& images_path, const std::string& labels_path, const Dataset& d) {
  if (d.channels != 1 || Eigen::Index(d.rows) * d.cols != d.images.rows())
    fail(images_path, "images must be one channel of rows x cols pixels");
  if (static_cast<Eigen::Index>(d.labels.size()) != d.images.cols()) fail(labels_path, "label count differs from image count");
  IdxArray im;
  im.type = IdxType::U8;
  im.dims = {std::uint32_t(d.images.cols()), std::uint32_t(d.rows), std::uint32_t(d.cols)};
  im.data.resize(d.images.size());
  std::size_t k = 0;
  for (Eigen::Index j = 0; j < d.images.cols(); ++j)
    for (Eigen::Index i = 0; i < d.images.rows(); ++i) {
      const float p = d.images(i, j);
      if (!(p >= 0.0f && p <= 1.0f)) fail(images_path, "pixel value outside [0, 1] in image " + std::to_string(j));
      im.data[k++] = static_cast<std::uint8_t>(std::lround(255.0f * p));
    }
  IdxArray lb;
  lb.type = IdxType::U8;
  lb.dims = {std::uint32_t(d.labels.size())};
  for (int l : d.labels) {
    if (l < 0 || l > 255) fail(labels_path, "label out of range 0..255");
    lb.data.push_back(static_cast<std::uint8_t>(l));
  }
  return {{images_path, encode_idx(images_path, im)}, {labels_path, encode_idx(labels_path, lb)}};
}

void write_idx_pair(const std::string& images_path, const std::string& labels_path, const Dataset& d) {
  // Both files or neither: a label file from one run beside images from another would pass the count check.
  write_files_atomically(encode_idx_pair(images_path, labels_path, d));
}

}  // namespace ctmc::sim
