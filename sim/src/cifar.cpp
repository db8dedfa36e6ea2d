// CIFAR-10 binary batch reader (format in cifar.hpp).
#include "ctmc/sim/cifar.hpp"

#include <filesystem>

#include "read_file.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::sim {

Dataset read_cifar_batch(const std::string& path) {
  const auto bytes = read_maybe_gz(path, [](const std::vector<std::uint8_t>&) {
    return SizeLimit{std::size_t(kCifarMaxRecords) * kCifarRecordBytes,
                     "of " + std::to_string(kCifarMaxRecords) + " records (a CIFAR-10 batch file holds 10000)", false};
  });
  if (bytes.empty()) throw InputError(path + ": empty CIFAR-10 batch file");
  if (bytes.size() % kCifarRecordBytes != 0)
    throw InputError(path + ": truncated CIFAR-10 batch (" + std::to_string(bytes.size()) + " bytes is not a multiple of the " +
                     std::to_string(kCifarRecordBytes) + "-byte record)");
  const Eigen::Index n = Eigen::Index(bytes.size() / kCifarRecordBytes);
  const Eigen::Index pixels = kCifarRecordBytes - 1;
  Dataset d;
  d.rows = d.cols = kCifarSide;
  d.channels = kCifarChannels;
  d.images.resize(pixels, n);
  d.labels.resize(static_cast<std::size_t>(n));
  for (Eigen::Index j = 0; j < n; ++j) {
    const std::uint8_t* rec = bytes.data() + j * kCifarRecordBytes;
    if (rec[0] > 9)
      throw InputError(path + ": label " + std::to_string(rec[0]) + " in record " + std::to_string(j) + " is not in 0..9");
    d.labels[static_cast<std::size_t>(j)] = rec[0];
    for (Eigen::Index i = 0; i < pixels; ++i) d.images(i, j) = float(rec[1 + i]) / 255.0f;
  }
  return d;
}

Dataset read_cifar_batches(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("CIFAR-10: no batch files given");
  std::vector<Dataset> parts;
  Eigen::Index total = 0;
  for (const auto& p : paths) {
    parts.push_back(read_cifar_batch(p));
    total += parts.back().images.cols();
  }
  Dataset d;
  d.rows = d.cols = kCifarSide;
  d.channels = kCifarChannels;
  d.images.resize(kCifarRecordBytes - 1, total);
  Eigen::Index at = 0;
  for (const auto& p : parts) {
    d.images.middleCols(at, p.images.cols()) = p.images;
    d.labels.insert(d.labels.end(), p.labels.begin(), p.labels.end());
    at += p.images.cols();
  }
  return d;
}

DatasetSplit load_cifar_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;  // error_code overloads: an unreadable folder is an InputError, not a filesystem_error
  std::vector<std::string> train;
  for (int b = 1; b <= 5; ++b) {
    const fs::path p = fs::path(dir) / ("data_batch_" + std::to_string(b) + ".bin");
    if (fs::exists(p, ec)) train.push_back(p.string());
  }
  const fs::path test = fs::path(dir) / "test_batch.bin";
  if (!fs::exists(fs::path(dir) / "data_batch_1.bin", ec) || !fs::exists(test, ec))
    throw InputError(dir + ": not a CIFAR-10 binary directory (needs data_batch_1.bin ... and test_batch.bin)");
  return {read_cifar_batches(train), read_cifar_batch(test.string())};
}

}  // namespace ctmc::sim
