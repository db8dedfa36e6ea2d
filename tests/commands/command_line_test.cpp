// Command lines rendered from the commands' Options (ctmc/commands/
// command_line.hpp): the lines the reports print beside their files, each
// expected as the text the report wrote before it rendered them from an
// Options (so the reports' text is unchanged), and shell quoting.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "ctmc/commands/command_line.hpp"
#include "ctmc/commands/layer_fit.hpp"

namespace cmd = ctmc::commands;

TEST_CASE("shell_word: plain words as they are, anything else in single quotes") {
  CHECK(cmd::shell_word("reports/generated/deep/net-a_b.json") == "reports/generated/deep/net-a_b.json");
  CHECK(cmd::shell_word("stride:20") == "stride:20");
  CHECK(cmd::shell_word("a b") == "'a b'");
  CHECK(cmd::shell_word("it's") == "'it'\\''s'");
  CHECK(cmd::shell_word("") == "''");
  CHECK(cmd::shell_word("$HOME") == "'$HOME'");
}

TEST_CASE("train: an MLP as report conversion prints it, a VGG-11 as report deep does") {
  cmd::TrainCommandOptions mlp;
  mlp.data = "data/mnist";
  mlp.hidden = "256,128";
  mlp.cfg.activation = "sigmoid";
  mlp.cfg.epochs = 15;
  mlp.cfg.seed = 1;
  mlp.output = "out/conversion/net-mnist-sigmoid-s1.json";
  CHECK(cmd::train_command_line(mlp).text() ==
        "ctmc-snn train --data data/mnist --activation sigmoid --hidden 256,128 --epochs 15 --seed 1 --output "
        "out/conversion/net-mnist-sigmoid-s1.json");

  cmd::TrainCommandOptions vgg;
  vgg.data = "data/mnist";
  vgg.arch = "vgg11";
  vgg.width = 0.125;
  vgg.cfg.activation = "relu";
  vgg.cfg.epochs = 2;
  vgg.cfg.seed = 3;
  vgg.output = "out/deep/net.json";
  CHECK(cmd::train_command_line(vgg).text() ==
        "ctmc-snn train --arch vgg11 --width 0.125 --data data/mnist --activation relu --epochs 2 --seed 3 --output "
        "out/deep/net.json");
  vgg.train_limit = 5000;
  vgg.cfg.batch_size = 32;
  CHECK(cmd::train_command_line(vgg).text() ==
        "ctmc-snn train --arch vgg11 --width 0.125 --data data/mnist --activation relu --epochs 2 --seed 3 "
        "--train-limit 5000 --batch 32 --output out/deep/net.json");
}

TEST_CASE("fit: a layer's neuron as the reports print it, run from the report folder") {
  const cmd::FitCommandOptions o = cmd::layer_fit_options("samples-mnist-relu-L1.txt", "relu", 32, 1, "neuron-L1.json");
  CHECK(cmd::run_in("out/conversion", cmd::fit_command_line(o)) ==
        "(cd out/conversion && ctmc-snn fit --activation relu --family two-state --samples samples-mnist-relu-L1.txt "
        "--rate-bound 1000 --no-widen --starts 32 --seed 1 --output neuron-L1.json)");
  const cmd::FitCommandOptions s = cmd::layer_fit_options("s.txt", "sigmoid", 8, 2, "n.json");
  CHECK(cmd::fit_command_line(s).text() ==
        "ctmc-snn fit --activation sigmoid --family three-state --samples s.txt --rate-bound 10 --no-widen --starts 8 "
        "--seed 2 --output n.json");
  cmd::FitCommandOptions d;
  d.activation = "softplus";
  d.domain = "-4,4";
  d.search.mpfr_bits = 256;
  d.certify = true;
  CHECK(cmd::fit_command_line(d).text() ==
        "ctmc-snn fit --activation softplus --domain -4,4 --family three-state --rate-bound 1000 --starts 64 --seed 1 "
        "--precision 256 --certify");
}

