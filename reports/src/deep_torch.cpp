// The deep report's cross-check against PyTorch (deep_torch.hpp).
#include "deep_torch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ctmc/core/errors.hpp"
#include "ctmc/commands/command_line.hpp"
#include "ctmc/reports/registry.hpp"
#include "ctmc/reports/writer.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/onnx_import.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"

#ifndef CTMC_SOURCE_DIR
#define CTMC_SOURCE_DIR "."
#endif

namespace ctmc::reports {
namespace {
namespace fs = std::filesystem;

constexpr const char* kClaims = "peer_claims.json";
// The peer's claim that carries a convention mistake on purpose, and its
// claim at the paper's Case I.
constexpr const char* kMistakeSuffix = "-naive-trace";
constexpr const char* kCaseOneSuffix = "-case1";

std::vector<int> read_predictions(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string(), "cannot be read");
  std::vector<int> out;
  for (int v; in >> v;) out.push_back(v);
  if (!in.eof()) throw InputError(path.string(), "holds something other than one class index per line");
  return out;
}

// The fixture's test digits and what PyTorch computed on them, read once
// for every route.
struct TorchDigits {
  sim::Tensor x, y, logits;
  std::vector<int> pred;
};

TorchDigits read_digits(const fs::path& dir) {
  return {sim::read_npy((dir / "torch_vgg11_x.npy").string()), sim::read_npy((dir / "torch_vgg11_y.npy").string()),
          sim::read_npy((dir / "torch_vgg11_logits.npy").string()), read_predictions(dir / "torch_vgg11_pred.txt")};
}

// The route's net on the fixture's digits against PyTorch's logits and
// predictions.
TorchRoute compare_route(const std::string& route, const std::string& file, const sim::Net& net,
                         const TorchDigits& d, const fs::path& dir) {
  const auto& [x, y, logits, pred] = d;
  const std::int64_t n = x.shape.empty() ? 0 : x.shape[0];
  const std::int64_t classes = net.output_size();
  if (n == 0 || static_cast<std::int64_t>(x.values.size()) != n * net.input_size() ||
      static_cast<std::int64_t>(y.values.size()) != n || static_cast<std::int64_t>(pred.size()) != n ||
      logits.shape != std::vector<std::int64_t>{n, classes})
    throw InputError(dir.string(), "the PyTorch fixture's inputs, labels, logits and predictions do not match "
                                   "the net or each other in size");
  Eigen::MatrixXf cols(net.input_size(), n);
  for (Eigen::Index i = 0; i < cols.size(); ++i) cols.data()[i] = static_cast<float>(x.values[static_cast<std::size_t>(i)]);
  const Eigen::MatrixXf z = net.forward(cols);
  const std::vector<int> ours = net.predict(cols);
  TorchRoute r{route, file, static_cast<int>(n), 0, 0, 0, 0, net.batchnorm_folded, net.batchnorm_fold_error};
  int correct = 0;
  for (std::int64_t s = 0; s < n; ++s) {
    r.same_predictions += ours[static_cast<std::size_t>(s)] == pred[static_cast<std::size_t>(s)];
    correct += ours[static_cast<std::size_t>(s)] == static_cast<int>(y.values[static_cast<std::size_t>(s)]);
    for (std::int64_t k = 0; k < classes; ++k) {
      const double ref = logits.values[static_cast<std::size_t>(s * classes + k)];
      r.logit_difference = std::max(r.logit_difference, std::abs(static_cast<double>(z(k, s)) - ref));
      r.logit_scale = std::max(r.logit_scale, std::abs(ref));
    }
  }
  r.accuracy = 100.0 * correct / static_cast<double>(n);
  return r;
}

// "t = X" at the end of a network claim's evidence, else "".
std::string t_of(const std::string& evidence) {
  const auto at = evidence.rfind("t = ");
  return at == std::string::npos ? "" : evidence.substr(at + 4);
}

std::string shown(const fs::path& p) { return p.lexically_normal().string(); }

}  // namespace

