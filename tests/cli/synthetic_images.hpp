// Small image folders for the CLI tests of VGG-11 (train, report deep): an
// MNIST-like IDX folder and a CIFAR-10 binary folder whose classes a little
// training separates.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli_helpers.hpp"

namespace ctmc_cli_test {

// Pseudo-random bytes; the label of image i is i mod 3 and its first bytes
// say so, so that a little training separates the classes.
inline std::string pixels(int n, int values, std::uint32_t seed, std::string* labels) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const int label = i % 3;
    if (labels) *labels += static_cast<char>(label);
    for (int j = 0; j < values; ++j) {
      seed = seed * 1664525u + 1013904223u;
      const bool mark = j % 97 < 20 && (j / 97) % 3 == label;
      out += static_cast<char>(mark ? 200 + (seed >> 29) : (seed >> 26));
    }
  }
  return out;
}

inline fs::path mnist_like(const std::string& name, int train, int test) {
  std::string trl, tel;
  const std::string tr = pixels(train, 784, 1, &trl), te = pixels(test, 784, 2, &tel);
  return write_idx_dir(name, idx_images(tr, 28, 28), idx_labels(trl), idx_images(te, 28, 28), idx_labels(tel));
}

// The records of each batch file of the synthetic CIFAR-10 folders: a real
// folder's 10000 would make every test read 184 MB. The loader takes another
// count only from CTMC_SNN_CIFAR_BATCH_RECORDS, which cifar_like sets for
// this process and the commands it runs.
inline constexpr int kSyntheticCifarRecords = 12;

// A CIFAR-10 binary folder of the real layout (data_batch_1.bin ...
// data_batch_5.bin, test_batch.bin), each file kSyntheticCifarRecords
// records of one label byte and 3 x 32 x 32 pixels.
inline fs::path cifar_like(const std::string& name) {
  ::setenv("CTMC_SNN_CIFAR_BATCH_RECORDS", std::to_string(kSyntheticCifarRecords).c_str(), 1);
  const auto dir = temp_dir() / name;
  fs::create_directories(dir);
  const auto batch = [](int n, std::uint32_t seed) {
    std::string labels;
    const std::string px = pixels(n, 3072, seed, &labels);
    std::string out;
    for (int i = 0; i < n; ++i) out += labels[std::size_t(i)] + px.substr(std::size_t(i) * 3072, 3072);
    return out;
  };
  for (int b = 1; b <= 5; ++b)
    std::ofstream(dir / ("data_batch_" + std::to_string(b) + ".bin"), std::ios::binary)
        << batch(kSyntheticCifarRecords, 2 + std::uint32_t(b));
  std::ofstream(dir / "test_batch.bin", std::ios::binary) << batch(kSyntheticCifarRecords, 100);
  return dir;
}

}  // namespace ctmc_cli_test
