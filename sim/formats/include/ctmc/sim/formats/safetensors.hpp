// safetensors files (https://github.com/huggingface/safetensors, the format
// safetensors.torch.save_file writes): an 8-byte little-endian unsigned
// header length N, N bytes of UTF-8 JSON
//   {"<name>": {"dtype": "F32", "shape": [out, in], "data_offsets": [b, e]},
//    ..., "__metadata__": {"key": "value"}}
// then the data buffer; tensor bytes are [b, e) of the buffer, little-endian,
// row-major (C order). F64, F32, F16 (IEEE half) and BF16 (bfloat16) tensors
// are read, each value exactly (the half formats are what PyTorch writes for
// .half() and bfloat16 models), and the integer dtypes I64, I32, I16, I8,
// U64, U32, U16, U8 and BOOL (PyTorch's labels are int64), exact up to 2^53
// in magnitude; F32, F64 and I64 are written. A tensor of any other dtype (the
// 8-bit floats, complex, a dtype unknown here) does not make the file
// unreadable: its place in the buffer is checked (its byte count too where
// the dtype's size is known) and it is listed in SafetensorsFile::unusable,
// refused only by the reader that asks for it.
//
// Errors (ctmc::InputError naming the file): file shorter than 8 bytes, a
// header length beyond the file or kMaxSafetensorsHeaderBytes, a file over
// kSafetensorsKind's cap, malformed header JSON (nesting over 512 levels and duplicate keys
// included, json_input.hpp), an entry without
// dtype/shape/data_offsets, offsets out of the buffer,
// overlapping or not matching the shape's byte count, bytes left unused, a
// dimension over 2^40 or a shape needing more bytes than the buffer holds.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ctmc/solvers/input_file.hpp"

namespace ctmc::sim {

// A safetensors file is refused beyond 4 GiB (the source MLPs of this tool
// have a few MB of weights); its header length field beyond 100,000,000
// bytes, the limit of the format's reference implementation
// (MAX_HEADER_SIZE in huggingface/safetensors). From a device or pipe the
// data buffer is read no further than the header describes (and one byte).
inline constexpr solvers::InputKind kSafetensorsKind{"safetensors file", std::uint64_t(4) << 30,
                                                     "an MLP's weights are a few MB"};
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100000000;

struct Tensor {
  std::string dtype = "F32";        // how it is (or will be) stored: F64, F32, I64 (read and written), others read
  std::vector<std::int64_t> shape;  // row-major
  std::vector<double> values;       // product(shape) values (every read dtype is exact in double)

  std::int64_t numel() const;      // product(shape); -1 for a negative dimension or a product past int64
};

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__" (string values only, as the format requires)
  // Tensors present but not read, each with why ("has dtype 'C64', which is
  // not read (...)"); not in `tensors`.
  std::map<std::string, std::string> unusable;
};

SafetensorsFile read_safetensors(const std::string& path);
// Only the tensors named in `wanted` are decoded and dtype-checked (a state_dict
// holds tensors a network does not use, such as BatchNorm's I64
// num_batches_tracked); the others' data_offsets still have to tile the buffer.
SafetensorsFile read_safetensors(const std::string& path, const std::set<std::string>& wanted);

// The file's bytes (encode_safetensors), or written with write_files_atomically
// (write_safetensors). Tensors are laid out in name order;
// the header is padded with spaces to a multiple of 8 bytes (as the reference
// implementation does) so the data buffer is aligned.
std::vector<std::uint8_t> encode_safetensors(const std::string& path, const SafetensorsFile& f);
void write_safetensors(const std::string& path, const SafetensorsFile& f);

}  // namespace ctmc::sim
