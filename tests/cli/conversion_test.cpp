// report conversion: the cost measures and verdicts of the SynOps question
// against hand-computed values, and a small study end to end, whose printed
// commands (train, fit, sweep), run through the CLI, reproduce the files the
// report wrote byte for byte.
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cli_helpers.hpp"
#include "conversion.hpp"  // reports/src (internal): the study's definitions
#include "ctmc/reports/registry.hpp"
#include "ctmc/core/errors.hpp"

using namespace ctmc_cli_test;
using namespace ctmc::reports;

namespace {

// A learnable 28x28 task: class c lights rows 2c..2c+2, plus noise.
fs::path conversion_data_root() {
  static const fs::path root = [] {
    std::mt19937 g(5);
    const auto make = [&](int n, std::string& pixels, std::string& labels) {
      for (int i = 0; i < n; ++i) {
        const int c = i % 10;
        labels += static_cast<char>(c);
        for (int r = 0; r < 28; ++r)
          for (int col = 0; col < 28; ++col) {
            int v = static_cast<int>(g() % 60);
            if (r >= 2 * c + 2 && r <= 2 * c + 4) v += 150 + static_cast<int>(g() % 40);
            pixels += static_cast<char>(std::min(v, 255));
          }
      }
    };
    std::string tr_p, tr_l, te_p, te_l;
    make(300, tr_p, tr_l);
    make(100, te_p, te_l);
    write_idx_dir("conversion_data/mnist", idx_images(tr_p, 28, 28), idx_labels(tr_l), idx_images(te_p, 28, 28),
                  idx_labels(te_l));
    return temp_dir() / "conversion_data";
  }();
  return root;
}

// Runs a command line the report printed, with "ctmc-snn" the binary under test.
int run_printed(std::string cmd) {
  const std::string bin = std::string("\"") + CTMC_CLI_PATH + "\" ";
  for (std::size_t pos = 0; (pos = cmd.find("ctmc-snn ", pos)) != std::string::npos; pos += bin.size())
    cmd.replace(pos, 9, bin);
  return std::system((cmd + " >/dev/null 2>&1").c_str());
}

std::string replace_last_arg(std::string cmd, const std::string& option, const std::string& value) {
  const auto at = cmd.rfind(option + " ");
  REQUIRE(at != std::string::npos);
  const auto end = cmd.find_first_of(" )", at + option.size() + 1);
  return cmd.replace(at, (end == std::string::npos ? cmd.size() : end) - at, option + " " + value);
}

}  // namespace

TEST_CASE("conversion: cost measures from hand-computed spike counts") {
  SpikeTally t;
  t.layer_spikes = {100, 50, 5};
  t.fanout = {128, 10, 0};
  t.T = 2;
  t.dt = 0.005;
  const auto v = cost_values(t);
  REQUIRE(v.size() == cost_measures().size());
  const double synops = 100 * 128 + 50 * 10;  // 13300
  CHECK(v[0] == synops);
  CHECK(v[1] == doctest::Approx(synops / 394));
  CHECK(v[2] == doctest::Approx(synops / 384));
  CHECK(v[3] == 155);
  CHECK(v[4] == 12800);
  CHECK(v[5] == 500);
  CHECK(v[6] == doctest::Approx(6650));
  CHECK(v[7] == doctest::Approx(synops / 400));
}

TEST_CASE("conversion: a cost claim holds within a factor 1.25, and 'never' matches only 'never'") {
  CHECK(cost_verdict(14.4e3, 14.4e3) == Verdict::Reproduced);
  CHECK(cost_verdict(17.9e3, 14.4e3) == Verdict::Reproduced);
  CHECK(cost_verdict(18.1e3, 14.4e3) == Verdict::NotReproduced);
  CHECK(cost_verdict(11.6e3, 14.4e3) == Verdict::Reproduced);
  CHECK(cost_verdict(11.4e3, 14.4e3) == Verdict::NotReproduced);
  CHECK(cost_verdict(std::nullopt, std::nullopt) == Verdict::Reproduced);
  CHECK(cost_verdict(9e3, std::nullopt) == Verdict::NotReproduced);
  CHECK(cost_verdict(std::nullopt, 9e3) == Verdict::NotReproduced);
  CHECK(std::string(verdict_name(Verdict::NotComparable)) == "Not comparable");
}