TEST_CASE("import onnx, evaluate and check as report deep's PyTorch cross-check prints them") {
  cmd::ImportOnnxOptions import_options;
  import_options.model = "tests/fixtures/torch_vgg11/torch_vgg11.onnx";
  import_options.output = "torch_vgg11_onnx.json";
  CHECK(cmd::import_onnx_command_line(import_options).text() ==
        "ctmc-snn import onnx tests/fixtures/torch_vgg11/torch_vgg11.onnx --output torch_vgg11_onnx.json");

  cmd::EvaluateCommandOptions e;
  e.net = "torch_vgg11_onnx.json";
  e.data.test_images = "f/x.npy";
  e.data.test_labels = "f/y.npy";
  e.predictions = "torch_vgg11_onnx_pred.txt";
  CHECK(cmd::evaluate_command_line(e).text() ==
        "ctmc-snn evaluate --net torch_vgg11_onnx.json --test-images f/x.npy --test-labels f/y.npy --predictions "
        "torch_vgg11_onnx_pred.txt");

  cmd::CheckOptions c;
  c.seed = 7;
  CHECK(cmd::check_command_line("f/peer_claims.json", c).text() == "ctmc-snn check f/peer_claims.json --seed 7");
  c.precision = 512;
  c.allow_unchecked = true;
  CHECK(cmd::check_command_line("f/peer_claims.json", c).text() ==
        "ctmc-snn check f/peer_claims.json --seed 7 --precision 512 --allow-unchecked");
}

TEST_CASE("simulate network and sweep as convert writes them into commands.sh") {
  cmd::SimulateNetworkCommand sim{"my net.json", {}, {"c/neuron-L1.json", "c/neuron-L2.json"}, {}};
  sim.data.dir = "data/mnist";
  sim.options.opt.snn.T = 50;
  sim.options.opt.snn.tau = 0.02;
  sim.options.opt.rate = 3;
  sim.options.opt.trials = 4;
  sim.options.opt.seed = 1;
  CHECK(cmd::simulate_network_command_line(sim).text() ==
        "ctmc-snn simulate network --net 'my net.json' --data data/mnist --neurons c/neuron-L1.json,c/neuron-L2.json "
        "--T 50 --tau 0.02 --rate 3 --trials 4 --seed 1");
  sim.options.opt.snn.sampler = ctmc::sim::SamplerKind::EndState;
  sim.options.if_norm = 99.9;
  CHECK(cmd::simulate_network_command_line(sim).text().ends_with("--seed 1 --sampler end-state --if p99.9"));

  cmd::SweepCommandOptions sw;
  sw.spec.nets = {"n.json"};
  sw.spec.data.dir = "data/mnist";
  sw.spec.neurons = {"c/neuron-L1.json", "c/neuron-L2.json"};
  sw.spec.taus = {0.02, 0.05};
  sw.spec.rates = {2, 3, 5};
  sw.spec.T = {10, 30, 50};
  sw.spec.trials = 2;
  sw.spec.seed = 1;
  sw.out = "c-sweep.json";
  CHECK(cmd::sweep_command_line(sw).text() ==
        "ctmc-snn sweep --net n.json --data data/mnist --neurons c/neuron-L1.json,c/neuron-L2.json --tau 0.02,0.05 "
        "--rate 2,3,5 --T 10,30,50 --trials 2 --seed 1 --out c-sweep.json");
}

TEST_CASE("sweep: every convention as the reports print it, and the options a Slurm wrapper passes on") {
  cmd::SweepCommandOptions sw;
  sw.spec.nets = {"o/deep/net-a.json", "o/deep/net-b.json"};
  sw.spec.data.dir = "data/mnist";
  sw.spec.neurons = {"o/deep/neuron-L1.json"};
  sw.spec.taus = {0.02, 0.1};
  sw.spec.rates = {3, 10};
  sw.spec.T = {0.5, 1};
  sw.spec.subset.text = "stride:20";
  sw.spec.limit = 500;
  sw.spec.seed = 1;
  const std::string options =
      "--net o/deep/net-a.json,o/deep/net-b.json --data data/mnist --neurons o/deep/neuron-L1.json --tau 0.02,0.1 "
      "--rate 3,10 --T 0.5,1 --sampler exact --kernel auto --trials 1 --dt 0.005 --readout spike --trace-weight "
      "integral --output-scale logits --subset stride:20 --limit 500 --seed 1";
  CHECK(cmd::sweep_command_line(sw, cmd::SweepConventions::Every).options() == options);
  sw.out = "o/deep/sweep-a.json";
  sw.spec.criterion = 0.5;
  CHECK(cmd::sweep_command_line(sw, cmd::SweepConventions::Every).text() ==
        "ctmc-snn sweep " + options + " --criterion 0.5 --out o/deep/sweep-a.json");
  // Only what differs from the defaults, without Every.
  sw.spec.criterion = 1;
  sw.spec.layer_alpha = {std::nan(""), 2.5};
  CHECK(cmd::sweep_command_line(sw).text() ==
        "ctmc-snn sweep --net o/deep/net-a.json,o/deep/net-b.json --data data/mnist --neurons o/deep/neuron-L1.json "
        "--tau 0.02,0.1 --rate 3,10 --T 0.5,1 --trials 1 --subset stride:20 --limit 500 --seed 1 --layer-alpha "
        "auto,2.5 --out o/deep/sweep-a.json");
}
