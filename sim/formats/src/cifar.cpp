// CIFAR-10 binary batch reader (format in cifar.hpp).
#include "ctmc/sim/formats/cifar.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "ctmc/sim/formats/read_file.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/number_text.hpp"
#include "ctmc/solvers/input_file.hpp"

namespace ctmc::sim {

namespace {

// The batches' images side by side, in the order given.
Dataset concatenate_batches(const std::vector<Dataset>& parts) {
  Eigen::Index total = 0;
  for (const auto& p : parts) total += p.images.cols();
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

}  // namespace

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
  for (const auto& p : paths) parts.push_back(read_cifar_batch(p));
  return concatenate_batches(parts);
}

namespace {

namespace fs = std::filesystem;

// The files of a CIFAR-10 folder, training batches first.
std::vector<std::string> cifar_file_names() {
  std::vector<std::string> names;
  for (int b = 1; b <= kCifarTrainBatches; ++b) names.push_back("data_batch_" + std::to_string(b) + ".bin");
  names.push_back("test_batch.bin");
  return names;
}

std::string records_text(long long records) {
  return fmt::format("{} records of {} bytes ({} bytes)", records, kCifarRecordBytes, records * kCifarRecordBytes);
}

// A batch file that is not a regular file of exactly `records` records is
// refused from its size, before it is read (a gzip file by its content,
// once inflated: read_exact_batch).
void check_batch_file(const std::string& path, int records) {
  solvers::InputFile in(path, "CIFAR-10 batch file");
  std::uint8_t magic[2] = {0, 0};
  const bool gzip = in.read(magic, 2) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  const std::uint64_t want = std::uint64_t(records) * kCifarRecordBytes;
  if (!gzip && in.size() != want)
    throw InputError(fmt::format("{}: {} bytes; a CIFAR-10 batch file holds exactly {}{}", path, in.size(),
                                 records_text(records),
                                 in.size() % kCifarRecordBytes == 0
                                     ? fmt::format(", not {}", in.size() / kCifarRecordBytes)
                                     : std::string()));
}

Dataset read_exact_batch(const std::string& path, int records) {
  Dataset d = read_cifar_batch(path);
  if (d.size() != records)
    throw InputError(fmt::format("{}: {} records; a CIFAR-10 batch file holds exactly {}", path, d.size(),
                                 records_text(records)));
  return d;
}

}  // namespace

int cifar_batch_records() {
  const char* text = std::getenv("CTMC_SNN_CIFAR_BATCH_RECORDS");
  if (!text) return kCifarMaxRecords;
  std::string why;
  const auto v = parse_whole_number(text, kCifarMaxRecords, why);
  if (!v || *v < 1)
    throw InputError("CTMC_SNN_CIFAR_BATCH_RECORDS",
                     fmt::format("'{}' is not a whole number from 1 to {}", std::string(text).substr(0, 40), kCifarMaxRecords));
  return static_cast<int>(*v);
}

void check_cifar_dir(const std::string& dir) {
  std::vector<std::string> missing;
  for (const auto& name : cifar_file_names()) {
    std::error_code ec;  // an unreadable folder is reported as files missing, not as a filesystem_error
    if (!fs::exists(fs::status(fs::path(dir) / name, ec))) missing.push_back(name);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw InputError(fmt::format("{}: not a complete CIFAR-10 binary folder (missing {}; it holds data_batch_1.bin ... "
                                 "data_batch_5.bin and test_batch.bin)",
                                 dir, list));
  }
  const int records = cifar_batch_records();
  for (const auto& name : cifar_file_names()) check_batch_file((fs::path(dir) / name).string(), records);
}

DatasetSplit load_cifar_dir(const std::string& dir) {
  check_cifar_dir(dir);
  const int records = cifar_batch_records();
  const auto names = cifar_file_names();
  std::vector<Dataset> parts;
  for (int b = 0; b < kCifarTrainBatches; ++b)
    parts.push_back(read_exact_batch((fs::path(dir) / names[std::size_t(b)]).string(), records));
  DatasetSplit split{concatenate_batches(parts), read_exact_batch((fs::path(dir) / names.back()).string(), records)};
  return split;
}

}  // namespace ctmc::sim
