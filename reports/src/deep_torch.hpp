// The deep report's cross-check against PyTorch itself (deep_torch.cpp): a
// VGG-11 with BatchNorm trained in PyTorch 1.13 and the figures of an
// independent PyTorch implementation of the spiking conversion, both in
// tests/fixtures/torch_vgg11/ (made once by tests/fixtures/
// make_torch_vgg_fixture.py and make_torch_peer_claims.py with Debian's
// python3-torch; the report only reads their files).
//
//   import   the net's three files as a PyTorch user has them: the ONNX file
//            of torch.onnx.export (BatchNorm folded by the exporter), an
//            export with its BatchNormalization nodes kept (folded here), and
//            the state_dict as safetensors with a manifest; each must give
//            PyTorch's predictions on its 100 test digits and its logits
//            within float32 rounding (1e-5 of the largest logit);
//   peer     `ctmc-snn check peer_claims.json`: the peer's A_ANN, A_MF, A_SNN
//            and SynOps against our simulator's (Student t at a false alarm
//            of 1e-3); its claim "-naive-trace" (the trace incremented by
//            1/tau per spike while claiming eq. (trace)'s integral) must
//            Fail, every other claim Pass.
// Internal header of reports (not installed).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ctmc/reports/check.hpp"
#include "ctmc/reports/writer.hpp"

namespace ctmc::reports {

struct TorchRoute {
  std::string route, file;
  int images = 0, same_predictions = 0;
  double accuracy = 0;                          // percent, on the fixture's labels
  double logit_difference = 0, logit_scale = 0;  // largest |ours - PyTorch's|, largest |PyTorch's|
  int batchnorm_folded = 0;
  double fold_error = 0;
};

struct TorchCrossCheck {
  std::string dir;  // the fixture folder found; empty: none
  std::vector<TorchRoute> routes;
  CheckResult peer;
  double seconds = 0;
  std::vector<std::pair<std::string, std::string>> commands;  // what, command line
};

// The fixture folder: `dir` as given (relative to the current folder), else
// under the source tree; "" when neither holds peer_claims.json.
std::string find_torch_fixture(const std::string& dir);

// Runs both parts on the fixture in `dir` (find_torch_fixture's answer).
TorchCrossCheck run_torch_crosscheck(const ReportContext& ctx, const std::string& dir);

// Its section, tables (torch_import.csv, torch_peer.csv) and checks; with no
// fixture found, one line that says so.
void present_torch_crosscheck(ReportWriter& w, const TorchCrossCheck& t, const std::string& wanted_dir);

// One sentence for the report's summary.
std::string torch_crosscheck_summary(const TorchCrossCheck& t);

}  // namespace ctmc::reports