ReportContext small_context(const std::string& out) {
  ReportContext ctx;
  ctx.out_root = (temp_dir() / out).string();
  ctx.data_root = conversion_data_root().string();
  ctx.seed = 3;
  ctx.threads = 2;
  return ctx;
}

ConversionDesign small_design() {
  ConversionDesign d = conversion_design(false);
  d.hidden = {12, 8};
  d.epochs_mnist = 3;
  d.test_images = 50;
  d.taus = {0.05};
  d.rates = {3, 30};
  d.T = {0.5, 1};
  d.fit_samples = 200;
  d.fit_starts = 4;
  d.fit_train_images = 100;
  d.clip_K = {1, 4, 6};
  d.if_steps = {8, 16};
  d.fashion = false;
  return d;
}

// The small study, run once for the test cases below: its report folder.
const fs::path& small_study() {
  static const fs::path dir = [] {
    const ReportContext ctx = small_context("conversion_out");
    REQUIRE(run_conversion_report(ctx, small_design()) == 0);
    return fs::path(ctx.out_root) / "conversion";
  }();
  return dir;
}

TEST_CASE("report conversion: a small study writes every section and file") {
  const fs::path& dir = small_study();
  const std::string report = slurp(dir / "report.md");
  for (const char* section : {"## Activation study", "## Clip ablation", "## Decomposition", "## IF baseline",
                              "## The SynOps question", "## Claims ledger", "## Methods and reproduction"})
    CHECK_MESSAGE(report.find(section) != std::string::npos, section);
  for (const char* file : {"sweep-mnist-relu.json", "sweep-mnist-cliprelu_4.json", "sweep-mnist-relu-readout-integrate.json",
                           "net-mnist-relu-s1.safetensors", "net-mnist-cliprelu_4-s1.json", "neuron-mnist-sigmoid-L3.json",
                           "samples-mnist-relu-L1.txt", "claims.csv", "if_baseline.csv", "timing.csv"})
    CHECK_MESSAGE(fs::exists(dir / file), file);
}

TEST_CASE("report conversion: the printed sweep commands write the same documents") {
  const fs::path& dir = small_study();
  const std::string report = slurp(dir / "report.md");
  for (const char* name : {"mnist-relu", "mnist-sigmoid_shift_2", "mnist-relu-readout-integrate"}) {
    const fs::path again = temp_dir() / (std::string("again-") + name + ".json");
    const std::string cmd = replace_last_arg(printed_command(report, std::string("sweep ") + name), "--out",
                                             "\"" + again.string() + "\"");
    INFO(cmd);
    REQUIRE(run_printed(cmd) == 0);
    CHECK(slurp(again) == slurp(dir / (std::string("sweep-") + name + ".json")));
  }
}

TEST_CASE("report conversion: the printed fit commands write the same neurons") {
  const fs::path& dir = small_study();
  const std::string report = slurp(dir / "report.md");
  for (const char* what : {"fit MNIST digits ReLU layer 1", "fit MNIST digits sigmoid layer 3",
                           "fit MNIST digits softplus layer 2"}) {
    const fs::path again = temp_dir() / "again-neuron.json";
    const std::string original = printed_command(report, what);
    const std::string cmd = replace_last_arg(original, "--output", "\"" + again.string() + "\"");
    INFO(cmd);
    REQUIRE(run_printed(cmd) == 0);
    const auto name_at = original.rfind("--output ") + 9;
    CHECK(slurp(again) == slurp(dir / original.substr(name_at, original.find(')', name_at) - name_at)));
  }
}

