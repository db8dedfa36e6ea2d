// Images and labels from tensor files, for users whose test set lives in
// PyTorch / NumPy (the conversion study's "float inputs" convention): a
// NumPy .npy file, or one tensor of a safetensors file ("FILE:NAME"). Pixels
// are taken as stored (float32 exactly; nothing is rounded to k/255), then an
// optional per-channel normalisation (x - mean_c) / sd_c as torchvision's
// Normalize applies after ToTensor.
//
// .npy (format versions 1.0, 2.0, 3.0): a little-endian or byte-order-free
// dtype among f2, f4, f8, u1, i1, u2, i2, u4, i4, u8, i8 and b1, C order
// (fortran_order False), every value read exactly into a double; the header's
// shape must account for exactly the bytes after it.
//
// Errors: ctmc::InputError naming the file (or option) and what is wrong.
#pragma once
#include <string>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/formats/safetensors.hpp"

namespace ctmc::sim {

Tensor read_npy(const std::string& path);
// The bytes of a .npy file holding `t` (float32 for F32, float64 for F64).
std::vector<std::uint8_t> encode_npy(const Tensor& t);

// "FILE.npy" or "FILE.safetensors:NAME" (the part after the last ':' names
// the tensor); `option` names the source in errors.
Tensor read_tensor_input(const std::string& spec, const std::string& option);

// Images (n x ...: one image per leading index, its values in C order; a
// 4-d (n, C, H, W) array gives C channels) and labels (n whole numbers >= 0).
Dataset dataset_from_tensors(const Tensor& images, const Tensor& labels, const std::string& images_name,
                             const std::string& labels_name);

// Per-channel (x - mean_c) / sd_c, one value for every channel or one each.
struct Normalization {
  std::vector<double> mean, sd;  // empty: none
};
// "MEAN/SD" with comma-separated per-channel lists, e.g. "0.1307/0.3081" or
// "0.49,0.48,0.45/0.25,0.24,0.26"; InputError naming `option`.
Normalization parse_normalization(const std::string& text, const std::string& option = "normalization");
// InputError when the lists have neither 1 nor d.channels entries.
void normalize(Dataset& d, const Normalization& n, const std::string& option = "normalization");

// Where a simulation's images come from: a data folder (IDX or CIFAR-10,
// load_dataset_dir) and/or tensor files replacing its test or train split,
// then the normalisation applied to both splits.
struct DataSource {
  std::string dir;                                          // data folder ("" : none)
  std::string test_images, test_labels;                     // --test-images / --test-labels
  std::string train_images, train_labels;                   // --train-images / --train-labels
  std::string normalization;                                // parse_normalization text ("" : none)
};
// InputError naming the option: an images file without its labels (or the
// reverse), no test images at all, or any reader's error.
DatasetSplit load_data(const DataSource& source);
// The source in words, for output: the folder, and the tensor files and
// normalisation when given.
std::string data_source_text(const DataSource& source);
// The files and folders the source reads (the data folder, the tensor files
// without a ":NAME"): what an output must not be.
std::vector<std::string> data_source_files(const DataSource& source);

}  // namespace ctmc::sim
