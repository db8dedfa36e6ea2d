// ONNX import (sim/onnx_import.hpp): small models written here with the ONNX
// protobuf API as torch.onnx.export lays them out (initializers in raw_data
// and in the typed fields, Constant nodes, Gemm with transB), imported,
// written, loaded back and evaluated against the direct reference of
// conv_reference.hpp; each refusal names the node and its op type.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "conv_reference.hpp"
#include "onnx_builder.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/onnx_import.hpp"
#include "ctmc/core/errors.hpp"
#include "input_error_check.hpp"

namespace fs = std::filesystem;
using namespace ctmc::sim;
using namespace ctmc::sim::testing;

namespace {

constexpr double kFloatSumTolerance = 1e-5;  // float32 sums of a few hundred terms of size <= 1

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ctmc_onnx_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void check_against(const Net& net, const std::function<std::vector<double>(const Image&)>& ref, int c, int h, int w) {
  TestRng rng(77);
  for (int n = 0; n < 6; ++n) {
    Image x = make_image(c, h, w);
    x.v = as_floats(rng.vec(x.v.size(), 0, 1));
    Eigen::MatrixXf col(static_cast<Eigen::Index>(x.v.size()), 1);
    for (std::size_t i = 0; i < x.v.size(); ++i) col(Eigen::Index(i), 0) = static_cast<float>(x.v[i]);
    const Eigen::MatrixXf y = net.forward(col);
    const auto want = ref(x);
    REQUIRE(static_cast<std::size_t>(y.rows()) == want.size());
    for (std::size_t o = 0; o < want.size(); ++o) CHECK(std::abs(double(y(Eigen::Index(o), 0)) - want[o]) < kFloatSumTolerance);
  }
}

}  // namespace

TEST_CASE("ONNX round trip: a small VGG-like CNN with BatchNorm imports, writes, loads and matches the reference") {
  TempDir t;
  const CnnFixture fx;
  const std::string model = fx.build().write(t.path / "cnn.onnx", "logits");
  const OnnxImport imp = import_onnx(model);
  CHECK(imp.manifest["input"] == nlohmann::json({1, 8, 8}));
  CHECK(imp.net.batchnorm_folded == 1);
  CHECK(imp.net.batchnorm_fold_error < kMaxBatchnormFoldError);
  MESSAGE("BatchNorm fold: max relative error " << imp.net.batchnorm_fold_error);
  CHECK(imp.weights.tensors.count("features.0.weight") == 1);  // initializer names kept
  const auto ref = [&](const Image& x) { return fx.reference(x); };
  check_against(imp.net, ref, 1, 8, 8);
  const std::string manifest = (t.path / "cnn.json").string();
  save_manifest(manifest, imp.manifest, imp.weights);
  CHECK(fs::exists(t.path / "cnn.safetensors"));
  const Net loaded = load_net(manifest);
  check_against(loaded, ref, 1, 8, 8);
  // A conv net is refused by the spiking engines' reader, saying where it runs.
  check_input_error([&] { (void)load_network(manifest); }, manifest, "is a layer graph (load_net), which evaluate, simulate network");
}

