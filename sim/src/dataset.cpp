// Loading a data directory (dataset.hpp): IDX (MNIST family) or CIFAR-10.
#include "ctmc/sim/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "ctmc/sim/cifar.hpp"
#include "ctmc/sim/idx.hpp"
#include "ctmc/solvers/errors.hpp"

namespace ctmc::sim {
namespace {

namespace fs = std::filesystem;

// "<dir>/<stem>" or "<dir>/<stem>.gz", whichever exists (raw first); empty if neither.
std::string find_idx(const std::string& dir, const std::string& stem) {
  // error_code overloads here and below: an unreadable folder is then reported
  // as missing (InputError, exit 2) instead of escaping as filesystem_error.
  std::error_code ec;
  for (const char* suffix : {"", ".gz"}) {
    const fs::path p = fs::path(dir) / (stem + suffix);
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

}  // namespace

void check_network_fits(const Dataset& d, int input_size, int output_size) {
  if (d.features() != input_size)
    throw InputError(fmt::format("--data: images have {} features, the network expects {}", d.features(), input_size));
  int max_label = -1;
  for (int y : d.labels) max_label = std::max(max_label, y);
  if (max_label >= output_size)
    throw InputError(fmt::format("--data: labels go up to {}, but the network has only {} outputs (classes 0..{})",
                                 max_label, output_size, output_size - 1));
}

Dataset simulation_subset(const Dataset& test_all, int limit, int input_size, int output_size) {
  if (limit < 0) throw InputError(fmt::format("--limit: {} must be >= 0", limit));
  check_network_fits(test_all, input_size, output_size);
  Dataset test = limit > 0 ? test_all.head(limit) : test_all;
  if (test.size() == 0) throw InputError("--data: no test images");
  return test;
}

Dataset Dataset::head(int n) const {
  n = std::max(0, std::min(n, size()));
  Dataset d;
  d.rows = rows;
  d.cols = cols;
  d.channels = channels;
  d.images = images.leftCols(n);
  d.labels.assign(labels.begin(), labels.begin() + n);
  return d;
}

DatasetSplit load_idx_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(dir + ": is a file, not a data directory (a folder of IDX or CIFAR-10 binary files)");
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": data directory does not exist (run scripts/fetch-data.sh)");
  const char* stems[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  std::string paths[4];
  for (int i = 0; i < 4; ++i) {
    paths[i] = find_idx(dir, stems[i]);
    if (paths[i].empty()) throw InputError(dir + ": missing " + stems[i] + " (raw or .gz)");
  }
  DatasetSplit s{read_idx_pair(paths[0], paths[1]), read_idx_pair(paths[2], paths[3])};
  if (s.train.rows != s.test.rows || s.train.cols != s.test.cols)
    throw InputError(paths[2] + ": test images are " + std::to_string(s.test.rows) + "x" + std::to_string(s.test.cols) +
                     " but training images are " + std::to_string(s.train.rows) + "x" + std::to_string(s.train.cols));
  return s;
}

DatasetSplit load_dataset_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(fs::path(dir) / "test_batch.bin", ec)) return load_cifar_dir(dir);
  return load_idx_dir(dir);
}

}  // namespace ctmc::sim
