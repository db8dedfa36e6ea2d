// `train --arch vgg11` end to end: the variant the images call for, the
// accuracy `evaluate` gives for the written net equal to the one train
// reports, the same weights for 1 and 3 threads, and refusals of options
// that do not fit (exit 2, one line naming the option, nothing written).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "synthetic_images.hpp"

using namespace ctmc_cli_test;

namespace {

std::string q(const fs::path& p) { return "\"" + p.string() + "\""; }

nlohmann::json run_json(const std::string& args) {
  const auto r = run_cli(args + " --json");
  INFO("ctmc-snn " << args << "\n" << r.output);
  REQUIRE(r.status == 0);
  // Progress lines (the BatchNorm fold's) go to stderr with --json: the JSON starts at the first bracket.
  const auto at = r.output.find_first_of("[{");
  REQUIRE(at != std::string::npos);
  return nlohmann::json::parse(r.output.substr(at));
}

void refused(const std::string& args, const std::string& needle, const fs::path& out) {
  const auto r = run_cli(args + " --output " + q(out));
  INFO("ctmc-snn " << args << "\n" << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  CHECK(r.output.find('\n') == r.output.size() - 1);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace

TEST_CASE("train --arch vgg11: the strided variant on 28x28 images; evaluate gives the reported test accuracy; threads do not matter") {
  const auto data = mnist_like("vgg_mnist", 48, 30);
  const auto dir = temp_dir() / "vgg_out";
  fs::create_directories(dir);
  const std::string base = "train --arch vgg11 --width 0.04 --data " + q(data) + " --epochs 2 --batch 16 --seed 5 --output ";
  const auto one = run_json(base + q(dir / "t1.json") + " --threads 1");
  const auto three = run_json(base + q(dir / "t3.json") + " --threads 3");
  CHECK(one["arch"] == "vgg11");
  CHECK(slurp(dir / "t1.safetensors") == slurp(dir / "t3.safetensors"));
  CHECK(one["test_accuracy"] == three["test_accuracy"]);

  const auto manifest = nlohmann::json::parse(slurp(dir / "t1.json"));
  CHECK(manifest["meta"]["variant"] == "vgg11-strided");
  CHECK(manifest["meta"]["channels"] == nlohmann::json::array({3, 5, 10, 10, 20, 20, 20, 20}));
  CHECK(manifest["input"] == nlohmann::json::array({1, 28, 28}));
  int convs = 0, bns = 0;
  for (const auto& L : manifest["layers"]) convs += L["type"] == "conv2d", bns += L["type"] == "batchnorm2d";
  CHECK(convs == 13);
  CHECK(bns == 13);

  const auto ev = run_json("evaluate --net " + q(dir / "t1.json") + " --data " + q(data));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0]["test_accuracy"] == one["test_accuracy"]);
  const auto r = run_cli("evaluate --net " + q(dir / "t1.json") + " --data " + q(data));
  CHECK(r.output.find("batchnorm folded into 13 convolution(s)") != std::string::npos);

  // The spiking simulator runs it: 13 spiking layers, the classifier read out.
  const auto sim = run_json("simulate network --net " + q(dir / "t1.json") + " --data " + q(data) + " --neurons " +
                            q(fs::path(CTMC_SOURCE_DIR) / "reports" / "models" / "relu_two_state.json") +
                            " --limit 2 --T 0.05 --readout integrate --threads 1");
  CHECK(sim.dump().find("synops") != std::string::npos);
}

TEST_CASE("train --arch vgg11 on CIFAR-10 binary batches: the average-pooling variant, evaluated as written") {
  const auto data = cifar_like("vgg_cifar");
  const auto out = temp_dir() / "vgg_cifar_out" / "net.json";
  fs::create_directories(out.parent_path());
  const auto tr = run_json("train --arch vgg11 --width 0.03 --activation cliprelu_6 --data " + q(data) +
                           " --epochs 1 --batch 8 --seed 2 --threads 2 --output " + q(out));
  const auto manifest = nlohmann::json::parse(slurp(out));
  CHECK(manifest["meta"]["variant"] == "vgg11-cifar");
  CHECK(manifest["input"] == nlohmann::json::array({3, 32, 32}));
  int pools = 0;
  for (const auto& L : manifest["layers"]) pools += L["type"] == "avgpool2d";
  CHECK(pools == 5);
  const auto ev = run_json("evaluate --net " + q(out) + " --data " + q(data));
  CHECK(ev[0]["test_accuracy"] == tr["test_accuracy"]);
}

TEST_CASE("train: --arch, --width and --hidden that do not fit exit 2 with one line naming the option, writing nothing") {
  const auto data = mnist_like("vgg_bad", 4, 2);
  const auto out = temp_dir() / "vgg_bad_out.json";
  const std::string d = "train --data " + q(data) + " --epochs 1";
  refused(d + " --arch vgg13", "--arch: 'vgg13' is not an architecture", out);
  refused(d + " --arch vgg11 --width 0", "--width: must be in (0, 16]", out);
  refused(d + " --arch vgg11 --width 17", "--width: must be in (0, 16]", out);
  refused(d + " --width 0.5", "--width: scales VGG-11's channels; give it with --arch vgg11", out);
  refused(d + " --arch vgg11 --hidden 4", "--hidden: sets the MLP's widths", out);
  // 1x2 images: no VGG-11 variant takes them.
  std::string labels = std::string("\x00\x01\x00\x01", 4);
  const auto tiny = write_idx_dir("vgg_tiny", idx_images(std::string(8, '\x10'), 1, 2), idx_labels(labels),
                                  idx_images(std::string(4, '\x20'), 1, 2), idx_labels(labels.substr(0, 2)));
  refused("train --arch vgg11 --data " + q(tiny) + " --epochs 1", "--arch: vgg11 takes [1, 28, 28] images", out);
}

TEST_CASE("train --arch vgg11 with batches of one image only: exit 2 with the reason, nothing written") {
  // Each took zero optimisation steps and wrote the initial weights with exit 0.
  const auto data = mnist_like("vgg_one", 6, 2);
  const auto out = temp_dir() / "vgg_one_out.json";
  const std::string d = "train --arch vgg11 --width 0.03 --data " + q(data) + " --epochs 1";
  refused(d + " --batch 1", "--batch: 1 cannot train vgg11-strided: BatchNorm layer 'features.", out);
  refused(d + " --train-limit 1", "--data: 1 training image cannot train vgg11-strided: BatchNorm layer", out);
  CHECK_FALSE(fs::exists(temp_dir() / "vgg_one_out.safetensors"));
}
