// report deep: a small VGG-11 study end to end on synthetic MNIST-format and
// CIFAR-10-format folders (every section, the claims, the checks), its
// printed sweep command writing the same document byte for byte, --plan,
// the section's one line without --cifar, and bad folders exiting 2.
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/reports/registry.hpp"
#include "deep.hpp"  // reports/src (internal): the study's design
#include "synthetic_images.hpp"

using namespace ctmc_cli_test;
using namespace ctmc::reports;

namespace {

ReportContext small_context(const std::string& out, bool cifar) {
  static const fs::path mnist = mnist_like("deep_data/mnist", 90, 30);
  static const fs::path cifar_dir = cifar_like("deep_cifar");
  ReportContext ctx;
  ctx.out_root = (temp_dir() / out).string();
  ctx.data_root = mnist.parent_path().string();
  if (cifar) ctx.cifar_dir = cifar_dir.string();
  ctx.seed = 2;
  ctx.threads = 2;
  return ctx;
}

// Width 1/16 (channels 4..32), short windows: seconds, not minutes.
DeepDesign small_design() {
  DeepDesign d = deep_design(false);
  d.width = 0.0625;
  d.epochs = d.cifar_epochs = 2;
  d.cifar_train_limit = 0;
  d.test_images = 12;
  d.taus = {0.05};
  d.rates = {3, 6};
  d.T = {0.5, 1};
  d.cifar_rates = {4, 5};
  d.cifar_T = {0.5, 1};
  d.mnist_cases = {{"Case I", 1, 0.05, 3}, {"Case II", 0.5, 0.05, 3}};
  d.cifar_cases = {{"Case I", 1, 0.05, 5}, {"Case II", 0.5, 0.05, 4}};
  d.fit_images = 40;
  d.fit_samples = 200;
  d.fit_starts = 4;
  d.if_steps = {8, 16};
  return d;
}

const fs::path& small_study() {
  static const fs::path dir = [] {
    const ReportContext ctx = small_context("deep_out", true);
    REQUIRE(run_deep_report(ctx, small_design()) == 0);
    return fs::path(ctx.out_root) / "deep";
  }();
  return dir;
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("report deep: a small study writes every section for MNIST and CIFAR-10, and its checks hold") {
  const fs::path& dir = small_study();
  const std::string report = slurp(dir / "report.md");
  for (const char* section : {"## VGG-11 on MNIST digits", "## VGG-11 on CIFAR-10", "### Decomposition at Cases I and II",
                              "### Layer activations", "### IF baseline", "## Checked against PyTorch",
                              "## Claims ledger", "## Methods"})
    CHECK_MESSAGE(report.find(section) != std::string::npos, section);
  CHECK(report.find("CIFAR-10: not run") == std::string::npos);
  for (const char* file : {"sweep-mnist-relu.json", "sweep-mnist-cliprelu_6.json", "sweep-cifar10-relu.json",
                           "net-cifar10-relu-s1.safetensors", "neuron-mnist-cliprelu_6-L14.json",
                           "frontier_mnist_synops.dat", "frontier_cifar10_transitions.dat", "frontier_if_mnist.dat",
                           "layer_q99_cifar10.dat", "table1_vgg.csv", "claims.csv", "torch_import.csv",
                           "torch_peer.csv"})
    CHECK_MESSAGE(fs::exists(dir / file), file);
  // 14 spiking layers per variant (13 convolutions and the classifier).
  CHECK(lines(slurp(dir / "layer_quantiles_mnist.csv")) == 1 + 2 * 14);
  CHECK(lines(slurp(dir / "decomposition_cifar10.csv")) == 1 + 2 * 2);
  CHECK(lines(slurp(dir / "if_baseline_mnist.csv")) == 1 + 2 * 2 * 2 * 2);
  // The CIFAR-10 clip is named by the ReLU net's q95.
  const std::string table = slurp(dir / "table1_vgg.csv");
  CHECK(table.find("ReLU clipped at its q95 = ") != std::string::npos);
  const std::string claims = slurp(dir / "claims.csv");
  CHECK(claims.find("ClipReLU6 meets the 0.5 pp gap at fewer SynOps than ReLU") != std::string::npos);
  CHECK(claims.find("the q95 clip needs more SynOps than ReLU under 2 pp") != std::string::npos);
  // The layer-quantile claim is decided by each activation's bootstrap interval.
  CHECK(claims.find("ReLU: largest relative q99 departure, last two layers − others, 95% bootstrap interval over "
                    "the images: [") != std::string::npos);
  // The PyTorch VGG-11's three files give PyTorch's 100 predictions, and the
  // peer's planted convention mistake is the one claim that fails.
  const std::string imported = slurp(dir / "torch_import.csv");
  CHECK(lines(imported) == 1 + 3);
  CHECK(imported.find("100 / 100") != std::string::npos);
  const std::string peer = slurp(dir / "torch_peer.csv");
  const auto mistake = peer.find("torch-peer-vgg11-naive-trace,\"SynOps");
  REQUIRE(mistake != std::string::npos);
  CHECK(peer.substr(mistake, peer.find('\n', mistake) - mistake).ends_with(",Fail"));
  CHECK(report.find("with 2 Pass, 1 Fail, 0 not checkable (its planted convention mistake failed, as it must)") !=
        std::string::npos);
  CHECK(report.find("At the paper's Case I the peer's A_SNN is 11.5% against its A_MF of 83.0%") != std::string::npos);
  // Every check held: the fold errors and A_ANN per variant (2 x 2 x 2), the
  // three PyTorch files and the peer's three claims.
  const auto meta = nlohmann::json::parse(slurp(dir / "meta.json"));
  std::size_t held = 0;
  for (const auto& c : meta.at("checks")) held += c.at("passed").get<bool>();
  CHECK(held == meta.at("checks").size());
  CHECK(held == 2 * 2 * 2 + 3 + 3);
}

TEST_CASE("report deep: the printed sweep and train commands write the same files") {
  const fs::path& dir = small_study();
  const std::string report = slurp(dir / "report.md");
  const fs::path again = temp_dir() / "again-deep-sweep.json";
  std::string cmd = printed_command(report, "sweep cifar10-clip_q95");
  cmd = cmd.substr(0, cmd.rfind("--out ")) + "--out \"" + again.string() + "\"";
  const std::string bin = std::string("\"") + CTMC_CLI_PATH + "\"";
  REQUIRE(cmd.rfind("ctmc-snn ", 0) == 0);
  INFO(cmd);
  REQUIRE(std::system((bin + cmd.substr(8) + " >/dev/null 2>&1").c_str()) == 0);
  CHECK(slurp(again) == slurp(dir / "sweep-cifar10-clip_q95.json"));
  const fs::path net = temp_dir() / "again-deep-net.json";
  cmd = printed_command(report, "train MNIST digits ClipReLU6 seed 1");
  cmd = cmd.substr(0, cmd.rfind("--output ")) + "--output \"" + net.string() + "\"";
  REQUIRE(std::system((bin + cmd.substr(8) + " >/dev/null 2>&1").c_str()) == 0);
  CHECK(slurp(temp_dir() / "again-deep-net.safetensors") == slurp(dir / "net-mnist-cliprelu_6-s1.safetensors"));
  // The PyTorch cross-check's import and evaluate give PyTorch's predictions.
  const fs::path onnx_net = temp_dir() / "again-torch-bn.json", pred = temp_dir() / "again-torch-bn-pred.txt";
  cmd = printed_command(report, "import torch_vgg11_bn.onnx");
  cmd = cmd.substr(0, cmd.rfind("--output ")) + "--output \"" + onnx_net.string() + "\"";
  REQUIRE(std::system((bin + cmd.substr(8) + " >/dev/null 2>&1").c_str()) == 0);
  cmd = printed_command(report, "evaluate torch_vgg11_bn.onnx");
  const auto test_images = cmd.find(" --test-images ");
  cmd = "ctmc-snn evaluate --net \"" + onnx_net.string() + "\"" +
        cmd.substr(test_images, cmd.rfind("--predictions ") - test_images) + "--predictions \"" + pred.string() + "\"";
  INFO(cmd);
  REQUIRE(std::system((bin + cmd.substr(8) + " >/dev/null 2>&1").c_str()) == 0);
  CHECK(slurp(pred) == slurp(fixture("torch_vgg11/torch_vgg11_pred.txt")));
}

TEST_CASE("report deep without --cifar says so in one line; --plan writes the Slurm commands and runs no sweep") {
  ReportContext ctx = small_context("deep_plan", false);
  ctx.plan = true;
  REQUIRE(run_deep_report(ctx, small_design()) == 0);
  const fs::path dir = fs::path(ctx.out_root) / "deep";
  const std::string script = slurp(dir / "sweep_commands.sh");
  CHECK(script.find("scripts/slurm/submit-sweep.sh --shards 16 --out results/deep/sweep-mnist-relu.json -- --net ") !=
        std::string::npos);
  CHECK(script.find("--criterion 0.5") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "sweep-mnist-relu.json"));
  CHECK(fs::exists(dir / "neuron-mnist-relu-L14.json"));

  ctx = small_context("deep_nocifar", false);
  DeepDesign d = small_design();
  d.if_steps = {8};
  d.torch_dir = (temp_dir() / "no-torch-fixture").string();
  // The cases (tau 0.05) off the grid (tau 0.1): a sweep of their own on
  // case_images test images, which the decomposition and its claim read.
  d.taus = {0.1};
  d.case_images = 6;
  REQUIRE(run_deep_report(ctx, d) == 0);
  const fs::path out = fs::path(ctx.out_root) / "deep";
  const std::string report = slurp(out / "report.md");
  CHECK(report.find("CIFAR-10: not run (no CIFAR-10 folder given; `--cifar DIR`") != std::string::npos);
  CHECK(report.find("Not run: no `peer_claims.json` under") != std::string::npos);
  CHECK(report.find("## VGG-11 on CIFAR-10") == std::string::npos);
  const auto grid = nlohmann::json::parse(slurp(out / "sweep-mnist-relu.json")).at("spec");
  CHECK(grid.at("tau") == nlohmann::json::array({0.1}));
  CHECK(grid.at("limit") == 12);
  const auto cases = nlohmann::json::parse(slurp(out / "sweep-mnist-cliprelu_6-cases.json")).at("spec");
  CHECK(cases.at("tau") == nlohmann::json::array({0.05}));
  CHECK(cases.at("rate") == nlohmann::json::array({3.0}));
  CHECK(cases.at("T") == nlohmann::json::array({0.5, 1.0}));
  CHECK(cases.at("limit") == 6);
  CHECK(report.find("The cases off the grid run on their own on 6 test images") != std::string::npos);
  const std::string decomposition = slurp(out / "decomposition_mnist.csv");
  CHECK(decomposition.find("not on the grid") == std::string::npos);
  CHECK(lines(decomposition) == 1 + 2 * 2);
  const std::string claims = slurp(out / "claims.csv");
  CHECK(claims.find("ReLU Case I: |A_ANN − A_MF| − |A_MF − A_SNN| (pp), 95% paired intervals: [") !=
        std::string::npos);
  // Both sweeps' A_ANN against the nets' accuracy on their own images.
  const auto meta = nlohmann::json::parse(slurp(out / "meta.json"));
  std::size_t case_checks = 0;
  for (const auto& c : meta.at("checks")) {
    CHECK(c.at("passed").get<bool>());
    case_checks += c.at("check").get<std::string>().find("the cases' sweep's A_ANN equals the nets' accuracy on its "
                                                         "6 test images") != std::string::npos;
  }
  CHECK(case_checks == 2);
}

TEST_CASE("report deep: a missing CIFAR-10 folder exits 2 naming it, and writes nothing") {
  const fs::path out = temp_dir() / "deep_missing";
  const auto r = run_cli("report deep --out \"" + out.string() + "\" --cifar \"" +
                         (temp_dir() / "no-such-cifar").string() + "\" --data-root \"" +
                         (temp_dir() / "no-such-data").string() + "\"");
  CHECK(r.status == 2);
  CHECK(r.output.find("is not a folder") != std::string::npos);
  CHECK_FALSE(fs::exists(out / "deep"));
}

TEST_CASE("report deep: an incomplete CIFAR-10 folder exits 2 naming the file before the MNIST section starts") {
  // It was found only after the MNIST section's minutes of training (here a
  // missing MNIST folder would be found first).
  const fs::path cifar = cifar_like("deep_cifar_incomplete");
  fs::remove(cifar / "data_batch_3.bin");
  const fs::path out = temp_dir() / "deep_incomplete";
  const auto r = run_cli("report deep --out \"" + out.string() + "\" --cifar \"" + cifar.string() + "\" --data-root \"" +
                         (temp_dir() / "no-such-data").string() + "\"");
  INFO(r.output);
  CHECK(r.status == 2);
  const auto at = r.output.find("ctmc-snn: --cifar: " + cifar.string() +
                                 ": not a complete CIFAR-10 binary folder (missing data_batch_3.bin");
  REQUIRE(at != std::string::npos);
  CHECK(r.output.find('\n', at) == r.output.size() - 1);  // the error is one line (after the report's title)
  CHECK_FALSE(fs::exists(out / "deep"));
}

