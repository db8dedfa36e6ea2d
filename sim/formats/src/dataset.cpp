// Loading a data directory (dataset.hpp): IDX (MNIST family) or CIFAR-10.
#include "ctmc/sim/formats/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "ctmc/sim/formats/cifar.hpp"
#include "ctmc/sim/formats/idx.hpp"
#include "ctmc/sim/formats/read_file.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/number_text.hpp"
#include "ctmc/solvers/input_file.hpp"

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

void require_regular_file(const std::string& path, const std::string& input) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  // A missing file is left to its reader, which names it.
  if (ec || !fs::exists(st)) return;
  if (!fs::is_regular_file(st))
    throw InputError(input, fmt::format("'{}' is not a regular file (a device, pipe or folder is never read as data)",
                                        path));
}

void check_network_fits(const Dataset& d, int input_size, int output_size) {
  if (d.features() != input_size)
    throw InputError("data", fmt::format("images have {} features, the network expects {}", d.features(), input_size));
  int max_label = -1;
  for (int y : d.labels) max_label = std::max(max_label, y);
  if (max_label >= output_size)
    throw InputError("data", fmt::format("labels go up to {}, but the network has only {} outputs (classes 0..{})",
                                         max_label, output_size, output_size - 1));
}

TestSubset parse_test_subset(const std::string& text, const std::string& option) {
  TestSubset s;
  s.text = text;
  if (text == "all") return s;
  const auto whole = [&](const std::string& item, const std::string& what) {
    std::string why;
    const auto v = parse_whole_number(item, std::numeric_limits<int>::max(), why);
    if (!v) throw InputError(option, fmt::format("{} '{}' {}", what, item, why));
    return static_cast<int>(*v);
  };
  if (text.rfind("stride:", 0) == 0) {
    const std::string rest = text.substr(7);
    const auto colon = rest.find(':');
    s.stride = whole(rest.substr(0, colon), "stride");
    if (colon != std::string::npos) s.offset = whole(rest.substr(colon + 1), "offset");
    if (s.stride < 1) throw InputError(option, fmt::format("stride {} must be at least 1", s.stride));
    return s;
  }
  if (text.rfind("index:", 0) == 0) {
    const std::string file = text.substr(6);
    if (file.empty()) throw InputError(option, "index: names no file");
    static constexpr solvers::InputKind kIndexFileKind{"index file", 64 * solvers::kMiB,
                                                       "an index file lists at most a test set's images"};
    const std::string bytes = solvers::read_input_file(file, kIndexFileKind);
    std::string item;
    const auto flush = [&] {
      if (item.empty()) return;
      if (item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
        throw InputError(fmt::format("{}: '{}' is not an image index (a whole number >= 0)", file,
                                     item.substr(0, 40)));
      s.indices.push_back(std::stoi(item));
      item.clear();
    };
    for (char c : bytes) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',')
        flush();
      else
        item += c;
    }
    flush();
    if (s.indices.empty()) throw InputError(fmt::format("{}: lists no image index", file));
    std::vector<int> sorted = s.indices;
    std::sort(sorted.begin(), sorted.end());
    if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      throw InputError(fmt::format("{}: image {} is listed twice", file, *twice));
    return s;
  }
  throw InputError(option, fmt::format("'{}' is not all, stride:K[:OFFSET] or index:FILE", text));
}

Dataset simulation_subset(const Dataset& test_all, int limit, int input_size, int output_size,
                          const TestSubset& subset) {
  if (limit < 0) throw InputError("limit", fmt::format("{} must be >= 0", limit));
  check_network_fits(test_all, input_size, output_size);
  std::vector<int> pick = subset.indices;
  if (pick.empty())
    for (int k = subset.offset; k < test_all.size(); k += subset.stride) pick.push_back(k);
  for (int k : pick)
    if (k >= test_all.size())
      throw InputError("subset", fmt::format("{}: image {} is beyond the {} test images", subset.text, k,
                                             test_all.size()));
  Dataset chosen;
  chosen.rows = test_all.rows;
  chosen.cols = test_all.cols;
  chosen.channels = test_all.channels;
  chosen.images.resize(test_all.images.rows(), static_cast<Eigen::Index>(pick.size()));
  for (std::size_t j = 0; j < pick.size(); ++j) {
    chosen.images.col(static_cast<Eigen::Index>(j)) = test_all.images.col(pick[j]);
    chosen.labels.push_back(test_all.labels[static_cast<std::size_t>(pick[j])]);
  }
  Dataset test = limit > 0 ? chosen.head(limit) : chosen;
  if (test.size() == 0) throw InputError("data", "no test images");
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
  // One budget for the folder's images as floats, the test split getting
  // what the training split left.
  const std::uint64_t budget = data_budget_bytes() / sizeof(float);
  const auto left = [&](std::uint64_t pixels) {
    return IdxLimit{pixels, solvers::byte_size_text(pixels * sizeof(float)) +
                                " of images as floats, what is left of the data folder's budget (raise it with "
                                "CTMC_SNN_MAX_DATA_GIB, now " +
                                solvers::byte_size_text(budget * sizeof(float)) + ")"};
  };
  DatasetSplit s;
  s.train = read_idx_pair(paths[0], paths[1], 10, left(budget));
  const std::uint64_t used = static_cast<std::uint64_t>(s.train.images.size());
  s.test = read_idx_pair(paths[2], paths[3], 10, left(budget - std::min(budget, used)));
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
