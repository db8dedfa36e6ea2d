// A differential test of the ONNX importer against PyTorch: random small nets
// that PyTorch built, exported (torch.onnx.export, opsets 13 to 17, with
// BatchNorm folded by the exporter or kept as BatchNormalization nodes) and
// evaluated (eval mode, float32), in tests/fixtures/onnx_differential/, made
// once by tests/fixtures/make_onnx_differential.py with Debian's
// python3-torch 1.13 (each model's layers, ops, opset and export are in
// cases.json). Every model goes through `import onnx` (run_import_onnx: the
// manifest and safetensors written as the command writes them) and is loaded
// as `evaluate` loads it (load_net); its logits on the fixture's inputs
// (Net::forward, what `evaluate` takes the argmax of) are compared with
// PyTorch's. One model in 30 also goes through the executable: `import onnx`,
// then `evaluate` with PyTorch's argmax as the labels (100%, the same
// predictions), where every input's top two logits are further apart than
// their tolerances.
//
// Tolerance: per logit, 2 B (mNNN.tolerance), B a first-order componentwise
// bound on the rounding error of any float32 evaluation of the net, in any
// summation order, against the exact net: gamma_n sum |w| |a| for a dot
// product or convolution of n terms (gamma_n = n u / (1 - n u), u = 2^-24;
// Higham, Accuracy and Stability of Numerical Algorithms, section 3.1), the
// BatchNorm and its fold and the average pooling likewise, a few u for
// sigmoid and softplus, each carried through the later layers by their
// |weights| (ReLU, clip, softplus and the poolings are 1-Lipschitz, sigmoid
// 1/4); the script computes it in float64 beside the exact logits. PyTorch's
// float32 logits and ours are both within B of the exact ones (the script
// checked PyTorch's: at most 0.2 B), so they differ by at most 2 B. The
// fixture keeps only nets whose logits spread over at least 1000 tolerances
// on every input, so that an error of a thousandth of the spread fails; the
// test checks that, and that a logit moved by 1% of the spread is caught.
//
// With constant folding off the exporter writes Transpose, Unsqueeze and
// Concat nodes of constants (cases.json "unsupported_ops", named when the
// fixture was made and the importer refused them: a Transpose of the weight
// of a Linear without bias, Unsqueeze and Concat for x.view(x.size(0), -1)),
// which the importer now folds: those models are a second test case, each
// imported and compared as the others.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_helpers.hpp"
#include "ctmc/commands/import_onnx.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/formats/safetensors.hpp"

using namespace ctmc_cli_test;
using namespace ctmc::sim;