TEST_CASE("ONNX: Reshape flatten, MatMul + Add, Softplus, Gemm with transB 0 and alpha/beta, AveragePool counting the padding") {
  TempDir t;
  TestRng rng(4);
  const auto b1 = as_floats(rng.vec(3, -1, 1));
  const auto w2 = as_floats(rng.vec(3 * 2, -1, 1)), b2 = as_floats(rng.vec(2, -1, 1));
  ModelBuilder mb({2, 4, 4});
  auto* ap = mb.node("AveragePool", {"input"}, "p");
  ModelBuilder::ints(ap, "kernel_shape", {2, 2});
  ModelBuilder::ints(ap, "strides", {2, 2});
  ModelBuilder::ints(ap, "pads", {1, 1, 1, 1});
  ModelBuilder::integer(ap, "count_include_pad", 1);
  mb.init_i64("shape", {-1, 18});
  mb.node("Reshape", {"p", "shape"}, "f");
  TestRng r2(8);
  const auto w1b = as_floats(r2.vec(18 * 3, -1, 1));  // [in = 18, out = 3] row-major, as MatMul takes it
  mb.init("W", {18, 3}, w1b, false);
  mb.init("b", {3}, b1, true);
  mb.node("MatMul", {"f", "W"}, "mm");
  mb.node("Add", {"mm", "b"}, "h");
  mb.node("Softplus", {"h"}, "a");
  mb.init("W2", {3, 2}, w2, true);  // [in, out] with transB 0
  mb.init("b2", {2}, b2, false);
  auto* gm = mb.node("Gemm", {"a", "W2", "b2"}, "logits");
  ModelBuilder::real(gm, "alpha", 0.5f);
  ModelBuilder::real(gm, "beta", 2.0f);
  const std::string model = mb.write(t.path / "mlp.onnx", "logits");
  const OnnxImport imp = import_onnx(model);
  const auto ref = [&](const Image& x) {
    const Image p = ref_pool(x, false, 2, 2, 1, true);  // 2 x 3 x 3
    std::vector<double> w1t(3 * 18), w2t(2 * 3), b2s(2);
    for (int i = 0; i < 18; ++i)
      for (int o = 0; o < 3; ++o) w1t[std::size_t(o * 18 + i)] = w1b[std::size_t(i * 3 + o)];
    for (int i = 0; i < 3; ++i)
      for (int o = 0; o < 2; ++o) w2t[std::size_t(o * 3 + i)] = 0.5 * w2[std::size_t(i * 2 + o)];
    for (int o = 0; o < 2; ++o) b2s[std::size_t(o)] = 2.0 * b2[std::size_t(o)];
    auto h = ref_linear(p.v, w1t, b1, 3);
    for (double& v : h) v = std::log1p(std::exp(v));
    return ref_linear(h, w2t, b2s, 2);
  };
  check_against(imp.net, ref, 2, 4, 4);
}

TEST_CASE("ONNX: a Pad of zeros before an AveragePool or a Conv is that layer's padding, as torch.onnx.export writes it") {
  // torch.onnx.export writes nn.AvgPool2d(k, padding=p) (count_include_pad)
  // as Pad(zeros) + AveragePool without pads: the same as avgpool2d with
  // padding p counting the padding. An all-zero Pad is nothing.
  TempDir t;
  TestRng rng(6);
  const auto w = as_floats(rng.vec(2 * 2 * 9, -1, 1));
  ModelBuilder mb({2, 4, 4});
  mb.init_i64("pads0", {0, 0, 0, 0, 0, 0, 0, 0});
  mb.node("Pad", {"input", "pads0"}, "q0");
  mb.init_i64("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  mb.node("Pad", {"q0", "pads"}, "q");
  auto* ap = mb.node("AveragePool", {"q"}, "p");
  ModelBuilder::ints(ap, "kernel_shape", {2, 2});
  ModelBuilder::ints(ap, "strides", {2, 2});
  mb.init("cw", {2, 2, 3, 3}, w, true);
  mb.node("Pad", {"p", "pads"}, "cq");
  mb.node("Conv", {"cq", "cw"}, "c");  // 2 x 3 x 3 padded by 1, 3x3 kernel: 2 x 3 x 3
  mb.node("Relu", {"c"}, "r");
  auto* fl = mb.node("Flatten", {"r"}, "f");
  ModelBuilder::integer(fl, "axis", 1);
  const std::string model = mb.write(t.path / "pad.onnx", "f");
  const OnnxImport imp = import_onnx(model);
  REQUIRE(imp.manifest["layers"].size() == 4);
  CHECK(imp.manifest["layers"][0]["type"] == "avgpool2d");
  CHECK(imp.manifest["layers"][0]["padding"] == nlohmann::json({1, 1}));
  CHECK(imp.manifest["layers"][0]["count_include_pad"] == true);
  CHECK(imp.manifest["layers"][1]["type"] == "conv2d");
  CHECK(imp.manifest["layers"][1]["padding"] == nlohmann::json({1, 1}));
  const auto ref = [&](const Image& x) {
    const Image p = ref_pool(x, false, 2, 2, 1, true);  // 2 x 3 x 3
    std::vector<double> wd(w.begin(), w.end());
    Image c = ref_conv2d(p, wd, {}, 2, 3, 3, 1, 1, 1, 1);
    for (double& v : c.v) v = std::max(v, 0.0);
    return c.v;
  };
  check_against(imp.net, ref, 2, 4, 4);

  const std::string path = (t.path / "bad.onnx").string();
  {
    ModelBuilder bad({1, 4, 4});
    bad.init_i64("p", {0, 0, 1, 1, 0, 0, 1, 1});
    bad.node("Pad", {"input", "p"}, "q")->set_name("/pad");
    bad.node("Relu", {"q"}, "r");
    bad.node("Flatten", {"r"}, "f");
    bad.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "node '/pad' (Pad): a Pad before a activation layer is not supported");
  }
  {
    ModelBuilder bad({1, 4, 4});
    bad.init_i64("p", {0, 0, 1, 0, 0, 0, 2, 0});
    bad.node("Pad", {"input", "p"}, "q");
    bad.node("Flatten", {"q"}, "f");
    bad.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "only pads [0, 0, h, w, 0, 0, h, w]");
  }
  {
    ModelBuilder bad({1, 4, 4});
    bad.init_i64("p", {0, 0, 1, 1, 0, 0, 1, 1});
    auto* pd = bad.node("Pad", {"input", "p"}, "q");
    auto* a = pd->add_attribute();
    a->set_name("mode");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("reflect");
    bad.node("Flatten", {"q"}, "f");
    bad.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "mode 'reflect' is not supported (only constant zeros)");
  }
}

