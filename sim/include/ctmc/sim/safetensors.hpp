// safetensors files (https://github.com/huggingface/safetensors, the format
// safetensors.torch.save_file writes): an 8-byte little-endian unsigned
// header length N, N bytes of UTF-8 JSON
//   {"<name>": {"dtype": "F32", "shape": [out, in], "data_offsets": [b, e]},
//    ..., "__metadata__": {"key": "value"}}
// then the data buffer; tensor bytes are [b, e) of the buffer, little-endian,
// row-major (C order). F64, F32, F16 (IEEE half) and BF16 (bfloat16) tensors
// are read, each value exactly (the half formats are what PyTorch writes for
// .half() and bfloat16 models); F32 and F64 are written.
//
// Errors (ctmc::InputError naming the file): file shorter than 8 bytes, a
// header length beyond the file, malformed header JSON, an entry without
// dtype/shape/data_offsets, an unsupported dtype, offsets out of the buffer,
// overlapping or not matching the shape's byte count, bytes left unused, a
// dimension over 2^40 or a shape needing more bytes than the buffer holds.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ctmc::sim {

struct Tensor {
  std::string dtype = "F32";        // how it is (or will be) stored: F64, F32 (read and written), F16, BF16 (read)
  std::vector<std::int64_t> shape;  // row-major
  std::vector<double> values;       // product(shape) values (every read dtype is exact in double)

  std::int64_t numel() const;      // product(shape); -1 for a negative dimension or a product past int64
};

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__" (string values only, as the format requires)
};

SafetensorsFile read_safetensors(const std::string& path);

// The file's bytes (encode_safetensors), or written with write_files_atomically
// (write_safetensors). Tensors are laid out in name order;
// the header is padded with spaces to a multiple of 8 bytes (as the reference
// implementation does) so the data buffer is aligned.
std::vector<std::uint8_t> encode_safetensors(const std::string& path, const SafetensorsFile& f);
void write_safetensors(const std::string& path, const SafetensorsFile& f);

}  // namespace ctmc::sim