namespace {

std::string diff_file(const std::string& name) { return fixture("onnx_differential/" + name); }

// The fixture's logits spread (max - min) over at least this many tolerances
// on every input (make_onnx_differential.py draws a net again otherwise).
constexpr double kSpreadInTolerances = 1000;
// A logit moved by this fraction of its input's spread must fail the
// comparison: it is 10 tolerances away at least.
constexpr double kCaughtShift = 0.01;
// One model in this many also goes through the executable.
constexpr std::size_t kCliEvery = 30;

// The largest |ours - PyTorch's| / tolerance over one sample's logits
// (infinity for a NaN), with `shift` added to our logit `shifted` (-1: none).
double worst_ratio(const Eigen::MatrixXf& z, Eigen::Index s, const std::vector<double>& ref, const std::vector<double>& tol,
                   std::size_t classes, Eigen::Index shifted = -1, double shift = 0) {
  double worst = 0;
  for (std::size_t k = 0; k < classes; ++k) {
    const std::size_t at = static_cast<std::size_t>(s) * classes + k;
    const double ours = double(z(Eigen::Index(k), s)) + (Eigen::Index(k) == shifted ? shift : 0.0);
    const double r = std::abs(ours - ref[at]) / tol[at];
    if (!(r <= worst)) worst = std::isnan(r) ? INFINITY : r;  // a NaN logit fails too
  }
  return worst;
}

std::string layers_text(const nlohmann::json& c) {
  std::string t;
  for (const auto& l : c["layers"]) t += (t.empty() ? "" : ", ") + l.get<std::string>();
  return t;
}

struct Totals {
  int models = 0, kept = 0, via_cli = 0, refused = 0;
  double worst = 0;  // the largest |difference| / tolerance over all logits
  std::string worst_model;
  std::map<std::int64_t, int> by_opset;
};

// One model of the fixture: imported (or, where `may_refuse`, refused with a
// message naming one of its unsupported_ops), loaded as `evaluate` loads it
// and its logits compared with PyTorch's; with `cli`, also through the
// executable.
void check_case(const nlohmann::json& c, const SafetensorsFile& data, bool may_refuse, bool cli, Totals& t) {
  const std::string name = c["name"];
  const std::string model = diff_file(c["file"].get<std::string>());
  CAPTURE(name);
  CAPTURE(c["opset"].get<int>());
  CAPTURE(c["export"].get<std::string>());
  const std::string layers = layers_text(c);
  CAPTURE(layers);
  const auto dir = temp_dir() / "onnx_differential";
  fs::create_directories(dir);
  const std::string net_path = (dir / (name + ".json")).string();
  ctmc::commands::ImportOnnxResult imp;
  try {
    imp = ctmc::commands::run_import_onnx({model, net_path, "import onnx " + model});
  } catch (const ctmc::InputError& e) {
    const std::string what = e.what();
    bool named = false;
    for (const auto& op : c["unsupported_ops"]) named = named || what.find("operator '" + op.get<std::string>() + "'") != std::string::npos;
    CHECK_MESSAGE((may_refuse && named), "import refused: ", what);
    ++t.refused;
    return;
  }
  ++t.models;
  CHECK(imp.opset == c["opset"].get<std::int64_t>());
  ++t.by_opset[imp.opset];
  t.kept += c["export"] == "kept";
  const Net net = load_net(net_path);

  const Tensor& x = data.tensors.at(name + ".x");
  const Tensor& ref = data.tensors.at(name + ".logits");
  const Tensor& tol = data.tensors.at(name + ".tolerance");
  const auto n = static_cast<Eigen::Index>(c["samples"].get<int>());
  const auto classes = c["classes"].get<std::size_t>();
  REQUIRE(x.shape[0] == n);
  REQUIRE(ref.shape == std::vector<std::int64_t>{n, std::int64_t(classes)});
  REQUIRE(tol.shape == ref.shape);
  const Eigen::Index features = static_cast<Eigen::Index>(x.values.size()) / n;
  REQUIRE(features == net.input_size());
  Eigen::MatrixXf cols(features, n);  // one sample per column, C-H-W order
  for (Eigen::Index i = 0; i < cols.size(); ++i) cols.data()[i] = static_cast<float>(x.values[static_cast<std::size_t>(i)]);
  const Eigen::MatrixXf z = net.forward(cols);
  REQUIRE(z.rows() == Eigen::Index(classes));
  bool margins = true;  // every sample's top two logits further apart than their tolerances
  for (Eigen::Index s = 0; s < n; ++s) {
    CAPTURE(s);
    const double r = worst_ratio(z, s, ref.values, tol.values, classes);
    CHECK_MESSAGE(r <= 1, "largest |ours - PyTorch's| is ", r, " tolerances");
    if (r > t.worst) t.worst = r, t.worst_model = name;
    // The check can fail: the tolerance is far below the logits' spread,
    // and one logit moved by 1% of the spread is caught.
    const double* row = ref.values.data() + s * Eigen::Index(classes);
    const double* trow = tol.values.data() + s * Eigen::Index(classes);
    const auto [lo, hi] = std::minmax_element(row, row + classes);
    const double spread = *hi - *lo, largest_tol = *std::max_element(trow, trow + classes);
    CHECK(largest_tol * kSpreadInTolerances <= spread);
    for (Eigen::Index k = 0; k < Eigen::Index(classes); ++k)
      CHECK(worst_ratio(z, s, ref.values, tol.values, classes, k, kCaughtShift * spread) > 1);
    std::vector<double> sorted(row, row + classes);
    std::sort(sorted.rbegin(), sorted.rend());
    margins = margins && sorted[0] - sorted[1] > 2 * largest_tol;
  }
  if (!cli || !margins) return;

  // The executable: import onnx, then evaluate with PyTorch's argmax as the labels.
  ++t.via_cli;
  const std::string cli_net = (dir / (name + "_cli.json")).string(), pred = (dir / (name + "_pred.txt")).string();
  const auto r = run_cli("import onnx \"" + model + "\" --output \"" + cli_net + "\"");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string cases_st = diff_file("cases.safetensors");
  const auto ev = run_cli("evaluate --net \"" + cli_net + "\" --test-images \"" + cases_st + ":" + name + ".x\" --test-labels \"" +
                          cases_st + ":" + name + ".y\" --predictions \"" + pred + "\"");
  REQUIRE_MESSAGE(ev.status == 0, ev.output);
  CHECK_MESSAGE(ev.output.find("test accuracy 100.00%") != std::string::npos, ev.output);
  std::istringstream lines(slurp(pred));
  const Tensor& y = data.tensors.at(name + ".y");
  for (std::size_t s = 0; s < y.values.size(); ++s) {
    int p = -1;
    lines >> p;
    CHECK(p == int(y.values[s]));
  }
}

std::string summary(const Totals& t) {
  return fmt::format("{} models imported ({} with BatchNorm kept, {} also through the executable), {} refused; largest "
                     "|ours - PyTorch's| {:.3g} tolerances ({})",
                     t.models, t.kept, t.via_cli, t.refused, t.worst, t.worst_model);
}

}  // namespace

TEST_CASE("differential: 200+ random PyTorch nets exported to ONNX (opsets 13-17, BatchNorm folded or kept) import and compute PyTorch's logits within float32 rounding") {
  const auto doc = nlohmann::json::parse(slurp(diff_file("cases.json")));
  const SafetensorsFile data = read_safetensors(diff_file("cases.safetensors"));
  Totals t;
  std::size_t m = 0;
  for (const auto& c : doc["cases"])
    if (c["unsupported_ops"].empty()) check_case(c, data, false, m++ % kCliEvery == 0, t);
  MESSAGE(summary(t));
  CHECK(t.models >= 200);
  CHECK(t.refused == 0);
  for (std::int64_t opset = 13; opset <= 17; ++opset) CHECK_MESSAGE(t.by_opset[opset] > 0, "no model of opset ", opset);
  CHECK(t.kept > 0);
  CHECK(t.via_cli > 0);
}

TEST_CASE("differential: the exports with Transpose, Unsqueeze and Concat of constants (constant folding off) import and compute PyTorch's logits") {
  const auto doc = nlohmann::json::parse(slurp(diff_file("cases.json")));
  const SafetensorsFile data = read_safetensors(diff_file("cases.safetensors"));
  Totals t;
  for (const auto& c : doc["cases"])
    if (!c["unsupported_ops"].empty()) check_case(c, data, false, false, t);
  MESSAGE(summary(t));
  CHECK(t.models > 0);
}