TEST_CASE("ONNX refusals name the node and its op type") {
  TempDir t;
  const CnnFixture fx;
  const std::string path = (t.path / "bad.onnx").string();
  {
    ModelBuilder mb = fx.build();
    auto* n = mb.node("Transpose", {"logits"}, "tr");
    n->set_name("/classifier/Transpose");
    mb.write(path, "tr");
    check_input_error([&] { (void)import_onnx(path); }, path, "node '/classifier/Transpose' (Transpose): operator 'Transpose' is not supported");
  }
  {
    ModelBuilder mb = fx.build(12);
    mb.write(path, "logits");
    check_input_error([&] { (void)import_onnx(path); }, path, "opset 12 is older than 13");
  }
  {
    ModelBuilder mb({4});
    mb.node("Relu", {"input"}, "a");
    mb.node("Add", {"a", "input"}, "s");  // a skip connection
    mb.write(path, "s");
    check_input_error([&] { (void)import_onnx(path); }, path, "(Add): Add is supported only as the bias of the MatMul before it");
  }
  {
    ModelBuilder mb({4});
    mb.node("Relu", {"input"}, "a");
    mb.node("Sigmoid", {"input"}, "b");  // a branch off the input
    mb.write(path, "b");
    check_input_error([&] { (void)import_onnx(path); }, path, "(Sigmoid): its input 'input' is not the output of the layer before it");
  }
  {
    ModelBuilder mb = fx.build();
    // The Gemm's weight for 3 inputs while the flatten gives 2.
    for (auto& init : *mb.g->mutable_initializer())
      if (init.name() == "classifier.weight") {
        init.Clear();
        ModelBuilder::fill(&init, "classifier.weight", {10, 3}, std::vector<double>(30, 0.1), true);
      }
    mb.write(path, "logits");
    check_input_error([&] { (void)import_onnx(path); }, path, "(layers[8], dense '/Gemm_11') takes 3 inputs but the flatten before it gives 2");
  }
  {
    ModelBuilder mb({1, 2, 2});
    mb.init("w", {1, 1, 5, 5}, std::vector<double>(25, 0.1), true);
    mb.node("Conv", {"input", "w"}, "c");
    mb.node("Flatten", {"c"}, "f");
    mb.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "(layers[0], conv2d '/Conv_1'): its 5x5 kernel is larger than its padded input 2x2");
  }
  {
    ModelBuilder mb = fx.build();
    mb.m.set_ir_version(6);
    mb.write(path, "logits");
    check_input_error([&] { (void)import_onnx(path); }, path, "IR version 6 is older than 7");
  }
  {
    std::ofstream(path) << "not a protobuf at all \x01\x02";
    check_input_error([&] { (void)import_onnx(path); }, path, "not an ONNX model");
  }
}