TEST_CASE("report conversion: the printed train command writes the same weights") {
  const fs::path& dir = small_study();
  const std::string report = slurp(dir / "report.md");
  const fs::path again = temp_dir() / "again-net.json";
  const std::string cmd = replace_last_arg(printed_command(report, "train MNIST digits ReLU seed 1"), "--output",
                                           "\"" + again.string() + "\"");
  INFO(cmd);
  REQUIRE(run_printed(cmd) == 0);
  CHECK(slurp(temp_dir() / "again-net.safetensors") == slurp(dir / "net-mnist-relu-s1.safetensors"));
}

TEST_CASE("report conversion --plan writes the nets, neurons and Slurm commands, and runs no sweep") {
  ReportContext ctx = small_context("conversion_plan");
  ctx.plan = true;
  REQUIRE(run_conversion_report(ctx, small_design()) == 0);
  const fs::path dir = fs::path(ctx.out_root) / "conversion";
  const std::string script = slurp(dir / "sweep_commands.sh");
  CHECK(script.find("scripts/slurm/submit-sweep.sh --shards 16 --out results/conversion/sweep-mnist-relu.json -- "
                    "--net ") != std::string::npos);
  CHECK(std::count(script.begin(), script.end(), '\n') > 12);
  CHECK(fs::exists(dir / "neuron-mnist-relu-L3.json"));
  CHECK(fs::exists(dir / "net-mnist-softplus-s1.safetensors"));
  CHECK_FALSE(fs::exists(dir / "sweep-mnist-relu.json"));
}

TEST_CASE("report conversion --sweeps DIR takes a matching sweep document from there, and refuses another design's") {
  const fs::path& dir = small_study();
  const fs::path given = temp_dir() / "given_sweeps";
  fs::create_directories(given);
  // A document whose runs were edited: the report must show the edit (it
  // took the sweep from DIR rather than running it).
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(slurp(dir / "sweep-mnist-sigmoid.json"));
  doc["runs"][0]["A_ANN"] = 12.5;
  std::ofstream(given / "sweep-mnist-sigmoid.json") << doc.dump(1) << "\n";
  ReportContext ctx = small_context("conversion_reuse");
  ctx.sweeps_dir = given.string();
  CHECK_THROWS_WITH_AS(run_conversion_report(ctx, small_design()),
                       doctest::Contains("sweep-mnist-sigmoid.json: the sweep of another design"), ctmc::InputError);
  // The same out root as the study: the specs (which name the report's files)
  // match. This replaces the study's folder with one whose sigmoid sweep is
  // the edited one; the other test cases read none of its sigmoid files.
  ctx.out_root = fs::path(dir).parent_path().string();
  REQUIRE(run_conversion_report(ctx, small_design()) == 0);
  const auto again = nlohmann::ordered_json::parse(slurp(dir / "sweep-mnist-sigmoid.json"));
  CHECK(again["runs"][0]["A_ANN"] == 12.5);
  CHECK(again["cells"][0]["A_ANN"] == 12.5);
  CHECK(slurp(dir / "sweep-mnist-relu.json").find("\"A_ANN\": 12.5") == std::string::npos);
  std::ofstream(given / "sweep-mnist-sigmoid.json") << "{\"format\": \"something else\"}";
  CHECK_THROWS_WITH_AS(run_conversion_report(ctx, small_design()),
                       doctest::Contains("sweep-mnist-sigmoid.json: not a sweep document"), ctmc::InputError);
}

TEST_CASE("report conversion: a missing data folder exits 2 naming it") {
  const auto r = run_cli("report conversion --out \"" + (temp_dir() / "conv_missing").string() +
                         "\" --data-root \"" + (temp_dir() / "no-such-data").string() + "\"");
  CHECK(r.status == 2);
  CHECK(r.output.find("no-such-data/mnist") != std::string::npos);
  CHECK(r.output.find("is not a folder") != std::string::npos);
}
