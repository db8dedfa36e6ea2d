// IDX files (the MNIST family's format, http://yann.lecun.com/exdb/mnist/):
// magic = two zero bytes, an element-type byte (0x08 ubyte, 0x09 sbyte,
// 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64) and the number of
// dimensions; then each dimension as a big-endian uint32; then the elements,
// big-endian, row-major. Files may be raw or gzip-compressed: a file whose
// first two bytes are the gzip magic 1f 8b is decompressed, whatever its name.
//
// Errors (ctmc::InputError, one line starting with the file name): unreadable
// or truncated file (fewer element bytes than the dimensions imply, or a
// truncated gzip stream), wrong magic, trailing bytes (found at the first
// piece read or inflated beyond the header's size), a header describing more
// than kMaxIdxDataBytes of elements or (gzip) more than deflate's largest
// expansion (1032:1) times the compressed size, an element type or rank the caller cannot use, label values out of range, image/label count
// mismatch, image sides over 65535, more than INT_MAX pixels per image or
// images/labels per file.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ctmc/sim/formats/atomic_write.hpp"
#include "ctmc/sim/formats/dataset.hpp"

namespace ctmc::sim {

enum class IdxType : std::uint8_t { U8 = 0x08, I8 = 0x09, I16 = 0x0B, I32 = 0x0C, F32 = 0x0D, F64 = 0x0E };

struct IdxArray {
  IdxType type = IdxType::U8;
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> data;  // element bytes as stored (big-endian)

  std::size_t count() const;  // product of dims (1 for rank 0)
};

// The most element bytes an IDX file may describe: EMNIST ByClass, the
// largest of the family, has 0.55 GB of training images (and the images
// become 4-byte floats in memory). A header describing more is refused
// before anything else is read.
inline constexpr std::uint64_t kMaxIdxDataBytes = std::uint64_t(1) << 30;

// The memory a data folder's images may take as floats (4 bytes a pixel),
// over all its files together: 2 GiB (512 Mi pixels; MNIST's 70,000 images
// are 55 Mi), or CTMC_SNN_MAX_DATA_GIB GiB when that variable is set (EMNIST
// ByClass, 608 Mi pixels, needs 3). InputError naming the variable for a
// value that is not a number of GiB in (0, 1024].
std::uint64_t data_budget_bytes();

// A limit on the elements of an IDX file and what it is, for the message
// ("the 1 GiB of data an IDX file may hold here").
struct IdxLimit {
  std::uint64_t bytes = kMaxIdxDataBytes;
  std::string why;
};

// Parses and validates any IDX file; a header describing more element bytes
// than `limit` is refused before the data is read or inflated.
IdxArray read_idx(const std::string& path, const IdxLimit& limit = {});

// The bytes of an IDX file (gzip-compressed when the path ends in ".gz").
std::vector<std::uint8_t> encode_idx(const std::string& path, const IdxArray& a);
// Writes encode_idx(path, a) with write_files_atomically: a failure leaves
// nothing half-written.
void write_idx(const std::string& path, const IdxArray& a);

// Images: a rank-3 ubyte file n x rows x cols; pixels scaled by 1/255; at
// most `max_pixels` pixels (refused from the header).
Dataset read_idx_images(const std::string& path, const IdxLimit& max_pixels = {});
// Labels: a rank-1 ubyte file; every label must be < num_classes.
std::vector<int> read_idx_labels(const std::string& path, int num_classes = 10, const IdxLimit& max_labels = {});
// Images and labels together; counts must agree (error names both files);
// the label file may describe no more labels than there are images.
Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path, int num_classes = 10,
                      const IdxLimit& max_pixels = {});

// Writes d as a rank-3 ubyte image file and a rank-1 ubyte label file; pixel
// p in [0,1] is stored as round(255 p) (values outside [0,1] are an error).
// Both files or neither (write_files_atomically); encode_idx_pair validates and
// encodes without writing, so callers can commit more files together.
void write_idx_pair(const std::string& images_path, const std::string& labels_path, const Dataset& d);
std::vector<PendingFile> encode_idx_pair(const std::string& images_path, const std::string& labels_path, const Dataset& d);

}  // namespace ctmc::sim