std::string find_torch_fixture(const std::string& dir) {
  if (dir.empty()) return "";
  for (const fs::path& p : {fs::path(dir), fs::path(CTMC_SOURCE_DIR) / dir})
    if (fs::is_regular_file(p / kClaims)) return p.string();
  return "";
}

TorchCrossCheck run_torch_crosscheck(const ReportContext& ctx, const std::string& dir) {
  const auto t0 = std::chrono::steady_clock::now();
  TorchCrossCheck t;
  t.dir = dir;
  const fs::path d(dir);
  const TorchDigits digits = read_digits(d);
  // Each route and the net file `evaluate` reads for it (an import's output
  // in the current folder, or the fixture's manifest).
  const std::pair<std::string, std::string> onnx_routes[] = {
      {"ONNX, BatchNorm folded by torch.onnx.export", "torch_vgg11.onnx"},
      {"ONNX, BatchNorm nodes kept (folded at import)", "torch_vgg11_bn.onnx"}};
  std::vector<std::string> nets;
  for (const auto& [route, file] : onnx_routes) {
    t.routes.push_back(compare_route(route, file, sim::import_onnx((d / file).string()).net, digits, d));
    nets.push_back(fs::path(file).stem().string() + "_onnx.json");
    commands::ImportOnnxOptions onnx;
    onnx.model = shown(d / file);
    onnx.output = nets.back();
    t.commands.emplace_back("import " + file, commands::import_onnx_command_line(onnx).text());
  }
  t.routes.push_back(compare_route("state_dict (safetensors) + manifest", "torch_vgg11.json",
                                   sim::load_net((d / "torch_vgg11.json").string()), digits, d));
  nets.push_back(shown(d / "torch_vgg11.json"));
  for (std::size_t i = 0; i < nets.size(); ++i) {
    commands::EvaluateCommandOptions evaluate;
    evaluate.net = nets[i];
    evaluate.data.test_images = shown(d / "torch_vgg11_x.npy");
    evaluate.data.test_labels = shown(d / "torch_vgg11_y.npy");
    evaluate.predictions = fs::path(nets[i]).stem().string() + "_pred.txt";
    t.commands.emplace_back("evaluate " + t.routes[i].file, commands::evaluate_command_line(evaluate).text());
  }
  const CheckOptions check = with_context({}, ctx);
  t.peer = commands::run_check((d / kClaims).string(), check);
  t.commands.emplace_back("check the PyTorch peer", commands::check_command_line(shown(d / kClaims), check).text());
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

std::string torch_crosscheck_summary(const TorchCrossCheck& t) {
  if (t.dir.empty()) return "";
  int same = 0, images = 0;
  for (const TorchRoute& r : t.routes) {
    same += r.same_predictions;
    images += r.images;
  }
  std::string mistake = "not in the claims";
  for (const auto& [id, verdict] : t.peer.verdicts)
    if (id.ends_with(kMistakeSuffix))
      mistake = verdict == commands::Verdict::NotReproduced ? "failed, as it must"
                                                            : std::string("answered ") + commands::check_verdict_name(verdict);
  return fmt::format(
      " Checked against PyTorch itself: a VGG-11 trained in PyTorch gives PyTorch's predictions on {} of {} "
      "(image, file) pairs over its {} files, and `ctmc-snn check` answers an independent PyTorch implementation "
      "of the conversion with {} Pass, {} Fail, {} not checkable (its planted convention mistake {}).",
      same, images, t.routes.size(), t.peer.passed, t.peer.failed, t.peer.not_checkable, mistake);
}

void present_torch_crosscheck(ReportWriter& w, const TorchCrossCheck& t, const std::string& wanted_dir) {
  w.heading("Checked against PyTorch");
  if (t.dir.empty()) {
    w.paragraph(fmt::format("Not run: no {} under {} (the repository's tests/fixtures; run the report from the "
                            "repository's root).",
                            md_code(kClaims), md_code(wanted_dir)));
    return;
  }
  w.paragraph(fmt::format(
      "Files PyTorch 1.13 wrote ({}, made once by `tests/fixtures/make_torch_vgg_fixture.py` and "
      "`make_torch_peer_claims.py`): a VGG-11 with BatchNorm at width 1/16, trained for one epoch on 3000 MNIST "
      "digits, in the three forms a PyTorch user has it, and the figures of an independent PyTorch "
      "implementation of the spiking conversion on its 100 test digits. {:.0f} s.",
      md_code(shown(t.dir)), t.seconds));
  Table imp{{"file", "route", "predictions as PyTorch's", "accuracy (%)", "largest logit difference",
             "BatchNorm fold error"},
            {}};
  for (const TorchRoute& r : t.routes)
    imp.rows.push_back({r.file, r.route, fmt::format("{} / {}", r.same_predictions, r.images),
                        fmt::format("{:.2f}", r.accuracy),
                        fmt::format("{} (of {:.2f})", fmt_sci(r.logit_difference, 1), r.logit_scale),
                        r.batchnorm_folded ? fmt::format("{} ({} layers)", fmt_sci(r.fold_error, 1), r.batchnorm_folded)
                                           : "—"});
  w.table(imp, "torch_import.csv");
  w.paragraph("The peer's claims, each run again here by `ctmc-snn check` (ours: at least 10 trials at the "
              "report's seed; a Student t test at a false alarm of 1e-3 per claim). A_ANN and A_MF are compared to their last "
              "digit. The claim ending in " + md_code(kMistakeSuffix) +
              " is the same code with the trace incremented by 1/τ per spike while claiming eq. (trace)'s "
              "integral weight: a checker that passes it would not see a convention mistake.");
  Table peer{{"claim", "quantity", "PyTorch peer", "ours", "t", "verdict"}, {}};
  for (const CheckRow& r : t.peer.results) {
    if (!r.quantity.starts_with("A_SNN") && !r.quantity.starts_with("SynOps") && r.verdict == commands::Verdict::Reproduced)
      continue;  // A_ANN and A_MF: equal to the last digit (checked below)
    peer.rows.push_back({r.id, r.quantity, r.claimed, r.ours, t_of(r.evidence), commands::check_verdict_name(r.verdict)});
  }
  w.table(peer, "torch_peer.csv");
  // The peer's own figures at the paper's Case I (its claim "-case1").
  // The sentence holds only where check passed that claim.
  std::string a_snn, a_mf;
  bool case_one_passed = false;
  for (const auto& [id, verdict] : t.peer.verdicts)
    if (id.ends_with(kCaseOneSuffix)) case_one_passed = verdict == commands::Verdict::Reproduced;
  for (const CheckRow& r : t.peer.results)
    if (r.id.ends_with(kCaseOneSuffix)) {
      if (r.quantity.starts_with("A_SNN")) a_snn = r.claimed;
      if (r.quantity.starts_with("A_MF")) a_mf = r.claimed;
    }
  if (case_one_passed && !a_snn.empty() && !a_mf.empty())
    w.paragraph(fmt::format(
        "At the paper's Case I the peer's A_SNN is {}% against its A_MF of {}%: an independent implementation of "
        "eq. (trace) loses the mean field's accuracy there as this simulator does, so the Case I gap of the "
        "sections above belongs to the conversion as the paper states it, not to this simulator.",
        a_snn, a_mf));
  for (const TorchRoute& r : t.routes)
    w.check(fmt::format("PyTorch VGG-11 via {}: PyTorch's predictions on all {} digits, logits within 1e-5 of the "
                        "largest",
                        r.file, r.images),
            r.same_predictions == r.images && r.logit_difference < 1e-5 * r.logit_scale,
            fmt::format("{} of {} equal, largest logit difference {}", r.same_predictions, r.images,
                        fmt_sci(r.logit_difference, 2)));
  for (const auto& [id, verdict] : t.peer.verdicts) {
    const commands::Verdict expected =
        id.ends_with(kMistakeSuffix) ? commands::Verdict::NotReproduced : commands::Verdict::Reproduced;
    w.check(fmt::format("check answers the PyTorch peer's claim {}: {}", id, commands::check_verdict_name(expected)),
            verdict == expected, std::string("verdict ") + commands::check_verdict_name(verdict));
  }
}

}  // namespace ctmc::reports
